"""The team's steps one at a time on a real engine: typed decisions in, typed outcomes and routing out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from autogen_ext.models.replay import ReplayChatCompletionClient

from agents.building import BuildAction, BuildState, Candidate, ReviewPolicy, Turn
from agents.reviewers import ReviewAction, ReviewDecision
from agents.steps import committer_step, veracity_step
from memory.config import KnowledgeConfig
from memory.engine import MemoryEngine
from memory.knowledge_check import Stance
from memory.models import Category, MemoryType, Source, Status
from tests.conftest import NOW

TURNS = [
    Turn(role="user", content="Concentration of tropicamide: a) 0.01 b) 0.02"),
    Turn(role="assistant", content="It is b) 0.02."),
    Turn(role="sme", content="No: 0.5%-1% is 0.005-0.01 as a decimal, so the answer is a) 0.01."),
]


def _candidate(text: str, decision: ReviewDecision | None = None, review_reason: str = "") -> Candidate:
    return Candidate(
        type=MemoryType.USER_QUESTION,
        text=text,
        category=Category.PREFERENCE,
        review_reason=review_reason,
        decision=decision,
    )


async def test_committer_turns_typed_decisions_into_typed_outcomes(engine: MemoryEngine) -> None:
    stored = engine.add("The user wants drug strengths as decimals.", MemoryType.USER_QUESTION, "u1").record
    state = BuildState(TURNS, "u1", source=Source.SME, policy=ReviewPolicy.ALL)
    gated = "policy: review all"
    state.candidates = [
        _candidate(
            "The user dislikes percentages.",
            ReviewDecision(action=ReviewAction.REJECT, reason="never said", reviewer="dr-a"),
            gated,
        ),
        _candidate("The user asks about eye drops.", None, gated),
        _candidate(
            "The user asks about eye drop strengths.",
            ReviewDecision(action=ReviewAction.EDIT, text="The user asks about tropicamide drops.", reviewer="dr-a"),
            gated,
        ),
        _candidate("The user wants drug strengths as decimals."),  # restates the stored memory
    ]
    report = await committer_step(engine)(state)
    rejected, queued, edited, merged = state.outcomes
    assert [o.action for o in state.outcomes] == [
        BuildAction.REJECTED,
        BuildAction.QUEUED,
        BuildAction.COMMITTED,
        BuildAction.MERGED,
    ]
    # a rejected candidate is kept, archived and labelled bad, with the reviewer's decision audited
    assert (rejected.status, rejected.reason) == (Status.ARCHIVED, "never said")
    kept = engine.get(rejected.memory_id or "")
    assert (kept.status, kept.classification.value, kept.text) == (
        Status.ARCHIVED,
        "bad",
        "The user dislikes percentages.",
    )
    last = engine.history(kept.id)[-1]
    assert (last.kind.value, last.actor, last.detail["reason"]) == ("review", "reviewer:dr-a", "never said")
    # no reviewer decided: the memory waits for one, with the policy's reason
    assert queued.status is Status.PENDING_REVIEW and queued.reason == gated
    assert engine.get(queued.memory_id or "").status is Status.PENDING_REVIEW
    # the edit's text is what is stored, and the text before it is in the audited edit
    assert edited.text == "The user asks about tropicamide drops."
    assert engine.get(edited.memory_id or "").text == "The user asks about tropicamide drops."
    edit = engine.history(edited.memory_id or "")[-1]
    assert (edit.kind.value, edit.actor, edit.detail["before"]) == (
        "edit",
        "reviewer:dr-a",
        "The user asks about eye drop strengths.",
    )
    assert merged.memory_id == stored.id  # the same text merges into the stored memory
    assert report == "committed: user_question {'committed': 1, 'merged': 1, 'queued': 1, 'rejected': 1}"
    assert state.counts() == {"user_question": {"rejected": 1, "queued": 1, "committed": 1, "merged": 1}}


def _checks(*scores: float) -> str:
    return json.dumps({"checks": [{"n": n, "score": s} for n, s in enumerate(scores, 1)]})


async def test_veracity_checker_sets_the_field_the_graph_routes_on(engine: MemoryEngine) -> None:
    state = BuildState(TURNS, "sme-1", source=Source.SME)
    state.candidates = [_candidate("The user asks about eye drops."), _candidate("The user asks in decimals.")]
    report = await veracity_step(engine, ReplayChatCompletionClient([_checks(1.0, 0.5)]))(state)
    assert (state.needs_review, report) == (False, "no review needed")

    state.candidates.append(_candidate("The user wants percentages."))
    report = await veracity_step(engine, ReplayChatCompletionClient([_checks(1.0, 0.5, 0.0)]))(state)
    # F = 0: the fact check contradicts the third memory, so it goes to a reviewer
    assert [c.review_reason for c in state.candidates] == ["", "", "the fact check contradicts it"]
    assert (state.needs_review, report) == (True, "review: 1 memory(ies) need a reviewer")


GUIDE = """# Tropicamide

