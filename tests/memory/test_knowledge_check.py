"""The knowledge base's stance on a memory (memory.knowledge_check): pure text rules on hand-made passages."""

from __future__ import annotations

import pytest

from memory.knowledge_check import Stance, assess, clash, supports
from memory.knowledge_models import KnowledgeChunk, KnowledgeHit
from memory.wording import clauses

FILAMENTS = (
    "Tubulin is therefore a microtubule protein, not an intermediate filament protein. Colchicine acts on microtubules."
)
DROPS = (
    "Tropicamide eye drops are used at 0.5% or 1%; onset takes 20 to 30 minutes. "
    "Phenylephrine drops are used at 2.5% or 10%."
)
PUPIL = "Atropine does not constrict the pupil. Pilocarpine constricts the pupil by acting on the sphincter."


def _hit(text: str, section: str = "Notes", similarity: float = 0.7) -> KnowledgeHit:
    chunk = KnowledgeChunk(
        id=f"k-{section}",
        source_id="ks-1",
        source="guide.md",
        path="/g.md",
        section=section,
        version="v",
        index=0,
        text=text,
    )
    return KnowledgeHit(chunk=chunk, similarity=similarity)


def _clashes(memory: str, passage: str) -> list[str]:
    return [why for why in (clash(memory, c, passage) for c in clauses(passage)) if why]


@pytest.mark.parametrize(
    ("memory", "passage", "stance"),
    [
        # the passage says it (words and numbers): support
        ("Tubulin is a microtubule protein and not an intermediate filament.", FILAMENTS, Stance.SUPPORTS),
        ("Tropicamide eye drops are used at 0.5% to 1%.", DROPS, Stance.SUPPORTS),
        ("Pilocarpine constricts the pupil.", PUPIL, Stance.SUPPORTS),
        # "X is A, not B": asserting B of X contradicts it, though "protein" is said positively too
        ("Tubulin is an intermediate filament protein.", FILAMENTS, Stance.CONTRADICTS),
        # the memory negates what the passage asserts
        ("Colchicine does not act on microtubules.", FILAMENTS, Stance.CONTRADICTS),
        ("Pilocarpine does not constrict the pupil.", PUPIL, Stance.CONTRADICTS),
        # another number in the same frame
        ("Tropicamide eye drops are used at 50%.", DROPS, Stance.CONTRADICTS),
        ("Phenylephrine eye drops are used at 5%.", DROPS, Stance.CONTRADICTS),
        # nothing about it
        ("Vitamin B12 needs intrinsic factor.", DROPS, Stance.SILENT),
    ],
)
def test_stance(memory: str, passage: str, stance: Stance) -> None:
    assert assess(memory, [_hit(passage)]).stance is stance


def test_a_negation_said_of_another_subject_is_no_evidence_against() -> None:
    # "Atropine does not constrict the pupil" says nothing against pilocarpine doing so
    assert _clashes("Pilocarpine constricts the pupil.", PUPIL) == []


def test_a_number_clash_cites_the_clause_about_the_same_drug() -> None:
    # the tropicamide clause shares "eye drops are used" with it, but names another drug first
    (why,) = _clashes("Phenylephrine eye drops are used at 5%.", DROPS)
    assert "Phenylephrine drops are used at 2.5% or 10%" in why and "not 5" in why


def test_a_passage_about_something_else_never_clashes() -> None:
    # most of the memory's words must be in the passage: a passage on phenylephrine alone is silent on tropicamide
    assert _clashes("Tropicamide eye drops are used at 50%.", "Phenylephrine drops are used at 2.5% or 10%.") == []


def test_support_needs_every_number() -> None:
    assert supports("Tropicamide eye drops are used at 0.5% or 1%.", DROPS)
    assert not supports("Tropicamide eye drops are used at 0.5% or 2%.", DROPS)


def test_a_contradiction_outranks_support_and_names_its_passage() -> None:
    # one passage says it, another contradicts it: the reviewer must see the contradiction
    verdict = assess(
        "Tropicamide eye drops are used at 50%.",
        [_hit("Tropicamide eye drops are used at 50% in old texts.", "Old"), _hit(DROPS, "Current")],
    )
    assert verdict.stance is Stance.CONTRADICTS
    assert (verdict.citation, verdict.passage) == ("guide.md, Current", DROPS)
    assert verdict.describe().startswith("knowledge contradicts (guide.md, Current): the passage gives")
    assert assess("Tropicamide eye drops are used at 50%.", []).describe() == "knowledge: silent"
