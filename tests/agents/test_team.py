"""The memory-building team (agents.team) on replay clients: order, gates, conflicts, bad outputs, review."""

from __future__ import annotations

import json

import pytest
from autogen_ext.models.replay import ReplayChatCompletionClient

from agents.building import BuildAction, BuildState, ReviewPolicy, Turn
from agents.reviewers import ReviewAction, ReviewDecision, ScriptedReviewer
from agents.steps import FACT_REASONS
from agents.team import build_memories
from memory.audit import EventKind
from memory.engine import MemoryEngine
from memory.models import MemoryType, Source, Status
from tests.conftest import NOW

TROPICAMIDE = [
    Turn(role="user", content="Concentration of tropicamide: a) 0.01 b) 0.02 c) 0.03 d) 0.04"),
    Turn(role="assistant", content="Common ophthalmic strengths are 0.5% and 1%, so none of the options fit."),
    Turn(role="sme", content="0.5%-1% is 0.005-0.01 as a decimal, so the answer is a) 0.01."),
    Turn(role="assistant", content="You are right: 0.5%-1% equals 0.005-0.01, so the answer is a) 0.01."),
]


def _memories(*texts: str) -> str:
    return json.dumps({"memories": [{"text": t, "category": "fact"} for t in texts]})


def _residual(fact: str, *more: str) -> str:
    return json.dumps({"corrected_fact": fact, "more_facts": list(more)})


def _response(topic: str, answer: str, reason: str = "", avoid: str = "") -> str:
    return json.dumps({"topic": topic, "final_answer": answer, "reason": reason, "avoid": avoid})


def _checks(*scores: float) -> str:
    return json.dumps(
        {"checks": [{"n": n, "score": s, "reason": "stated by the expert"} for n, s in enumerate(scores, 1)]}
    )


async def test_tropicamide_build_commits_each_type_and_fact_checks(engine: MemoryEngine) -> None:
    replies = [
        _residual("The concentration of tropicamide is 0.5%-1%, i.e. 0.005-0.01 as a decimal, so 0.01."),
        _memories("The user asked for the concentration of tropicamide as a decimal."),
        _response("tropicamide concentration", "A) 0.01", "0.5%-1% equals 0.005-0.01 as a decimal"),
        _checks(1.0, 0.5, 1.0, 1.0),
    ]
    client = ReplayChatCompletionClient(replies)
    state = BuildState(TROPICAMIDE, "sme-1", source=Source.SME, domain="medicine")
    await build_memories(engine, client, state)
    assert state.errors == []
    assert [t.split(":")[0] for t in state.trail] == [
        "extract_residual",
        "extract_user_question",
        "extract_llm_response",
        "truth_gate",
        "conflict_resolver",
        "veracity_checker",
        "committer",
    ]
    assert state.counts() == {
        "residual": {"committed": 1},
        "user_question": {"committed": 1},
        "llm_response": {"committed": 2},
    }
    assert len(client.create_calls) == 4  # 3 extractions + 1 batched fact check, no conflicts flagged
    prompts = [str(call["messages"][0].content) for call in client.create_calls]
    assert "residual" in prompts[0].lower() and "<conversation>" in prompts[0] and "0.005-0.01" in prompts[0]
    shared = engine.search("tropicamide concentration", "someone-else", now=NOW, k=3)
    assert [h.record.type for h in shared.all_hits()] == [MemoryType.RESIDUAL]
    report = state.report()
    assert report.usage.total.calls == 4 and report.extracted["llm_response"] == 2
    assert "2. The user asked for the concentration" in prompts[3]  # every memory numbered in one check
    texts = [o.text for o in state.outcomes]
    # the option letter is dropped: a paraphrase may letter the options differently
    assert "For tropicamide concentration, the accepted answer is 0.01." in texts
    assert "On tropicamide concentration: 0.5%-1% equals 0.005-0.01 as a decimal." in texts
    assert all(o.gate.startswith("supported") for o in state.outcomes)
    assert report.rejected == []
    assert [o.action for o in state.outcomes] == [BuildAction.COMMITTED] * 4
    assert not state.needs_review  # the graph went from the veracity checker straight to the committer
    # typed outcomes serialise to the plain strings the CLI prints and the scenario reports keep
    dumped = json.loads(json.dumps(report.as_json()))["outcomes"]
    assert [(o["action"], o["status"]) for o in dumped] == [("committed", "active")] * 4
    assert [c.fact_reason for c in state.candidates] == [FACT_REASONS[f] for f in (1.0, 0.5, 1.0, 1.0)]


