"""The truth gate: a memory must say what its source said, in this conversation (issue 11, VeriMem's write gate).

Pure and deterministic: no model call, no clock. A candidate memory is compared with the conversation it
came from, split by speaker (who said what comes from the turns' roles, never from their text):

- every content word of a memory must come from what its source may vouch for: the trusted source's
  own statements (plus the reference text and the opening question, which gives the topic) for a
  memory credited to the source; the user's own turns for a user-question memory; the conversation
  for an LLM-response memory. Words from elsewhere are a claim nobody made (or the chatbot's words
  credited to the user). Numbers must be said exactly;
- a memory must not positively assert what the source negated ("X does not act on Y" never becomes
  "X acts on Y");
- a memory must not repeat the chatbot's rejected answer: an answer option the chatbot chose and the
  source did not accept, or wording found only in the chatbot's turns;
- a memory worded as a mistake to avoid may name the rejected answer, but must still be about this
  conversation;
- most of the words of a copy of a prompt's worked example appear nowhere in the conversation.

Words are compared as crude stems (``memory.wording``); options and answers come from
``memory.options``. The thresholds and rules were written from the failure cases in issue 11, the
tropicamide demo and dev-split conversations of ``benchmarks/data/truth_conversations.jsonl``
(truth-001, -002, -021, -023); the test split reports them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from memory.models import MemoryType
from memory.options import answers, named_options, parse_options, question_stem, unletter
from memory.wording import (
    CHUNK,
    NEGATION,
    asserted_stems,
    clauses,
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

UNSAID_SHARE = 0.25  # the share of a memory's content words its source may not vouch for
NEGATED_SUPPORT = 0.5  # a negated source sentence must cover this share of the memory to contradict it
SELF_DENIAL = 2  # stems a memory asserts in one chunk and negates in another, as the source negated them
MODEL_WORDS = 2  # chatbot-only words that make a memory a repeat of the rejected answer
# a clause of a memory whose claim (its words beyond the question's stem) one rejected chatbot clause
# covers this much of, and no source clause within this margin of it, is the chatbot's rejected reasoning
ECHO_COVER, ECHO_MARGIN, ECHO_MIN_STEMS = 0.8, 0.3, 3

_ASKING = re.compile(r"\b(?:ask|asks|asked|asking|question|questions|wonders|wondered|wants to know)\b", re.I)
_MISTAKE = re.compile(r"\b(?:avoid|mistake|wrong|incorrect|not)\b", re.IGNORECASE)


class GateReason(StrEnum):
    """Why the gate accepted or rejected a memory."""

    SUPPORTED = "supported"
    UNSAID = "unsaid"
    MODEL_WORDS = "model_words"
    NEGATED = "negated"
    REJECTED_ANSWER = "rejected_answer"
    OTHER_OPTION = "other_option"
    COPIED_EXAMPLE = "copied_example"
    NO_TOPIC = "no_topic"
    ANSWER_AS_MISTAKE = "answer_as_mistake"
    NO_SOURCE = "no_source"
    DOMAIN_FACT = "domain_fact"


class GateVerdict(BaseModel):
    """The gate's decision on one memory, with the evidence a reviewer needs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    ok: bool
    reason: GateReason
    detail: str = ""
    unsupported: list[str] = Field(default_factory=list)

    def describe(self) -> str:
        """One line for reports and the audit log."""
        return f"{self.reason.value}: {self.detail}" if self.detail else self.reason.value


class Evidence(BaseModel):
    """A conversation split by speaker; only turn roles decide who said what."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    question: str = ""
    source_said: list[str] = Field(default_factory=list)  # the trusted source's statements after the question
    user_said: list[str] = Field(default_factory=list)  # every turn of the user / expert, question included
    model_said: list[str] = Field(default_factory=list)  # the chatbot's turns
    model_rejected: list[str] = Field(default_factory=list)  # the chatbot's turns before the source's last word
    reference: str = ""
    example: str = ""  # the prompt's worked example: copies of it are not memories

    @property
    def has_source_statement(self) -> bool:
        """True when the source said anything after the opening question."""
        return any(s.strip() for s in self.source_said)


def _support_sentences(memory: str, texts: Sequence[str]) -> list[tuple[float, str]]:
    """Each source clause with the share of the memory's stems it covers, best first."""
    mine = set(stems(memory))
    if not mine:
        return []
    scored = [(len(mine & set(stems(c))) / len(mine), c) for text in texts for c in clauses(text)]
    return sorted(scored, key=lambda pair: -pair[0])


