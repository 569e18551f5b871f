"""What a user-question memory may report of the user: a question they asked, an agreement they made.

It also tells a personal memory (a wish, a term the user writes, a question asked) from an expert's domain
statement, which belongs in shared memory (session 15).

Part of the truth gate (:mod:`memory.grounding` runs it on user-question memories). Written in session 10
from fresh11's misattributed reports (truth-427, -442, -453) and the earlier splits' (truth-380, -413);
pure and deterministic.
"""

from __future__ import annotations

import re

from memory.gate_terms import Evidence, GateReason, GateVerdict
from memory.option_gate import known_answers
from memory.options import named_options, parse_options, question_stem
from memory.wording import NEGATION, clauses, sentences, stems, stemset

_AGREEING = re.compile(r"\b(?:agree[sd]?|agreeing|confirm[sd]?|confirmed|concede[sd]?)\b", re.IGNORECASE)
_ASSENT = re.compile(r"\b(?:agree\w*|right|correct|yes|true|fair|exactly|indeed|confirm\w*|granted)\b", re.I)
# a sentence that asks something: it ends in "?" or opens with a question word or a request
_ASKS = re.compile(
    r"^(?:what|which|how|why|when|where|who|whom|whose|is|are|was|were|do|does|did|can|could|should|would|will|"
    r"may|tell|explain|describe|list|give|show|help|please|i want|i need|i wonder|i'd like|i would like)\b",
    re.IGNORECASE,
)
# "The user asks ...", "the user is asking whether ...": a memory reporting what the user asked
_ASKED = re.compile(
    r"\buser\s+(?:\w+\s+){0,2}?(?:ask|asks|asked|asking|wonders|wondered|wants to know|inquires)\b", re.IGNORECASE
)
# "The user states ...", "the user wants ...": a memory reporting what the user said of themselves or the world
_STATED = re.compile(
    r"\buser\s+(?:\w+\s+){0,2}?(?:states?|stated|mentions?|mentioned|says|said|notes|noted|wants?|needs?|describes|"
    r"reports|has|is|prefers?|likes?)\b",
    re.IGNORECASE,
)
# "The user wants ...", "they need to ...": a memory reporting a wish of the user's
_WISH = re.compile(
    r"\b(?:user|they)\s+(?:\w+\s+){0,2}?"
    r"(?:wants?|wanted|needs?|needed|prefers?|preferred|wish(?:es)?|would (?:like|rather)|likes)\b"
    r"(?!\s+to\s+know\b)",  # "wants to know" reports asking
    re.IGNORECASE,
)
# a wish in the user's own words: "I want", "we'd rather", "I'm looking for", "please", "give me", "can you"
_OWN_WISH = re.compile(
    r"\b(?:I|we)(?:'d|'m|’d|’m)?\s+(?:\w+\s+){0,2}?(?:want|wanted|need|needed|prefer|like|wish|rather|hope|looking)\b"
    r"|\bplease\b|\b(?:give|tell|show|help|send)\s+(?:me|us)\b|\b(?:can|could|would|will)\s+you\b",
    re.IGNORECASE,
)
ASKING = re.compile(r"\b(?:ask|asks|asked|asking|question|questions|wonders|wondered|wants to know)\b", re.I)
REPORT = re.compile(r"\b(?:user|expert|sme)\b", re.IGNORECASE)  # a memory that reports what someone said
# a report of asking or agreeing may paraphrase: this share of its words (one at least) may be missing
MISREPORT_SHARE = 1 / 3


