"""The fact check matches verdicts by id; replies with bad ids or repeated JSON keys are repaired or rejected."""

from __future__ import annotations

import json
import logging

import pytest
from autogen_ext.models.replay import ReplayChatCompletionClient

from agents.checks import FactChecker, id_problem
from agents.schemas import JudgeReply
from agents.structured import DuplicateKeyError, call_structured, parse_reply, system, user

TEXTS = ["Tropicamide is used at 0.5%-1%.", "Tropicamide is used at 50%.", "The sky is green."]
EVIDENCE = "Tropicamide eye drops are 0.5% or 1%."


def _reply(*pairs: tuple[int, float]) -> str:
    return json.dumps({"checks": [{"n": n, "score": s} for n, s in pairs]})


async def _check(*replies: str) -> tuple[list[float | None], FactChecker, ReplayChatCompletionClient]:
    client = ReplayChatCompletionClient(list(replies))
    checker = FactChecker(client, "medicine")
    scores = await checker.check_all(TEXTS, EVIDENCE)
    return [None if s is None else s.score for s in scores], checker, client


async def test_verdicts_are_matched_by_number_not_by_position() -> None:
    # the model answers in reverse order: n=3 (the sky) is 0, n=1 (the true strength) is 1
    scores, checker, client = await _check('{"checks":[{"n":3,"score":0},{"n":2,"score":0},{"n":1,"score":1}]}')
    assert scores == [1.0, 0.0, 0.0]  # by position it would confirm "The sky is green." and contradict the truth
    assert checker.failures == [] and len(client.create_calls) == 1


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        (_reply((1, 1), (1, 0), (2, 0)), "missing n 3; repeated n 1"),
        (_reply((1, 1), (2, 0), (7, 0)), "missing n 3; unknown n 7"),
        (_reply((1, 1), (2, 0)), "checks"),  # too few entries: the schema's length check
    ],
)
async def test_missing_repeated_or_unknown_numbers_get_one_repair_then_rejection(
    bad: str, problem: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="mark.agents"):
        scores, checker, client = await _check(bad, bad)
    assert scores == [None, None, None]  # nothing is scored from a reply that cannot be matched
    assert len(client.create_calls) == 2
    assert len(checker.failures) == 1 and problem in checker.failures[0]
    assert f"veracity_checker: attempt 2 rejected: {checker.failures[0]}" in caplog.messages
    repair = str(client.create_calls[1]["messages"][-1].content)
    assert "not valid" in repair and problem in repair


async def test_a_repaired_reply_is_used() -> None:
    scores, checker, client = await _check(_reply((1, 1), (1, 0), (3, 0)), _reply((2, 0.5), (1, 1), (3, 0)))
    assert scores == [1.0, 0.5, 0.0] and checker.failures == [] and len(client.create_calls) == 2


def test_id_problem_names_each_fault() -> None:
    assert id_problem([2, 1, 3], 3) is None
    expected = "missing n 2, 3; repeated n 1; unknown n 9 (give exactly one check for each n from 1 to 3)"
    assert id_problem([1, 1, 9], 3) == expected


# --- repeated JSON keys ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '{"old_about": "a", "new_about": "b", "same_attribute": true, "same_value": false, "same_value": true}',
        '```json\n{"old_about": "a", "old_about": "c", "new_about": "b", "same_attribute": 1, "same_value": 1}\n```',
        'Sure: {"old_about": "a", "new_about": "b", "same_attribute": false, "same_attribute": true, "same_value": 1}',
    ],
)
def test_a_repeated_key_is_an_error_not_last_one_wins(text: str) -> None:
    with pytest.raises(DuplicateKeyError, match="duplicate JSON key"):
        parse_reply(text, JudgeReply)


def test_unique_keys_still_parse() -> None:
    reply = parse_reply('{"old_about": "a", "new_about": "b", "same_attribute": true, "same_value": false}', JudgeReply)
    assert reply.same_attribute and not reply.same_value


async def test_a_repeated_score_key_gets_the_repair_retry() -> None:
    twice = '{"checks":[{"n":1,"score":0,"score":1},{"n":2,"score":0},{"n":3,"score":0}]}'
    scores, _, client = await _check(twice, _reply((1, 1), (2, 0), (3, 0)))
    assert scores == [1.0, 0.0, 0.0] and len(client.create_calls) == 2
    repair = str(client.create_calls[1]["messages"][-1].content)
    assert "duplicate JSON key 'score'" in repair


async def test_a_reply_with_repeated_keys_twice_is_rejected_with_the_reason() -> None:
    twice = '{"old_about": "a", "new_about": "b", "same_attribute": true, "same_value": true, "same_value": false}'
    client = ReplayChatCompletionClient([twice, twice])
    outcome = await call_structured(client, "judge", [system("Judge."), user("JSON.")], JudgeReply)
    assert outcome.value is None and outcome.attempts == 2
    assert outcome.error == "duplicate JSON key 'same_value': give each key once"