def _contradiction(memory: str, texts: Sequence[str]) -> str | None:
    """A source clause that negates what the memory asserts positively, if any."""
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
    return _self_contradiction(memory, texts)


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
    numbers = [w for w in foreign if w[0].isdigit()]
    if not words or (not numbers and len(foreign) <= UNSAID_SHARE * len(set(words))):
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
    what = "numbers" if numbers else "words"
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
    return None


def check(text: str, memory_type: MemoryType, evidence: Evidence, *, mistake: bool = False) -> GateVerdict:
    """Whether ``text`` may be stored as a memory of ``memory_type`` learnt from ``evidence``.

    ``mistake`` marks a memory worded as a mistake to avoid (it may name the rejected answer).
    """
    first = _empty_or_copied(text, memory_type, evidence)
    if first is not None:
        return first
    mistake = mistake and bool(_MISTAKE.search(text))  # only a memory worded as a mistake may name one
    unsaid = _unsaid(text, _allowed(memory_type, evidence, mistake), evidence)
    if unsaid is not None:
        return unsaid
    if mistake:
        return _mistake_check(text, evidence)
    source = (
        [*evidence.source_said, evidence.reference]
        if memory_type is not MemoryType.USER_QUESTION
        else [*evidence.user_said]
    )
    against = _contradiction(text, source)
    if against is not None:
        return GateVerdict(ok=False, reason=GateReason.NEGATED, detail=f"the source said: {against!r}")
    if memory_type is not MemoryType.USER_QUESTION or not _ASKING.search(text):
        # a user-question memory that reports what the user asked may list the options; one that
        # reports what the user stated may not put the chatbot's pick in the user's mouth
        verdict = _option_check(
            text, evidence, evidence.source_said if memory_type is MemoryType.USER_QUESTION else source
        )
        if verdict is not None:
            return verdict
    if memory_type is MemoryType.RESIDUAL and _answer_without_topic(text, evidence):
        return GateVerdict(
            ok=False,
            reason=GateReason.NO_TOPIC,
            detail="names the answer but not what it answers: useless to anyone else",
        )
    if memory_type is not MemoryType.USER_QUESTION:
        own = stemset(source) | stemset([evidence.question])
        rejected = stemset(evidence.model_rejected)
        model_only = [w for w in dict.fromkeys(stems(text)) if w in rejected and w not in own]
        if len(model_only) >= MODEL_WORDS:
            return GateVerdict(
                ok=False, reason=GateReason.MODEL_WORDS, detail="repeats the chatbot's answer", unsupported=model_only
            )
        echo = _rejected_echo(text, evidence, source)
        if echo is not None:
            return GateVerdict(
                ok=False, reason=GateReason.MODEL_WORDS, detail=f"repeats the chatbot's rejected reasoning: {echo!r}"
            )
    positive = asserted_stems(text)
    best = [(share, c) for share, c in _support_sentences(text, source) if not negated_stems(c) & positive]
    where = f"best support: {best[0][1]!r}" if best and best[0][0] > 0 else "supported by the question and source"
    return GateVerdict(ok=True, reason=GateReason.SUPPORTED, detail=where)


_TERM = re.compile(r"\b(?:writes|says|uses|means|meaning|stands? for|short for|abbreviat\w*|term|calls)\b", re.I)


def names_a_term(text: str) -> bool:
    """Whether a memory says how someone names something ("writes DOC for 'drug of choice'")."""
    return bool(_TERM.search(text))


def reports_asking(text: str) -> bool:
    """Whether a memory reports what someone asked ("The user asks about ..."), not a claim."""
    return bool(_ASKING.search(text))


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


def _mistake_check(text: str, evidence: Evidence) -> GateVerdict:
    """A mistake to avoid may name the rejected answer, never the answer the source accepted."""
    options = parse_options(evidence.question)
    accepted = answers(evidence.source_said, evidence.model_rejected, options).accepted if options else set()
    named = named_options(text, options) & accepted
    if named:
        letter = sorted(named)[0]
        return GateVerdict(
            ok=False,
            reason=GateReason.ANSWER_AS_MISTAKE,
            detail=f"calls the accepted answer {letter}) {options[letter]} a mistake",
        )
    return GateVerdict(ok=True, reason=GateReason.SUPPORTED, detail="worded as a mistake to avoid")


def _answer_without_topic(text: str, evidence: Evidence) -> bool:
    """A shared memory that names an option and hardly anything else ("The correct answer is X.")."""
    options = parse_options(evidence.question)
    if not options or not named_options(text, options, positive_only=True):
        return False
    option_words = stemset(options.values())
    return len([w for w in set(stems(text)) if w not in option_words]) < 2