def misreported(text: str, evidence: Evidence) -> GateVerdict | None:
    """A user-question memory that reports a question or an agreement the user's turns do not hold.

    "The user asks if forward scatter is used to assess cell death" glues one option to the question the
    user asked; "The user asks about Gustafson's method" reports a name the expert only said in passing;
    "The user agrees on PRSS1 mutations" reports agreement where the expert disagreed. What the user
    asked comes from the sentences that ask (the opening question without its options, a sentence ending
    in "?" or opening with a question word or a request); what the user agreed on, from the clauses where
    they assent. An option is asked about only if one of those sentences names it. What the user stated,
    when the opening turn is a multiple-choice question, comes from the later turns: "The user states that
    they need to sort a patient of trauma" reports the quiz question as the user's own need. A wish ("the
    user wants ...") in a quiz needs a user turn that says one in the first person or asks ("I'd like",
    "please", "can you").
    """
    options = parse_options(evidence.question)
    if options and _WISH.search(text) and not any(_OWN_WISH.search(turn) for turn in evidence.user_said):
        # "The user states that they want to confirm the diagnosis ... with hysteroscopy" (fresh29's truth-1028):
        # the expert said the first step is to confirm it; nobody said what they want
        return GateVerdict(ok=False, reason=GateReason.MISREPORTED, detail="a wish the user never expressed")
    strict = False  # a report of the user's own statement needs no paraphrase
    if _ASKED.search(text):
        said = [question_stem(evidence.question)] + [
            sentence
            for turn in evidence.user_said[1:]
            for sentence in sentences(turn)
            if sentence.rstrip().endswith("?") or _ASKS.match(sentence.strip())
        ]
        what = "a question the user did not ask"
    elif _AGREEING.search(text):
        said = [c for turn in evidence.user_said for c in clauses(turn) if _ASSENT.search(c)]
        what = "an agreement the user did not express"
    elif _STATED.search(text) and options:
        # the opening multiple-choice question is a quiz, not the user's own case or wish; the user's own
        # answer to it ("A is correct": "the user says PLAP is the seminoma marker") is theirs
        said = list(evidence.user_said[1:])
        accepted = known_answers(evidence).accepted
        if named_options(text, options, positive_only=True) & accepted:
            said += [question_stem(evidence.question), *(options[letter] for letter in accepted)]
        what = "the opening question reported as the user's own statement"
        strict = True
    else:
        return None
    words = set(stems(text))
    missing = sorted(words - stemset(said))
    if _ASKED.search(text) and NEGATION.search(text) and not any(NEGATION.search(s) for s in said):
        # "The user asks about a connective tissue tumour that is not a connective tissue tumour" (fresh24's
        # truth-891): the user's questions deny nothing
        return GateVerdict(ok=False, reason=GateReason.MISREPORTED, detail=f"{what}: a denial", unsupported=missing)
    glued = named_options(text, options, positive_only=True) - set().union(*(named_options(s, options) for s in said))
    glued |= _rejected_words(words, evidence, stemset(said))
    unasked: set[str] = set()
    if _ASKED.search(text):
        glued |= _option_words(words, options, stemset(said))
        # a name is asked about only if an asking sentence has it: "The user asks about Langer's lines" after
        # a question on Kraissl's lines that the expert answered by naming Langer's (fresh31's truth-1113)
        unasked = set(missing) & _names(text)
    # a quiz case reported as the user's own needs no paraphrase: "The user does not want to take injections"
    # (fresh28's truth-979) has one word of two that only the question has
    slack = MISREPORT_SHARE * len(words) if strict else max(1, MISREPORT_SHARE * len(words))
    if len(missing) <= slack and not glued and not unasked:
        return None
    if glued:
        letter = sorted(glued)[0]
        missing = [f"{letter}) {options[letter]}", *missing]
    return GateVerdict(ok=False, reason=GateReason.MISREPORTED, detail=what, unsupported=missing)


_CAPITALISED = re.compile(r"\b[A-Z][a-z][\w'’-]*")
_BRACKETED = re.compile(r"\([^()]*\)")


def _names(text: str) -> set[str]:
    """Stems of the names a text writes inside a sentence ("Langer's lines"), not at its start.

    Not an acronym ("DALYs"), nor what brackets hold ("the Millennium Development Goals (MDGs)"): another
    way of writing what was asked.
    """
    text = _BRACKETED.sub(lambda found: " " * len(found.group(0)), text)
    return {
        stem
        for found in _CAPITALISED.finditer(text)
        if text[: found.start()].strip() and text[: found.start()].rstrip()[-1] not in ".!?:"
        for stem in stems(found.group(0))
    }


