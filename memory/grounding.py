"""The truth gate: a memory must say what its source said, in this conversation (issue 11, VeriMem's write gate).

Pure and deterministic: no model call, no clock. A candidate memory is compared with the conversation it
came from, split by speaker (who said what comes from the turns' roles, never from their text):

- every content word of a memory must come from what its source may vouch for: the trusted source's
  own statements (plus the reference text and the opening question, which gives the topic) for a
  memory credited to the source; the user's own turns for a user-question memory; the conversation
  for an LLM-response memory. Words from elsewhere are a claim nobody made (or the chatbot's words
  credited to the user). Numbers must be said exactly;
- a memory must not positively assert what the source negated ("X does not act on Y" never becomes
  "X acts on Y"), nor deny what the source asserted;
- a memory must not repeat the chatbot's rejected answer: an answer option the chatbot chose and the
  source did not accept, or wording found only in the chatbot's turns;
- a memory must not restate the chatbot's rejected reasoning, even in words the source also used
  (:mod:`memory.option_gate`, with what a memory may say of the question's options);
- a memory worded as a mistake to avoid may name the rejected answer, but must still be about this
  conversation;
- most of the words of a copy of a prompt's worked example appear nowhere in the conversation.

Words are compared as crude stems (``memory.wording``); options and answers come from
``memory.options``. The thresholds and rules were written from the failure cases in issue 11, the
tropicamide demo and dev-split conversations of ``benchmarks/data/truth_conversations.jsonl``
(truth-001, -002, -021, -023); the test split reports them. The rejected-reasoning rule was written
from fresh3's truth-148 and measured on fresh4; the rejected-answer-copy rule was then written from
fresh4's truth-191, -197 and -205, so fresh3 and fresh4 are tuning data now and the copy rule waits for
an unseen split. Option words compared whole (not cut to five letters), a bracketed aside as another name
for an option, the chatbot's closing pick among the options the expert spoke for, and the bare-stance rule
were written in session 9 from the fresh3-fresh7 conversations (truth-144, -172, -190, -197, -296, -311) and
measured on fresh8; then fresh8's own findings (a stage's letter "(T4d)" read as an option, "should've been
B", the rejected answer said in other words: truth-325, -326, -348) made it tuning data too, and fresh9
measured them; fresh9's findings (truth-378, a rejected sentence copied whole; truth-387, "osteoma" read as
"osteosarcoma") gave the whole-sentence copy rule and the stricter word match, measured on fresh10;
fresh10's truth-391 ("What doesn't belong is the Aschoff nodule" answering a "Not a feature" question) gave
the negative-question reading of the expert's denial, measured on fresh11. fresh11's findings (truth-423,
-443, -451) gave "Answer's B", options told apart by their text when their words are the same, and the
closing letter before the closing words. Session 10 read fresh11 (truth-427, -428, -429, -442) and added
three checks: a memory may not deny what the source asserted in a clause of its own; a memory may not say of
the accepted option what the source said of a rejected one (:mod:`memory.subjects`); a
user-question memory may report only a question or an agreement the user's turns hold
(:mod:`memory.user_reports`). fresh12 measured fresh11's findings and these; its findings (truth-462, -471,
-472, -484, -491) gave: a pronoun's clause is about the option its sentence named; words only the chatbot
said, in any turn, are not the source's; a sentence's claim must come mostly from one or two source
sentences; the answer keeps the case the question sets out; a quiz question is not the user's statement.
fresh13 measured those; its truth-515 and -518 gave the check that a memory does not mix what the source
said of two options. The rules of sessions 11 to 14, with the conversations each was written from and
the split that measured it, are in CHANGELOG.md. The evidence and the verdict are in :mod:`memory.gate_terms`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memory.answer_topic import answer_drawn_from_elsewhere, answers_another_question, filed_elsewhere
from memory.arithmetic import miscalculated
from memory.gate_terms import UNSAID_SHARE, Evidence, GateReason, GateVerdict, example_pairs, support_sentences
from memory.letters import unletter
from memory.mistakes import mistake_check
from memory.models import MemoryType
from memory.option_gate import (
    accepted_option,
    answer_without_topic,
    names_accepted,
    option_check,
    rejected_answer_copy,
    rejected_echo,
    rejected_in_other_words,
    says_nothing_new,
)
from memory.options import named_options, parse_options, question_stem
from memory.reasons import unsaid_reason
from memory.splices import spliced
from memory.subjects import chatbot_sentence, other_subject, pieced_together
from memory.user_reports import ASKING as _ASKING
from memory.user_reports import REPORT as _REPORT
from memory.user_reports import bare_letter, misreported
from memory.wording import (
    CHUNK,
    NEGATION,
    asserted_stems,
    clauses,
    exact,
    negated_stems,
    negation_subject,
    normal,
    positive_text,
    stems,
    stemset,
)

__all__ = [
    "Evidence",
    "GateReason",
    "GateVerdict",
    "accepted_option",
    "check",
    "named_options",
    "parse_options",
    "question_stem",
    "stems",
    "unletter",
]

NEGATED_SUPPORT = 0.5  # a negated source sentence must cover this share of the memory to contradict it
SELF_DENIAL = 2  # stems a memory asserts in one chunk and negates in another, as the source negated them
MODEL_WORDS = 2  # chatbot-only words that make a memory a repeat of the chatbot's answer
# a user-question memory with no content word but these is a bare stance ("the user disagrees")
_STANCE = frozenset(stems("agree disagree accept reject correct incorrect wrong right confirm object dispute doubt"))

# how often or how much: a memory may not add one the source did not say (session 14, fresh22's truth-819)
_DEGREE = frozenset(stems("rare rarely uncommon common usually often seldom frequent always least worst"))
_MISTAKE = re.compile(r"\b(?:avoid|mistake|wrong|incorrect|not)\b", re.IGNORECASE)


def _contradiction(memory: str, texts: Sequence[str], question: str = "") -> str | None:
    """A source clause that negates what the memory asserts positively, or asserts what it negates, if any.

    A denial the question itself makes ("Which ... is not used in the quadruple test") is the question's.
    """
    positive = asserted_stems(memory)
    mine = set(stems(memory))
    for text in texts:
        for clause in clauses(text):
            against = negated_stems(clause) & positive
            covered = len(mine & set(stems(clause))) / max(1, len(mine))
            subject = negation_subject(clause)  # what the negation is said of: the words just before it
            same_subject = subject <= mine if subject else True
            if against and covered >= NEGATED_SUPPORT and same_subject:
                return clause
    return _self_contradiction(memory, texts) or _denied_statement(memory, texts, question)


def _denied_statement(memory: str, texts: Sequence[str], question: str) -> str | None:
    """A source clause with no negation that asserts what the memory negates, if any.

    "Biotin is a cofactor for acetyl-CoA carboxylase, but not for propionyl-CoA carboxylase", after the
    expert said "Propionyl-CoA carboxylase ... is biotin-dependent as well": the memory denies two stems
    at least of a positive source clause, and that clause also shares a word the memory asserts (what the
    denial is about). Words the source itself negated somewhere are not counted: the memory may repeat a
    denial the source made.
    """
    denied = negated_stems(memory)
    if len(denied) < SELF_DENIAL:
        return None
    source_clauses = [c for text in texts for c in clauses(text)]
    denied -= {s for c in [*source_clauses, question] for s in negated_stems(c)}
    kept = asserted_stems(memory)
    found = [
        (len(denied & set(stems(c))), c) for c in source_clauses if not NEGATION.search(c) and kept & set(stems(c))
    ]
    best = max(found, default=(0, ""), key=lambda pair: pair[0])
    return best[1] if best[0] >= max(SELF_DENIAL, NEGATED_SUPPORT * len(denied)) else None


def _self_contradiction(memory: str, texts: Sequence[str]) -> str | None:
    """A source clause negating what one chunk of the memory asserts and another chunk negates, if any.

    "GNAS mutations are inherited from a parent, like Y, so it is not inherited from a parent" asserts
    the chatbot's rejected argument and then the expert's negation of it; the memory as a whole negates
    those words, so the check above misses the positive chunk. Two shared stems at least: "a microtubule
    protein, not a filament protein" shares only one. A chunk the source itself said positively (its
    own sentence, copied) is not checked.
    """
    chunks = [c for c in CHUNK.split(memory) if c.strip()]
    if len(chunks) < 2:
        return None
    denied = negated_stems(memory)
    said = [set(stems(positive_text(c))) for text in texts for c in clauses(text)]
    for chunk in chunks:
        both = asserted_stems(chunk) & denied
        mine = set(stems(chunk))
        if len(both) < SELF_DENIAL or any(len(mine & s) >= (1 - UNSAID_SHARE) * len(mine) for s in said):
            continue
        for text in texts:
            for clause in clauses(text):
                if len(negated_stems(clause) & both) >= SELF_DENIAL:
                    return clause
    return None


def _allowed(memory_type: MemoryType, evidence: Evidence, mistake: bool) -> list[str]:
    if memory_type is MemoryType.USER_QUESTION:
        return [*evidence.user_said, evidence.reference]
    if memory_type is MemoryType.LLM_RESPONSE and mistake:
        return [evidence.question, *evidence.source_said, *evidence.model_said, evidence.reference]
    return [evidence.question, *evidence.source_said, evidence.reference]


def _unsaid(text: str, allowed: Sequence[str], evidence: Evidence) -> GateVerdict | None:
    words = stems(text)
    pool = stemset(allowed)
    foreign = [w for w in dict.fromkeys(words) if w not in pool]
    said_exactly = [w for w in foreign if exact(w) or w in _DEGREE]  # numbers, "a rare condition": said, or not
    if not words or (not said_exactly and len(foreign) <= UNSAID_SHARE * len(set(words))):
        return None
    everything = stemset([evidence.question, *evidence.user_said, *evidence.model_said, evidence.reference])
    from_example = [w for w in foreign if w not in everything and w in stemset([evidence.example])]
    if evidence.example and len(from_example) * 2 >= len(foreign):
        return GateVerdict(
            ok=False, reason=GateReason.COPIED_EXAMPLE, detail="words of the prompt's example", unsupported=foreign
        )
    by_model = [w for w in foreign if w in stemset(evidence.model_said)]
    if by_model and len(by_model) * 2 >= len(foreign):
        return GateVerdict(
            ok=False, reason=GateReason.MODEL_WORDS, detail="the chatbot's words, not the source's", unsupported=foreign
        )
    what = "numbers, codes or degree words" if said_exactly else "words"
    return GateVerdict(ok=False, reason=GateReason.UNSAID, detail=f"{what} nobody said", unsupported=foreign)


def _empty_or_copied(text: str, memory_type: MemoryType, evidence: Evidence) -> GateVerdict | None:
    """Nothing to check against, nothing said, or a copy of the prompt's worked example."""
    if memory_type is not MemoryType.USER_QUESTION and not evidence.has_source_statement:
        return GateVerdict(ok=False, reason=GateReason.NO_SOURCE, detail="the source said nothing after the question")
    if not stems(text):
        return GateVerdict(ok=False, reason=GateReason.NO_TOPIC, detail="no content word: it says nothing")
    flat = normal(text)
    if evidence.example and len(flat) > 20 and flat in normal(evidence.example):
        return GateVerdict(ok=False, reason=GateReason.COPIED_EXAMPLE, detail="a copy of the prompt's example")
    if evidence.example and (run := example_pairs(flat, evidence)):
        return GateVerdict(ok=False, reason=GateReason.COPIED_EXAMPLE, detail=f"the prompt's example: {run!r}")
    return None


