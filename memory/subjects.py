"""Whose claim a memory carries: what the source said of one option is not said of another.

Part of the truth gate (:mod:`memory.grounding` runs these on memories credited to the source). Every
word of "Apo B-100 mutation causes type I hyperlipoproteinaemia" may have been said, but of lipoprotein
lipase deficiency. Each source clause is about the options it names, or, when it opens with a pronoun,
about those named just before it. Written in session 10 from fresh11's truth-429 and fresh12's truth-462;
the mixing check from fresh13's truth-515 and -518. A memory sentence whose claim no one source sentence
says is pieced together from what was said apart, often of two subjects; one that gives a source
sentence's predicate to another subject renames it (session 11). Pure and deterministic.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence

from memory.gate_terms import Evidence, support_sentences
from memory.letters import unletter
from memory.option_gate import ECHO_MIN_STEMS
from memory.options import named_options, parse_options, question_stem
from memory.qualifiers import CLAIM_COVER, dropped_qualifier
from memory.subject_copies import replaced_subject
from memory.wording import clauses, normal, sentences, stems, stemset

# a memory clause naming an option whose claim one source clause about other options covers this much of
SWAP_COVER = 0.75
# words of a clause that come only from what the source said of one option, borrowed without naming it
MIX_WORDS = 2
# the fewest words of a memory sentence found whole in the chatbot's turns that make it the chatbot's
COPY_WORDS = 3
# a copy of the chatbot's sentence that carries less than this share of the source sentence it restates
# is the chatbot's shorthand of it ("Planned is safer than emergency.")
SHORTHAND = 0.5
# what stands for any option's name when a memory sentence is compared with the chatbot's
_OPTION_MARK = "§"


def other_subject(text: str, evidence: Evidence, source: Sequence[str]) -> str | None:
    """Why the memory says of one subject what the source said of another, if it does (else None)."""
    swapped = swapped_subject(text, evidence, source)
    if swapped is not None:
        return f"says of one option what the source said of another: {swapped!r}"
    mixed = mixed_subjects(text, evidence, source)
    if mixed is not None:
        return f"borrows what the source said of {mixed}, another subject"
    renamed = renamed_subject(text, evidence, source)
    if renamed is not None:
        return f"gives another subject what the source said of its own: {renamed!r}"
    replaced = replaced_subject(text, source)
    if replaced is not None:
        return f"copies the source's sentence with another subject: {replaced!r}"
    widened = widened_subject(text, source)
    if widened is not None:
        return f"says of a whole class what the source said of one of its members: {widened!r}"
    dropped = dropped_qualifier(text, source, evidence.question)
    if dropped is not None:
        return f"says for everyone what the source said only {dropped!r}"
    return None


def swapped_subject(text: str, evidence: Evidence, source: Sequence[str]) -> str | None:
    """The source clause about one option that a clause of the memory says of another, if any.

    "Apo B-100 mutation is the most probable cause of type I hyperlipoproteinaemia, with huge amounts of
    chylomicrons", after the expert said that lipoprotein lipase deficiency (another option) gives type I
    hyperlipoproteinaemia with huge amounts of chylomicrons: every word was said, but of another subject.
    The claim (the clause's words beyond the question's stem and the options) comes from one source clause
    that names other options than the memory's, and no clause naming the memory's says as much of it. A
    source clause that opens with a pronoun ("It's hydrophilic") is about the options its sentence or the
    sentence before names.
    """
    options = parse_options(evidence.question)
    if not options:
        return None
    case = case_words(evidence.question, options)
    subjects, _ = _clause_subjects(tuple(source), tuple(options.items()))
    for clause in clauses(text):
        named = named_options(clause, options, positive_only=True)
        if not named:
            continue
        unnamed = " ".join(w for w in clause.split() if not named_options(w, options))  # "RealSeal" too
        claim = " ".join(w for w in dict.fromkeys(stems(unnamed)) if w not in case)
        if len(claim.split()) < ECHO_MIN_STEMS:
            continue
        about = [(share, said, subjects[said]) for share, said in support_sentences(claim, list(subjects))]
        own = max((share for share, _, theirs in about if theirs & named), default=0.0)
        for share, said, theirs in about:
            if share >= SWAP_COVER and share > own and theirs and not theirs & named:
                return said
    return None


def renamed_subject(text: str, evidence: Evidence, source: Sequence[str]) -> str | None:
    """The source sentence whose predicate a memory sentence gives to another subject, if any.

    "Paradoxical undressing is sudden death on plunging into cold water", after the expert said "immersion
    syndrome is sudden death on plunging into cold water": the memory's "X is ..." takes almost all of its
    predicate (beyond the question's words) from one source sentence whose subject it drops, and its own
    subject has a word that sentence never says. Subjects need not be options: "Cross-dressing is
    transvestism, named after the Chevalier d'Eon", said of eonism.
    """
    options = parse_options(evidence.question)
    case = case_words(evidence.question, options)
    said = [(told, heard) for told, heard, _ in _source_sentences(tuple(source), tuple(options.items()))]
    for sentence in sentences(text):
        mine = _COPULA.match(sentence.strip())
        if not mine or not said:
            continue
        subject, predicate = set(stems(mine.group(1))), set(stems(mine.group(2))) - case
        if len(predicate) < ECHO_MIN_STEMS or not subject:
            continue
        best, heard = max(said, key=lambda pair: len(predicate & pair[1]))
        theirs = _COPULA.match(best.strip())
        if len(predicate & heard) < CLAIM_COVER * len(predicate) or not theirs:
            continue
        their_subject = set(stems(theirs.group(1)))
        if their_subject and subject - heard and not their_subject & set(stems(sentence)):
            return best
    return None


def widened_subject(text: str, source: Sequence[str]) -> str | None:
    """The source sentence whose "a/an X" a memory sentence turns into "Xs are ...", if any.

    "Milnacipran is the stranger here: an SNRI antidepressant used for fibromyalgia" says that one drug is
    an SNRI used for fibromyalgia, not that "SNRI antidepressants are used for fibromyalgia". A memory
    sentence whose plural subject ("<words> are ...") the source only ever said as one member of the class
    ("a/an <words>"), and never in the plural, claims for the class what was said of one example, when that
    sentence says what the memory says of the class. "Rat bites need no vaccine", from "Rodent bites, by the
    guidelines, need no vaccine ... a rat bite needs washing", narrows a class and is not this check's.
    """
    said = [f" {normal(turn)} " for turn in source]
    for sentence in sentences(text):
        mine = _COPULA.match(sentence.strip())
        if not mine or not re.search(r"\s(?:are|were)\s", sentence) or not mine.group(1).lower().endswith("s"):
            continue
        subject = re.sub(r"^(?:the|all|most|many) ", "", normal(mine.group(1)))
        if any(f" {subject} " in turn for turn in said):  # the source spoke of the class too
            continue
        single = re.compile(rf" an? {re.escape(subject[:-1])} ")
        predicate = set(stems(mine.group(2)))
        for one in (one for turn in source for one in sentences(turn) if single.search(f" {normal(one)} ")):
            if predicate and len(predicate & set(stems(one))) >= CLAIM_COVER * len(predicate):
                return one
    return None


# a sentence's subject and what it says of it: "Immersion syndrome is sudden death on ..."
_COPULA = re.compile(r"^(.{3,60}?)\s+(?:is|are|was|were)\s+(.*)$", re.IGNORECASE | re.DOTALL)


def mixed_subjects(text: str, evidence: Evidence, source: Sequence[str]) -> str | None:
    """An option whose own words a clause of the memory borrows while naming another option, or none, if any.

    "Papillon-Lefevre syndrome is a cathepsin C deficiency ... leading to kinky hair, cerebral degeneration
    and subdural haematomas", after the expert gave kinky hair and subdural haematomas to Menkes disease and
    cathepsin C to Papillon-Lefevre: no one source clause says most of it, so the swap check misses it. A
    claim word is an option's own when every source clause that says it is about that option alone; a clause
    that borrows two such words of an option it does not name, while it names another option or borrows
    from a second one as well, joins what the source kept apart.
    """
    options = parse_options(evidence.question)
    if not options:
        return None
    case = case_words(evidence.question, options)
    _, owners = _clause_subjects(tuple(source), tuple(options.items()))
    for clause in clauses(text):
        named = named_options(clause, options, positive_only=True)
        borrowed: dict[str, int] = {}
        for word in set(stems(clause)) - case:
            whose = owners.get(word, frozenset())
            if len(whose) == 1 and len(owner := next(iter(whose))) == 1:
                letter = next(iter(owner))
                borrowed[letter] = borrowed.get(letter, 0) + 1
        sources = {letter for letter, n in borrowed.items() if n >= MIX_WORDS}
        from_others = sources - named
        if from_others and (named or len(sources) >= 2):
            letter = sorted(from_others)[0]
            return f"{letter}) {options[letter]}"
    return None


def pieced_together(text: str, evidence: Evidence, source: Sequence[str]) -> str | None:
    """A sentence of the memory whose claim no one sentence of the source says most of, if any.

    "The anion gap is calculated by subtracting the sum of the chloride and bicarbonate from the pH", after
    the expert worked the gap out as "145 minus the sum of 100 and 25": "sum", "calculate" and "bicarbonate"
    were each said, in three different sentences, and the claim they make together is nobody's. So is
    "vitamin K is the cofactor of prolyl and lysyl hydroxylase", joined from a sentence about vitamin K and
    one about vitamin C. The claim is the sentence's words that the source or the chatbot's rejected answers
    said, beyond the question's, the options' and a few linking verbs ("causing"): a restatement draws it from
    one sentence of the source, or from two that are about the same options (both name them and no other).
    Its other words ("equals" for "is") are the unsaid-word check's.
    """
    options = parse_options(evidence.question)
    case = case_words(evidence.question, options) | _LINKING
    said = [(heard, about) for _, heard, about in _source_sentences(tuple(source), tuple(options.items()))]
    pieces = frozenset().union(*(one for one, _ in said), stemset(evidence.model_rejected))
    for sentence in sentences(text):
        claim = {w for w in stems(sentence) if w not in case and w in pieces}
        if len(claim) < ECHO_MIN_STEMS:
            continue
        best = _best_cover(claim, (one for one, _ in said))
        pairs = (
            len(claim & (one | other))
            for i, (one, about) in enumerate(said)
            for other, theirs in said[i + 1 :]
            if about and theirs == about
        )
        if max(best, *pairs, 0) < CLAIM_COVER * len(claim):
            return sentence
    return None


def chatbot_sentence(text: str, evidence: Evidence, source: Sequence[str]) -> str | None:
    """A sentence of the memory copied from the chatbot's turns (its closing thanks too), not the source's.

    "Culture first, but no delay." and "The dressing is only the trigger." were the chatbot's summaries as it
    accepted the correction: true to it perhaps, but no sentence of the source says as much (CLAIM_COVER of
    its words beyond the question's). Nor does a summary with under ECHO_MIN_STEMS such words ("Ratio for
    strength, difference for impact.", "Ferritin over TIBC over MCV."), or with under SHORTHAND of the
    sentence it restates ("Planned is safer than emergency." of "Planned surgery at 16-20 weeks is far safer
    than an emergency laparotomy for a twisted ovary at 30 weeks."): the chatbot's shorthand is no claim of
    the source's. Sentences of three words or more, outside the question's, count; a copy that restates
    three or more of one source sentence's words beyond the question's, and half of that sentence, passes.
    """
    options = parse_options(evidence.question)
    said = [f" {_plain(turn)} " for turn in source]
    chatbot = [f" {_plain(turn)} " for turn in evidence.model_said]
    # each of the chatbot's sentences, and the source's turns, with their letters dropped or spelt out as a
    # memory's are: "Understood: A) In the test, ..." is the chatbot's closing line (fresh29's truth-1043),
    # "The answer is D." the source's
    spelt = (
        [f" {_plain(unletter(s, options))} " for turn in evidence.model_said for s in sentences(turn)],
        [f" {_plain(unletter(turn, options))} " for turn in source],
    )
    asked = f" {_plain(evidence.question)} "
    case = case_words(evidence.question, options)
    heard = [told for _, told, _ in _source_sentences(tuple(source), tuple(options.items()))]
    names = sorted({name for name in map(_plain, options.values()) if name}, key=len, reverse=True)
    for sentence in sentences(text):
        flat = _plain(sentence)
        if len(flat.split()) < COPY_WORDS or f" {flat} " in asked:
            continue
        if not _copied(flat, chatbot, said, names, spelt):
            continue
        claim = set(stems(sentence)) - case
        restated = [one - case for one in heard if len(claim & one) >= CLAIM_COVER * len(claim)]
        if len(claim) < ECHO_MIN_STEMS or not any(len(claim) >= SHORTHAND * len(one) for one in restated):
            return sentence
    return None


def _copied(
    flat: str,
    chatbot: Sequence[str],
    said: Sequence[str],
    names: Sequence[str],
    spelt: tuple[Sequence[str], Sequence[str]],
) -> bool:
    """Whether a memory sentence is the chatbot's and not the source's, as it is or with another option named.

    "Deaths of children counted per 1000 live births is the infant mortality rate" is the chatbot's rejected
    "... is the child mortality rate" with the accepted option put in (fresh24's truth-879): the definition
    is still the chatbot's, and the source gave another. ``spelt`` holds the chatbot's sentences and the
    source's turns with their letters dropped or spelt out: a memory sentence that is one of those
    sentences whole, and not the source's, is the chatbot's.
    """
    if any(f" {flat} " in turn for turn in chatbot):
        return not any(f" {flat} " in turn for turn in said)
    chatbot_sentences, source_turns = spelt
    if f" {flat} " in chatbot_sentences:  # a whole sentence of the chatbot's, its letter dropped
        return not any(f" {flat} " in turn for turn in source_turns)
    masked = _masked(flat, names)
    if _OPTION_MARK not in masked:
        return False
    return any(f" {masked} " in _masked(turn, names) for turn in chatbot) and not any(
        f" {masked} " in _masked(turn, names) for turn in said
    )


def _masked(flat: str, names: Sequence[str]) -> str:
    """Plain words with every option's name (longest first) replaced by one mark."""
    for name in names:
        flat = re.sub(rf"(?<!\S){re.escape(name)}(?!\S)", _OPTION_MARK, flat)
    return flat


def _plain(text: str) -> str:
    """:func:`normal` words without "the".

    "The vagal reflex ..." copies "A vagal reflex ..."; "a" stays, since it may be an option's letter.
    """
    return " ".join(w for w in normal(text).split() if w != "the")


def _best_cover(claim: set[str], heard: Iterable[frozenset[str]]) -> int:
    """The most words of ``claim`` that one source sentence (its stems in ``heard``) says."""
    return max((len(claim & one) for one in heard), default=0)


# verbs that link a subject to its claim without adding to it ("causing hypocalcaemia")
_LINKING = frozenset(stems("cause causing leads result resulting due associated occurs seen comes stays remains gives"))


@functools.lru_cache(maxsize=64)
def _source_sentences(
    source: tuple[str, ...], items: tuple[tuple[str, str], ...]
) -> tuple[tuple[str, frozenset[str], frozenset[str]], ...]:
    """Each source sentence with its stems and the options it names (once per conversation; read only)."""
    options = dict(items)
    return tuple(
        (sentence, frozenset(stems(sentence)), frozenset(named_options(sentence, options)))
        for text in source
        for sentence in sentences(text)
    )


# a clause about what was named before it: "It's hydrophilic", "But it's a disease of children" (fresh31's truth-1093)
_PRONOUN = re.compile(
    r"^(?:(?:but|and|yet|so|still|though|although|however|also)[,\s]+)?"
    r"(?:it|it's|its|they|they're|their|these|this|those|he|she)\b",
    re.IGNORECASE,
)


def case_words(question: str, options: Mapping[str, str]) -> set[str]:
    """The question's own words and the options': restating them is neither side's claim."""
    return set(stems(question_stem(question))) | stemset(options.values())


@functools.lru_cache(maxsize=64)
def _clause_subjects(
    source: tuple[str, ...], items: tuple[tuple[str, str], ...]
) -> tuple[Mapping[str, frozenset[str]], Mapping[str, frozenset[frozenset[str]]]]:
    """Each source clause with the options it is about, and each word with the subjects of the clauses saying it.

    A clause is about the options it names, or, when it opens with a pronoun, the last ones named. Worked out
    once per conversation (both checks ask for every candidate); read only.
    """
    options = dict(items)
    subjects: dict[str, frozenset[str]] = {}
    for text in source:
        last: frozenset[str] = frozenset()
        for clause in clauses(text):
            named = frozenset(named_options(clause, options))
            if not named and _PRONOUN.match(clause):
                named = last
            subjects.setdefault(clause, named)
            last = named or last
    owners: dict[str, set[frozenset[str]]] = {}
    for said, about in subjects.items():
        for word in set(stems(said)):
            owners.setdefault(word, set()).add(about)
    return subjects, {word: frozenset(about) for word, about in owners.items()}