def _rejected_words(words: set[str], evidence: Evidence, said: set[str]) -> set[str]:
    """The rejected options a memory borrows a word of its own from, where the user's sentences lack it.

    "The user asks about the importance of monitoring platelets" for a question on what to monitor, after
    the chatbot's rejected "Platelet count": the option is not named in full, but its word is in the
    question the memory reports, and the user asked no such thing.
    """
    options = parse_options(evidence.question)
    rejected = known_answers(evidence).rejected
    out = set()
    for letter in rejected:
        others = stemset(options[k] for k in options if k != letter)
        if (set(stems(options[letter])) - others - said) & words:
            out.add(letter)
    return out


def _option_words(words: set[str], options: dict[str, str], said: set[str]) -> set[str]:
    """The options a report of asking borrows a word from that no sentence of the user's asking has.

    "The user asks about the contribution of the lens to the refractive power of the eye" (fresh27's
    truth-949): the user asked which part contributes most; "lens" is only in two of the options.
    """
    return {letter for letter, text in options.items() if (set(stems(text)) - said) & words}


def bare_letter(text: str, evidence: Evidence) -> bool:
    """Whether a memory has an option's letter standing alone ("D, mate"), not an article ("A baker")."""
    letters = "".join(parse_options(evidence.question))
    return bool(letters) and bool(
        re.search(rf"(?<![\w'’.-])[{letters}](?![\w'’-])(?!\s+[a-z])|\b[{letters}]\s+as\b", text)
    )


# how someone names something: "writes DOC for 'drug of choice'", "uses 'LSCS'", "by X the user means Y"; not
# "Crescendo angina means ...", a definition, nor "which means ...", a consequence (fresh23's truth-851), both
# the expert's domain statements
_TERM = re.compile(
    r"\bstands? for\b|(?<!too )\bshort for\b|\babbreviat\w*|\bthe term\b|\b(?:user|expert|they|he|she) means\b"
    r"|\b(?:writes|says|uses|calls)\s+(?:['\"‘“]|\S+\s+(?:for|to mean|as)\b)",
    re.I,
)


def names_a_term(text: str) -> bool:
    """Whether a memory says how someone names something ("writes DOC for 'drug of choice'")."""
    return bool(_TERM.search(text))


# what a user memory says of the user themselves: a wish, a stance, their own situation ("The user wants ...",
# "The user agrees on ...", "The user states that they work in an abattoir")
_PERSONAL = re.compile(
    r"\b(?:wants?|wanted|prefers?|preferred|expects?|expected|likes|would (?:like|rather)|agrees?|agreed"
    r"|disagrees?|accepts?|accepted|corrects?|corrected|marks?|needs?|they|their|them|themselves)\b",
    re.I,
)


def about_the_user(text: str) -> bool:
    """Whether a user memory says something of the user themselves, not of the domain."""
    return bool(_PERSONAL.search(text))


def reports_asking(text: str) -> bool:
    """Whether a memory reports what someone asked ("The user asks about ..."), not a claim.

    It must name who asked: "The question never says the child is a boy, so ..." is the expert's claim
    about the case (fresh22's truth-814), not a report of a question.
    """
    return bool(ASKING.search(text)) and bool(REPORT.search(text))


def expert_fact_as_user_memory() -> GateVerdict:
    """The verdict on a personal "the user states X" fact from an expert: X is domain knowledge.

    In a conversation whose human is a trusted expert, a fact they state belongs in shared memory,
    where it is gated as domain knowledge; as the expert's personal user-question memory it would
    only repeat it under weaker rules (a user-question memory may use any word the human said, so it
    also takes the rejected answer the expert only named in order to refuse it).
    """
    return GateVerdict(
        ok=False, reason=GateReason.DOMAIN_FACT, detail="an expert's domain statement belongs in shared memory"
    )