def _useless(text: str, memory_type: MemoryType, evidence: Evidence) -> GateVerdict | None:
    """A true memory that tells a later reader nothing: an answer without its question, or only the question."""
    if memory_type is MemoryType.RESIDUAL and answer_without_topic(text, evidence):
        detail = "names the answer but not what it answers: useless to anyone else"
        return GateVerdict(ok=False, reason=GateReason.NO_TOPIC, detail=detail)
    if memory_type is not MemoryType.USER_QUESTION and says_nothing_new(text, evidence):
        detail = "adds nothing to the question: useless to anyone else"
        return GateVerdict(ok=False, reason=GateReason.NO_TOPIC, detail=detail)
    stance = _REPORT.search(text) and not _ASKING.search(text) and set(stems(text)) <= _STANCE
    if memory_type is MemoryType.USER_QUESTION and len(set(stems(text)) - _STANCE) < 2 and bare_letter(text, evidence):
        # "The user states that D, mate.", "The user marks C as the one they'd mark": a letter and a word
        detail = "says under two words of what the user said: useless later"
        return GateVerdict(ok=False, reason=GateReason.NO_TOPIC, detail=detail)
    if memory_type is MemoryType.USER_QUESTION and stance:
        # "The user disagrees with the expert's answer": which answer, about what? (the case the user
        # described is worth keeping, even in the question's words; a stance with no content is not)
        detail = "a stance with nothing it is about: useless later"
        return GateVerdict(ok=False, reason=GateReason.NO_TOPIC, detail=detail)
    return None


