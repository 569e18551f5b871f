"""The truth gate's vocabulary: the evidence a candidate is checked against, and the verdict.

Shared by :mod:`memory.grounding` (the gate) and :mod:`memory.option_gate` (what a memory may say of a
multiple-choice question's options).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from memory.wording import clauses, stems, words

UNSAID_SHARE = 0.25  # the share of a memory's content words its source may not vouch for


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
    SWAPPED_SUBJECT = "swapped_subject"
    MISREPORTED = "misreported"
    OFF_TOPIC = "off_topic"


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
    def model_final(self) -> list[str]:
        """The chatbot's turns after the source's last word (its acknowledgement of a correction)."""
        return self.model_said[len(self.model_rejected) :]

    @property
    def has_source_statement(self) -> bool:
        """True when the source said anything after the opening question."""
        return any(s.strip() for s in self.source_said)


def support_sentences(memory: str, texts: Sequence[str]) -> list[tuple[float, str]]:
    """Each source clause with the share of the memory's stems it covers, best first."""
    mine = set(stems(memory))
    if not mine:
        return []
    scored = [(len(mine & set(stems(c))) / len(mine), c) for text in texts for c in clauses(text)]
    return sorted(scored, key=lambda pair: -pair[0])


def example_pairs(flat: str, evidence: Evidence) -> str | None:
    """Pairs of neighbouring content words (two at least) that the prompt's example has and nobody here said.

    "absence seizures" is the example's topic, copied into a memory of a conversation about juvenile
    myoclonic epilepsy whose expert said "carbamazepine can worsen it" and spoke of "atypical absences".
    """
    example = _pairs(evidence.example)
    said = _pairs(" ".join([evidence.question, *evidence.user_said, *evidence.model_said, evidence.reference]))
    copied = sorted(f"{a} {b}" for a, b in _pairs(flat) if (a, b) in example and (a, b) not in said)
    return ", ".join(copied) if len(copied) >= 2 else None  # one pair may be chance ("line drug")


def _pairs(text: str) -> set[tuple[str, str]]:
    """Neighbouring content words of ``text``."""
    return set(itertools.pairwise(words(text)))