async def test_malformed_reply_is_retried_then_rejected_without_storing(engine: MemoryEngine) -> None:
    replies = [
        '{"corrected_fact": "Tropicamide is used at 0.5',  # truncated JSON
        _residual("Tropicamide is 0.5%-1%, that is 0.005-0.01 as a decimal."),  # the repair retry succeeds
        "not json at all",
        '{"memories": []}',  # user-question extractor: rejected twice
        _response("tropicamide concentration", "A) 0.01"),
    ]
    client = ReplayChatCompletionClient(replies)
    state = BuildState(TROPICAMIDE, "u1", source=Source.USER, policy=ReviewPolicy.AUTO)
    await build_memories(engine, client, state)
    assert len(state.errors) == 1 and "extract_user_question: rejected after 2 attempt(s)" in state.errors[0]
    repair = str(client.create_calls[1]["messages"][-1].content)
    assert "not valid" in repair and "JSON" in repair
    assert {o.type for o in state.outcomes} == {MemoryType.RESIDUAL, MemoryType.LLM_RESPONSE}
    # residual from an untrusted user waits for review instead of reaching other users
    residual = next(o for o in state.outcomes if o.type is MemoryType.RESIDUAL)
    assert residual.action == "queued" and residual.status == Status.PENDING_REVIEW.value
    assert engine.search("tropicamide", "other-user", now=NOW, k=5).all_hits() == []


async def test_contradiction_judged_by_resolver_supersedes(engine: MemoryEngine) -> None:
    old = engine.add("The user prefers answers in percent", MemoryType.USER_QUESTION, "u2", now=NOW).record
    replies = [
        _residual("Decimal strengths like 0.01 are how this question is phrased."),
        _memories("The user prefers answers in decimals"),
        _response("tropicamide strength", "A) 0.01"),
        json.dumps(
            {"old_about": "answer format", "new_about": "answer format", "same_attribute": True, "same_value": False}
        ),
    ]
    client = ReplayChatCompletionClient(replies)
    # the user says the preference in so many words: a wish nobody voiced is refused (session 18)
    asked = [*TROPICAMIDE, Turn(role="user", content="From now on I'd prefer decimals, please.")]
    state = BuildState(asked, "u2", source=Source.USER, policy=ReviewPolicy.AUTO)
    await build_memories(engine, client, state)
    uq = next(o for o in state.outcomes if o.type is MemoryType.USER_QUESTION)
    assert uq.action == "superseded" and uq.superseded == [old.id]
    assert engine.get(old.id).status is Status.SUPERSEDED
    judge_prompt = str(client.create_calls[3]["messages"][0].content)
    assert "OLD: The user prefers answers in percent" in judge_prompt


async def test_reviewer_decisions_apply_and_nonsense_leaves_queued(engine: MemoryEngine) -> None:
    replies = [
        _residual("Tropicamide concentration is 0.5%-1%.", "A decimal answer is 0.01 for tropicamide."),
        _memories("The user asked for the concentration of tropicamide."),
        _response("tropicamide concentration", "A) 0.01"),
    ]
    reviewer = ScriptedReviewer(
        [
            {"action": "edit", "text": "Tropicamide eye drops are 0.5%-1% (0.005-0.01).", "reviewer": "dr-a"},
            {"action": "reject", "reason": "says the same as the first", "reviewer": "dr-a"},
            "what?",  # nonsense: that memory stays queued
        ]
    )
    client = ReplayChatCompletionClient(replies)
    state = BuildState(TROPICAMIDE, "u3", source=Source.USER, policy=ReviewPolicy.ALL)
    await build_memories(engine, client, state, reviewer)
    actions = [(o.type.value, o.action) for o in state.outcomes]
    # edit -> committed, reject -> rejected, nonsense -> queued, reviewer out of answers -> queued
    assert actions == [
        ("residual", "committed"),
        ("residual", "rejected"),
        ("user_question", "queued"),
        ("llm_response", "queued"),
    ]
    assert state.needs_review and [t.split(":")[0] for t in state.trail][-2:] == ["reviewer", "committer"]
    decisions = [c.decision for c in state.candidates]
    assert all(d is None or isinstance(d, ReviewDecision) for d in decisions)
    assert [d.action if d else None for d in decisions] == [ReviewAction.EDIT, ReviewAction.REJECT, None, None]
    assert state.outcomes[1].reason == "says the same as the first"
    edited = next(o for o in state.outcomes if o.action == "committed" and o.type is MemoryType.RESIDUAL)
    assert (
        edited.text.startswith("Tropicamide eye drops") and engine.get(edited.memory_id or "").status is Status.ACTIVE
    )
    assert any("left queued" in e for e in state.errors)