Tropicamide eye drops are used at 0.5% or 1%; the pupil dilates within 20 to 30 minutes.

# Glasgow Coma Scale

The scale scores eye opening, verbal response and motor response.
"""

RIGHT = "Tropicamide eye drops are used at 0.5% or 1%."
WRONG = "Tropicamide eye drops are used at 50%."


@pytest.fixture
def guided(engine: MemoryEngine, tmp_path: Path) -> MemoryEngine:
    """The engine with GUIDE in its knowledge base (floors for the hashing embedder)."""
    guide = tmp_path / "guide.md"
    guide.write_text(GUIDE, encoding="utf-8")
    engine.knowledge.config = KnowledgeConfig(inject_min_similarity=0.05, inject_margin=1.0)
    engine.knowledge.add([guide], now=NOW)
    return engine


async def test_the_knowledge_base_is_evidence_for_the_fact_check_and_the_review_policy(guided: MemoryEngine) -> None:
    engine = guided
    state = BuildState(TURNS, "sme-1", source=Source.SME)
    state.candidates = [
        Candidate(
            type=MemoryType.RESIDUAL, text="Tropicamide eye drops are used at 0.5% or 1%.", category=Category.FACT
        ),
        Candidate(type=MemoryType.RESIDUAL, text="Tropicamide eye drops are used at 50%.", category=Category.FACT),
    ]
    client = ReplayChatCompletionClient([_checks(1.0, 0.5)])
    report = await veracity_step(engine, client)(state)
    supported, contradicted = state.candidates
    assert supported.knowledge is not None and supported.knowledge.stance is Stance.SUPPORTS
    assert contradicted.knowledge is not None and contradicted.knowledge.stance is Stance.CONTRADICTS
    # a memory the knowledge base contradicts goes to a reviewer, with the passage beside it
    assert supported.review_reason == ""
    assert contradicted.review_reason.startswith("contradicts the knowledge base (guide.md, Tropicamide)")
    assert "0.5% or 1%" in contradicted.review_reason
    assert (state.needs_review, report) == (True, "review: 1 memory(ies) need a reviewer")
    # the passages were in the fact check's evidence, and the build says how much evidence it had
    sent = "\n".join(str(m.content) for m in client.create_calls[0]["messages"])
    assert "Reference passages from the knowledge base" in sent and "[guide.md, Tropicamide]" in sent
    stats = state.evidence_stats
    assert (stats.candidates, stats.with_passages, stats.supported, stats.contradicted) == (2, 2, 1, 1)
    assert stats.fact_checks == {"1.0": 1, "0.5": 1}


async def test_a_write_the_knowledge_base_contradicts_waits_for_a_reviewer(
    engine: MemoryEngine, tmp_path: Path
) -> None:
    guide = tmp_path / "guide.md"
    guide.write_text(GUIDE, encoding="utf-8")
    engine.knowledge.config = KnowledgeConfig(inject_min_similarity=0.05, inject_margin=1.0)
    engine.knowledge.add([guide], now=NOW)
    # the same policy for every entry point: an SME's shared memory would be active at once, but not this one
    wrong = engine.add(
        "Tropicamide eye drops are used at 50%.", MemoryType.RESIDUAL, "dr-a", source=Source.SME, now=NOW
    )
    right = engine.add(
        "Tropicamide eye drops are used at 0.5% or 1%.", MemoryType.RESIDUAL, "dr-a", source=Source.SME, now=NOW
    )
    assert wrong.record.status is Status.PENDING_REVIEW
    assert right.record.status is Status.ACTIVE
    created = engine.history(wrong.record.id)[0]
    assert created.detail["knowledge"].startswith("knowledge contradicts (guide.md, Tropicamide)")
    # a supporting passage is a trusted neighbour: it raises the consistency term of veracity
    plain = engine.add("Atropine drops last up to two weeks.", MemoryType.RESIDUAL, "dr-a", source=Source.SME, now=NOW)
    assert right.record.veracity > plain.record.veracity