def _filed_elsewhere(text: str, memory_type: MemoryType, evidence: Evidence) -> GateVerdict | None:
    if memory_type is MemoryType.USER_QUESTION:
        return None
    filed = filed_elsewhere(text, evidence) if memory_type is MemoryType.LLM_RESPONSE else None
    return filed or answers_another_question(text, evidence)


def _rejected_answer(text: str, memory_type: MemoryType, evidence: Evidence) -> GateVerdict | None:
    """The chatbot's rejected answer, copied or said in other words (what a user asked may use any words)."""
    copied = rejected_answer_copy(text, evidence)
    if copied is not None:
        detail = f"copies the chatbot's rejected answer: {copied!r}"
        return GateVerdict(ok=False, reason=GateReason.REJECTED_ANSWER, detail=detail)
    asked = memory_type is MemoryType.USER_QUESTION and _ASKING.search(text)
    reworded = None if asked else rejected_in_other_words(text, evidence)
    if reworded is not None:
        detail = f"says the rejected {reworded} in other words"
        return GateVerdict(ok=False, reason=GateReason.REJECTED_ANSWER, detail=detail)
    return None


def check(text: str, memory_type: MemoryType, evidence: Evidence, *, mistake: bool = False) -> GateVerdict:
    """Whether ``text`` may be stored as a memory of ``memory_type`` learnt from ``evidence``.

    ``mistake`` marks a memory worded as a mistake to avoid (it may name the rejected answer).
    """
    first = _empty_or_copied(text, memory_type, evidence) or miscalculated(text)
    if first is not None:
        return first
    mistake = mistake and bool(_MISTAKE.search(text))  # only a memory worded as a mistake may name one
    allowed = _allowed(memory_type, evidence, mistake)
    unsaid = (
        _unsaid(text, allowed, evidence)
        or (None if memory_type is MemoryType.USER_QUESTION else unsaid_reason(text, evidence, mistake=mistake))
        or _filed_elsewhere(text, memory_type, evidence)
    )
    if unsaid is not None:
        return unsaid
    if mistake:
        return mistake_check(text, evidence)
    source = (
        [*evidence.source_said, evidence.reference]
        if memory_type is not MemoryType.USER_QUESTION
        else [*evidence.user_said]
    )
    against = _contradiction(text, source, question_stem(evidence.question))
    if against is not None:
        return GateVerdict(ok=False, reason=GateReason.NEGATED, detail=f"the source said: {against!r}")
    reject = _rejected_answer(text, memory_type, evidence)
    if reject is not None:
        return reject
    if memory_type is not MemoryType.USER_QUESTION or not _ASKING.search(text):
        # a user-question memory that reports what the user asked may list the options; one that
        # reports what the user stated may not put the chatbot's pick in the user's mouth
        verdict = option_check(
            text, evidence, evidence.source_said if memory_type is MemoryType.USER_QUESTION else source
        )
        if verdict is not None:
            return verdict
    reported = _user_report(text, evidence, source) if memory_type is MemoryType.USER_QUESTION else None
    if reported is not None:
        return reported
    useless = _useless(text, memory_type, evidence)
    if useless is not None:
        return useless
    if memory_type is not MemoryType.USER_QUESTION:
        borrowed = _borrowed(text, evidence, source)
        if borrowed is not None:
            return borrowed
    return _supported(text, memory_type, evidence, source)