def _rejected_echo(text: str, evidence: Evidence, source: Sequence[str]) -> str | None:
    """The rejected chatbot clause that a clause of the memory restates, where the source never said it.

    "Pre-renal azotemia: 36 hours without urine ... means the tubules have been damaged" glues the
    accepted answer to the reasoning the expert rejected; each word may occur somewhere in what the
    expert said, but the clause is the chatbot's. The case's own words (the question without its options)
    and the accepted answer's are left out of the comparison: restating them is neither side's claim.
    """
    if not evidence.model_rejected:
        return None
    options = parse_options(evidence.question)
    accepted = answers(evidence.source_said, evidence.model_rejected, options).accepted if options else set()
    case = set(stems(question_stem(evidence.question))) | stemset(options[a] for a in accepted)
    for clause in clauses(text):
        claim = [w for w in dict.fromkeys(stems(clause)) if w not in case]
        if len(claim) < ECHO_MIN_STEMS:
            continue
        words = " ".join(claim)
        echoed = _support_sentences(words, evidence.model_rejected)
        if echoed and echoed[0][0] >= ECHO_COVER:
            backed = _support_sentences(words, source)
            if not backed or backed[0][0] <= echoed[0][0] - ECHO_MARGIN:
                return echoed[0][1]
    return None


def _option_check(text: str, evidence: Evidence, source: Sequence[str]) -> GateVerdict | None:
    """A memory may name an option other than the accepted one only where the source said the same.

    Checked chunk by chunk (a chunk ends at a comma, colon, semicolon or sentence end): the chunk that
    names the option must be said by a source clause that names it too, in full when the option is
    the rejected answer. An option mentioned in a negation ("not timolol") needs no support when it is
    the rejected answer, but one the source never mentioned at all is a claim nobody made.
    """
    options = parse_options(evidence.question)
    if not options:
        return None
    known = answers(evidence.source_said, evidence.model_rejected, options)
    source_clauses = [c for s in source for c in clauses(s)]
    # in a negative question ("... does NOT provide:") "X does not ..." asserts X as the answer
    negative_question = bool(NEGATION.search(question_stem(evidence.question)))
    for chunk in (c for c in CHUNK.split(text) if c.strip()):
        for letter in sorted(named_options(chunk, options, positive_only=not negative_question) - known.accepted):
            whole = _within_accepted(letter, text, options, known.accepted)
            if whole is not None:  # part of an accepted option of several parts
                if whole:
                    continue
                inside = set(stems(options[letter]))
                wider = next(a for a in sorted(known.accepted) if inside < set(stems(options[a])))
                return GateVerdict(
                    ok=False,
                    reason=GateReason.OTHER_OPTION,
                    detail=f"names {letter}) {options[letter]}, only part of the accepted {wider}) {options[wider]}",
                )
            said_with = [c for c in source_clauses if letter in named_options(c, options)]
            best = _support_sentences(chunk, said_with)
            needed = 1.0 if letter in known.rejected else 1 - UNSAID_SHARE
            if best and best[0][0] >= needed:
                continue
            if letter in known.rejected:
                return GateVerdict(
                    ok=False,
                    reason=GateReason.REJECTED_ANSWER,
                    detail=f"states the rejected answer {letter}) {options[letter]}",
                )
            return GateVerdict(
                ok=False,
                reason=GateReason.OTHER_OPTION,
                detail=f"names {letter}) {options[letter]}, which the source never stated",
            )
    mentioned = {letter for c in source_clauses for letter in named_options(c, options)}
    negative = named_options(text, options) - named_options(text, options, positive_only=True)
    for letter in sorted(negative - known.accepted - known.rejected - mentioned):
        return GateVerdict(
            ok=False,
            reason=GateReason.OTHER_OPTION,
            detail=f"says something of {letter}) {options[letter]}, which the source never mentioned",
        )
    return None


def _within_accepted(letter: str, text: str, options: dict[str, str], accepted: set[str]) -> bool | None:
    """For an option whose words are all inside an accepted option's: whether ``text`` names that one in full.

    None when no accepted option contains it. "Potassium oxalate" inside the accepted "Potassium oxalate +
    sodium fluoride": a memory with both parts speaks of the accepted answer, one with the first part
    alone names another option.
    """
    mine = set(stems(options[letter]))
    wider = [a for a in accepted if mine < set(stems(options[a]))]
    if not wider:
        return None
    said = set(stems(text))
    return any(set(stems(options[a])) <= said for a in wider)


def accepted_option(evidence: Evidence) -> tuple[str, str] | None:
    """The option the source accepted (letter, text), when exactly one is clear."""
    options = parse_options(evidence.question)
    accepted = answers(evidence.source_said, evidence.model_rejected, options).accepted if options else set()
    if len(accepted) != 1:
        return None
    letter = next(iter(accepted))
    return letter, options[letter]
