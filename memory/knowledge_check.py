"""Knowledge as evidence about a memory: does a passage support it, contradict it, or say nothing? Pure.

The knowledge base holds a team's reviewed documents, so it is the trusted source VeriMem checks
memories against (seed 002): when a memory is written (the truth gate and the veracity checker of the
building team) and when it is re-checked (:mod:`memory.recheck`). This module only reads text; the
caller finds the passages (:meth:`memory.knowledge.KnowledgeBase.search_many`).

Words are compared as the truth gate compares them (:mod:`memory.wording`: content-word stems, numbers
whole, negation scopes). For one memory and the passages found for it, best first:

- **contradicts**: a clause of a passage shares most of the memory's words (``FRAME_SHARE``) and
  either negates what the memory asserts, or asserts what the memory negates ("X acts on Y" against
  "X does not act on Y"), or gives another number in the same frame (the memory says 50%, the
  passage 0.5% to 1%, and no number of the memory is in the passage);
- **supports**: no passage contradicts it, and one passage holds ``SUPPORT_SHARE`` of the memory's
  words and every number it states;
- **silent**: neither (no passage is about it, or one is about it but says something else).

A contradiction outranks support: a memory that one passage supports and another contradicts goes to
a reviewer with both texts. A false "contradicts" costs a review, a false "supports" a trust boost the
memory does not deserve, so support asks for more words than a contradiction.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from memory.knowledge_models import KnowledgeHit
from memory.wording import clauses, exact, negated_stems, negation_subject, positive_text, stems

FRAME_SHARE = 0.6  # share of the memory's word stems a passage clause must hold to be about the same thing
SUPPORT_SHARE = 0.8  # share of the memory's stems (numbers all) a passage must hold to support it


class Stance(StrEnum):
    """What the knowledge base says about a memory."""

    SUPPORTS = "supports"
    CONTRADICTS = "contradicts"
    SILENT = "silent"


class KnowledgeVerdict(BaseModel):
    """The knowledge base's stance on one memory, with the passage that decided it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    stance: Stance
    passage_id: str = ""
    citation: str = ""
    passage: str = ""  # the passage's text (one line), shown to a reviewer beside the memory
    similarity: float = 0.0
    detail: str = ""

    def describe(self) -> str:
        """One line for reports, the audit log and the review queue."""
        if self.stance is Stance.SILENT:
            return "knowledge: silent"
        return f"knowledge {self.stance.value} ({self.citation}): {self.detail}"


def _words(text: str) -> set[str]:
    return {s for s in stems(text) if not exact(s)}


def _numbers(text: str) -> set[str]:
    return {s for s in stems(text) if exact(s)}


def _positive(text: str) -> set[str]:
    """Stems a text asserts somewhere outside a negation."""
    return set(stems(positive_text(text)))


def _negated(text: str) -> set[str]:
    """Stems a text only ever negates ("a microtubule protein, not a filament protein" negates filament only)."""
    return negated_stems(text) - _positive(text)


def _same_subject(negating: str, other: set[str]) -> bool:
    """Whether what a negation is said of (the words before it) is named in the other text too."""
    subject = negation_subject(negating)
    return bool(subject & other) if subject else True


def clash(memory: str, clause: str, passage: str) -> str:
    """Why a clause of ``passage`` contradicts a memory about the same thing ("" when it does not).

    The passage must hold most of the memory's words (``SUPPORT_SHARE``) and the clause a
    ``FRAME_SHARE`` of them: a passage about another drug is not evidence against this one.
    """
    mine = _words(memory)
    held, said = _words(passage), _words(clause)
    if not mine or len(mine & held) < SUPPORT_SHARE * len(mine) or len(mine & said) < FRAME_SHARE * len(mine):
        return ""
    shared = mine & said
    if _negated(clause) & _positive(memory) & shared and _same_subject(clause, mine):
        return f"the passage negates it: {clause!r}"
    if _negated(memory) & _positive(clause) & shared and _same_subject(memory, said):
        return f"the passage asserts what it negates: {clause!r}"
    numbers, theirs = _numbers(memory), _numbers(clause)
    head = next((w for w in stems(memory) if not exact(w)), "")
    about = head in said or mine <= said  # the clause names what the memory is about (its first word)
    if numbers and theirs and about and not numbers & _numbers(passage):
        return f"the passage gives {', '.join(sorted(theirs))}, not {', '.join(sorted(numbers))}: {clause!r}"
    return ""


def supports(memory: str, passage: str) -> bool:
    """Whether a passage holds most of a memory's words and every number it states."""
    mine, numbers = _words(memory), _numbers(memory)
    if not mine:
        return False
    held = _words(passage)
    return len(mine & held) >= SUPPORT_SHARE * len(mine) and numbers <= _numbers(passage)


def assess(memory: str, hits: Sequence[KnowledgeHit]) -> KnowledgeVerdict:
    """The knowledge base's stance on ``memory`` from the passages found for it (best first)."""
    for hit in hits:
        for clause in clauses(hit.chunk.text):
            why = clash(memory, clause, hit.chunk.text)
            if why:
                return _verdict(Stance.CONTRADICTS, hit, why)
    for hit in hits:
        if supports(memory, hit.chunk.text):
            return _verdict(Stance.SUPPORTS, hit, "the passage states it")
    return KnowledgeVerdict(stance=Stance.SILENT)


def _verdict(stance: Stance, hit: KnowledgeHit, detail: str) -> KnowledgeVerdict:
    return KnowledgeVerdict(
        stance=stance,
        passage_id=hit.chunk.id,
        citation=hit.chunk.citation(),
        passage=hit.chunk.text,
        similarity=hit.similarity,
        detail=detail,
    )