def _supported(text: str, memory_type: MemoryType, evidence: Evidence, source: Sequence[str]) -> GateVerdict:
    """The source sentence that best supports the memory; none refuses it, unless it names the accepted answer.

    "Tamoxifen is ... recommended for patients with breast cancer" from a question that said "She is now on
    tamoxifen", after an expert who only said what is not recommended (fresh33's truth-1163).
    """
    positive = asserted_stems(text)
    best = [(share, c) for share, c in support_sentences(text, source) if not negated_stems(c) & positive]
    if best and best[0][0] > 0:
        return GateVerdict(ok=True, reason=GateReason.SUPPORTED, detail=f"best support: {best[0][1]!r}")
    if memory_type is not MemoryType.USER_QUESTION and not names_accepted(text, evidence):
        return GateVerdict(ok=False, reason=GateReason.UNSAID, detail="nothing the source said supports it")
    return GateVerdict(ok=True, reason=GateReason.SUPPORTED, detail="supported by the question and source")


def _user_report(text: str, evidence: Evidence, source: Sequence[str]) -> GateVerdict | None:
    """A user memory reporting a question or agreement the user did not make, or joining what they said apart.

    "'store in a refrigerator' means -25 to -10 °C" joins the refrigerator's sentence to the freezer's.
    """
    reported = misreported(text, evidence)
    if reported is not None or _ASKING.search(text):
        return reported
    pieced = pieced_together(text, evidence, source)
    if pieced is not None:
        detail = f"pieced together from words the user said apart: {pieced!r}"
        return GateVerdict(ok=False, reason=GateReason.UNSAID, detail=detail)
    return _chatbot_copy(text, evidence, source)  # "The name is about the pattern.": the chatbot's line