async def test_empty_conversation_is_refused(engine: MemoryEngine) -> None:
    with pytest.raises(ValueError, match="conversation is empty"):
        await build_memories(engine, ReplayChatCompletionClient([]), BuildState([Turn(role="user", content=" ")], "u"))


async def test_endpoint_failure_mid_team_commits_nothing_half_done(engine: MemoryEngine) -> None:
    client = ReplayChatCompletionClient([_residual("Tropicamide is 0.5%-1%, 0.005-0.01 as a decimal.")])  # runs dry
    state = BuildState(TROPICAMIDE, "u4", source=Source.USER)
    await build_memories(engine, client, state)
    assert any("model call failed" in e for e in state.errors)
    # what was extracted is still handled; the accepted answer the expert stated needs no model
    assert [o.type for o in state.outcomes] == [MemoryType.RESIDUAL, MemoryType.LLM_RESPONSE]
    assert state.outcomes[1].text == "For the question 'Concentration of tropicamide', the accepted answer is 0.01."


async def test_inverted_fact_is_refused_without_a_retry_and_the_experts_words_kept(engine: MemoryEngine) -> None:
    replies = [
        _residual("The concentration of tropicamide is 0.02, not 0.01."),  # contradicts what the expert said
        _memories("The user asked for the concentration of tropicamide."),
        _response("tropicamide concentration", "A) 0.01"),
        _checks(1.0, 1.0, 1.0),
    ]
    client = ReplayChatCompletionClient(replies)
    state = BuildState(TROPICAMIDE, "u5", source=Source.SME)
    await build_memories(engine, client, state)
    assert len(client.create_calls) == 4  # no repair call: the truth gate decides, deterministically
    assert [(r.reason.value, r.text) for r in state.rejected] == [
        ("other_option", "The concentration of tropicamide is 0.02, not 0.01.")
    ]
    texts = [o.text for o in state.outcomes]
    # the expert's own words, introduced by the question they answer
    assert "On 'Concentration of tropicamide': 0.5%-1% is 0.005-0.01 as a decimal, so the answer is 0.01." in texts
    assert "For tropicamide concentration, the accepted answer is 0.01." in texts
    assert not any("0.02" in t for t in texts)


async def test_wrong_accepted_answer_falls_back_to_the_answer_the_expert_stated(engine: MemoryEngine) -> None:
    replies = [
        _residual("Tropicamide drops are 0.5%-1%, i.e. 0.005-0.01, so the answer is A) 0.01."),
        _memories("The user asked for the concentration of tropicamide."),
        _response("tropicamide concentration", "B) 0.02"),  # a letter the expert never gave
    ]
    client = ReplayChatCompletionClient(replies)
    state = BuildState(TROPICAMIDE, "u6", source=Source.USER)
    await build_memories(engine, client, state)
    assert len(client.create_calls) == 3  # no repair call, and no fact check without trusted evidence
    assert [r.reason.value for r in state.rejected] == ["other_option"]
    texts = [o.text for o in state.outcomes]
    assert "For the question 'Concentration of tropicamide', the accepted answer is 0.01." in texts
    assert not any("0.02" in t for t in texts)


