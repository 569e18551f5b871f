"""The team's steps one at a time on a real engine: typed decisions in, typed outcomes and routing out."""

from __future__ import annotations

import json

from autogen_ext.models.replay import ReplayChatCompletionClient

from agents.building import BuildAction, BuildState, Candidate, ReviewPolicy, Turn
from agents.reviewers import ReviewAction, ReviewDecision
from agents.steps import committer_step, veracity_step
from memory.engine import MemoryEngine
from memory.models import Category, MemoryType, Source, Status

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
    # a rejected candidate is never written: no id, no status, the reviewer's reason kept
    assert (rejected.memory_id, rejected.status, rejected.reason) == (None, None, "never said")
    # no reviewer decided: the memory waits for one, with the policy's reason
    assert queued.status is Status.PENDING_REVIEW and queued.reason == gated
    assert engine.get(queued.memory_id or "").status is Status.PENDING_REVIEW
    # the edit's text is what is stored
    assert edited.text == "The user asks about tropicamide drops."
    assert engine.get(edited.memory_id or "").text == "The user asks about tropicamide drops."
    assert merged.memory_id == stored.id  # the same text merges into the stored memory
    assert report == "committed: user_question {'committed': 1, 'merged': 1, 'queued': 1, 'rejected': 1}"
    assert state.counts() == {"user_question": {"rejected": 1, "queued": 1, "committed": 1, "merged": 1}}


def _checks(*scores: float) -> str:
    return json.dumps({"checks": [{"n": n, "score": s} for n, s in enumerate(scores, 1)]})


async def test_veracity_checker_sets_the_field_the_graph_routes_on() -> None:
    state = BuildState(TURNS, "sme-1", source=Source.SME)
    state.candidates = [_candidate("The user asks about eye drops."), _candidate("The user asks in decimals.")]
    report = await veracity_step(ReplayChatCompletionClient([_checks(1.0, 0.5)]))(state)
    assert (state.needs_review, report) == (False, "no review needed")

    state.candidates.append(_candidate("The user wants percentages."))
    report = await veracity_step(ReplayChatCompletionClient([_checks(1.0, 0.5, 0.0)]))(state)
    # F = 0: the fact check contradicts the third memory, so it goes to a reviewer
    assert [c.review_reason for c in state.candidates] == ["", "", "the fact check contradicts it"]
    assert (state.needs_review, report) == (True, "review: 1 memory(ies) need a reviewer")