def _chatbot_copy(text: str, evidence: Evidence, source: Sequence[str]) -> GateVerdict | None:
    copied = chatbot_sentence(text, evidence, source)
    if copied is None:
        return None
    return GateVerdict(ok=False, reason=GateReason.MODEL_WORDS, detail=f"the chatbot's sentence: {copied!r}")


def _borrowed(text: str, evidence: Evidence, source: Sequence[str]) -> GateVerdict | None:
    """A memory credited to the source that is the chatbot's, or the source's said of another subject."""
    own = stemset(source) | stemset([evidence.question])
    chatbot = stemset(evidence.model_said)  # any of its turns: "the local producers" of its thanks too
    model_only = [w for w in dict.fromkeys(stems(text)) if w in chatbot and w not in own]
    if len(model_only) >= MODEL_WORDS:
        return GateVerdict(
            ok=False, reason=GateReason.MODEL_WORDS, detail="repeats the chatbot's answer", unsupported=model_only
        )
    copied = _chatbot_copy(text, evidence, source)
    if copied is not None:
        return copied
    echo = rejected_echo(text, evidence, source)
    if echo is not None:
        return GateVerdict(
            ok=False, reason=GateReason.MODEL_WORDS, detail=f"repeats the chatbot's rejected reasoning: {echo!r}"
        )
    other = other_subject(text, evidence, source)
    if other is not None:
        return GateVerdict(ok=False, reason=GateReason.SWAPPED_SUBJECT, detail=other)
    scattered = pieced_together(text, evidence, source)
    if scattered is not None:
        detail = f"pieced together from words the source said apart: {scattered!r}"
        return GateVerdict(ok=False, reason=GateReason.UNSAID, detail=detail)
    if (joint := spliced(text, source)) is not None:
        detail = f"spliced from two of the source's sentences where they share a phrase: {joint!r}"
        return GateVerdict(ok=False, reason=GateReason.UNSAID, detail=detail)
    if (premise := answer_drawn_from_elsewhere(text, evidence)) is not None:
        detail = f"draws the answer from a premise that is not about the question: {premise!r}"
        return GateVerdict(ok=False, reason=GateReason.UNSAID, detail=detail)
    return None