async def test_malformed_accepted_answer_is_still_retried(engine: MemoryEngine) -> None:
    replies = [
        _residual("Tropicamide drops are 0.5%-1%, i.e. 0.005-0.01, so the answer is A) 0.01."),
        _memories("The user reads options as decimals."),
        '{"topic": "tropicamide conc',  # truncated: retried even though a fallback exists
        _response("tropicamide concentration", "A) 0.01"),
        _checks(1.0, 1.0, 1.0),
    ]
    client = ReplayChatCompletionClient(replies)
    state = BuildState(TROPICAMIDE, "u7", source=Source.USER)
    await build_memories(engine, client, state)
    assert "not valid" in str(client.create_calls[3]["messages"][-1].content)
    assert "For tropicamide concentration, the accepted answer is 0.01." in [o.text for o in state.outcomes]


def test_schemas_sent_to_the_model_have_no_string_length_bounds() -> None:
    # llama.cpp compiles minLength/maxLength into huge grammars that make every token slow
    from agents.schemas import (
        Extraction,
        JudgeReply,
        KeyPoints,
        ResidualExtraction,
        ResponseExtraction,
        fact_check_batch,
    )

    for model in (Extraction, ResidualExtraction, ResponseExtraction, JudgeReply, KeyPoints, fact_check_batch(4)):
        schema = json.dumps(model.model_json_schema())
        assert "minLength" not in schema and "maxLength" not in schema, model.__name__
    with pytest.raises(ValueError, match="8 to 300 characters"):
        ResidualExtraction(corrected_fact="short")
    long = "Tropicamide drops are used at 0.5% to 1%. " + "This is filler text that goes on. " * 12
    clipped = ResidualExtraction(corrected_fact=long).corrected_fact
    assert len(clipped) <= 300 and clipped.startswith("Tropicamide drops are used at 0.5% to 1%.")
    assert clipped.endswith(".")


async def test_residual_falls_back_to_the_experts_own_words(engine: MemoryEngine) -> None:
    inverted_text = "The concentration of tropicamide is 0.03, not 0.01."
    inverted = _residual(inverted_text)
    replies = [
        inverted,
        _memories("The user asked for the concentration of tropicamide."),
        _response("tropicamide concentration", "A) 0.01"),
        _checks(1.0, 1.0, 1.0),
    ]
    state = BuildState(TROPICAMIDE, "sme-2", source=Source.SME)
    await build_memories(engine, ReplayChatCompletionClient(replies), state)
    residual = [o for o in state.outcomes if o.type is MemoryType.RESIDUAL]
    # the inverted fact is refused by the truth gate (audited); the expert's own words are stored
    # instead, and, as they do not name the question's topic, introduced by the question
    assert [o.text for o in residual] == [
        "On 'Concentration of tropicamide': 0.5%-1% is 0.005-0.01 as a decimal, so the answer is 0.01."
    ]
    assert [(r.reason.value, r.text) for r in state.rejected] == [("other_option", inverted_text)]
    assert any("residual memory from what the expert said" in n for n in state.notes)
    refused = engine.audit.memory_ids(EventKind.REJECT)
    assert {r.audit_id for r in state.rejected} <= refused
    untrusted = BuildState(TROPICAMIDE, "u-9", source=Source.USER)
    await build_memories(engine, ReplayChatCompletionClient(replies[:3]), untrusted)
    assert [o for o in untrusted.outcomes if o.type is MemoryType.RESIDUAL] == []


async def test_llm_response_falls_back_to_the_answer_the_expert_stated(engine: MemoryEngine) -> None:
    wrong_letter = _response("tropicamide strength", "B) 0.02")  # e.g. copied from the prompt's example
    replies = [
        _residual("Tropicamide drops are 0.5%-1%, so a) 0.01."),
        _memories("The user reads decimals."),
        wrong_letter,
        wrong_letter,
    ]
    state = BuildState(TROPICAMIDE, "u7", source=Source.USER)
    await build_memories(engine, ReplayChatCompletionClient(replies), state)
    answers = [o.text for o in state.outcomes if o.type is MemoryType.LLM_RESPONSE]
    assert answers == ["For the question 'Concentration of tropicamide', the accepted answer is 0.01."]
