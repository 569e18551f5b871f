"""The reviewer plug: decision rules, answer parsing, the four reviewers, and safe_review never crashing."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any, ClassVar

import pytest
from pydantic import ValidationError

from agents.reviewers import (
    CallableReviewer,
    ConsoleReviewer,
    HttpReviewer,
    ReviewAction,
    ReviewDecision,
    Reviewer,
    ReviewInputError,
    ReviewItem,
    ScriptedReviewer,
    format_item,
    parse_decision,
    safe_review,
)
from memory.models import MemoryType, Source
from tests.loopback import serve

ITEM = ReviewItem(
    memory_id="m1",
    text="Tropicamide is used at 5%",
    memory_type=MemoryType.RESIDUAL,
    user_id="__domain__",
    source=Source.USER,
    veracity=0.31,
    fact_check=0.2,
    fact_reason="usual strengths are 0.5% and 1%",
    conflicts=["Tropicamide concentration is 0.5 to 1 percent"],
    reason="low veracity from an untrusted user",
)


# --- the decision model ---------------------------------------------------------------------------


def test_review_item_takes_engine_enums_as_values() -> None:
    assert ITEM.memory_type == "residual" and ITEM.source == "user"
    assert json.loads(ITEM.model_dump_json())["memory_type"] == "residual"
    with pytest.raises(ValidationError):
        ReviewItem(text="x", memory_type="gossip", user_id="u", source="user", reason="r")


def test_edit_needs_text() -> None:
    with pytest.raises(ValidationError, match="edit needs"):
        ReviewDecision(action=ReviewAction.EDIT, reviewer="ann")
    with pytest.raises(ValidationError, match="edit needs"):
        ReviewDecision(action="edit", text="   ", reviewer="ann")
    assert ReviewDecision(action="edit", text="0.5%", reviewer="ann").text == "0.5%"


def test_reject_needs_reason() -> None:
    with pytest.raises(ValidationError, match="rejection needs"):
        ReviewDecision(action=ReviewAction.REJECT, reviewer="ann")
    with pytest.raises(ValidationError, match="rejection needs"):
        ReviewDecision(action="reject", reason=" ", reviewer="ann")
    assert ReviewDecision(action="reject", reason="wrong", reviewer="ann").reason == "wrong"


def test_text_is_only_for_edit_and_reviewer_is_required() -> None:
    with pytest.raises(ValidationError, match="only for edit"):
        ReviewDecision(action="approve", text="new", reviewer="ann")
    with pytest.raises(ValidationError, match="reviewer"):
        ReviewDecision(action="approve", reviewer=" ")
    with pytest.raises(ValidationError):
        ReviewDecision(action="maybe", reviewer="ann")
    assert ReviewDecision(action="approve", reviewer="ann").action is ReviewAction.APPROVE


# --- parse_decision -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "action", "text", "reason"),
    [
        ("a", "approve", None, ""),
        ("approve", "approve", None, ""),
        ("  APPROVE  ", "approve", None, ""),
        ("e Tropicamide is used at 0.5% to 1%", "edit", "Tropicamide is used at 0.5% to 1%", ""),
        ("edit one drop", "edit", "one drop", ""),
        ("r wrong strength", "reject", None, "wrong strength"),
        ("reject not a fact", "reject", None, "not a fact"),
        ('{"action": "edit", "text": "one drop"}', "edit", "one drop", ""),
        ({"action": "reject", "reason": "dup", "reviewer": "ignored", "extra": 1}, "reject", None, "dup"),
        ({"action": "Approve", "text": None}, "approve", None, ""),
        ({"action": "a"}, "approve", None, ""),
    ],
)
def test_parse_decision_accepted_forms(raw: str | dict[str, Any], action: str, text: str | None, reason: str) -> None:
    decision = parse_decision(raw, reviewer="ann")
    assert (decision.action, decision.text, decision.reason, decision.reviewer) == (action, text, reason, "ann")


@pytest.mark.parametrize(
    "raw",
    ["", "yes", "maybe later", "e", "edit   ", "r", "reject", "{not json", '{"action": "burn"}', "[1, 2]", {}],
)
def test_parse_decision_nonsense_lists_what_is_accepted(raw: str | dict[str, Any]) -> None:
    with pytest.raises(ReviewInputError, match="accepted: 'a' or 'approve'") as info:
        parse_decision(raw, reviewer="ann")
    assert isinstance(info.value, ValueError)


def test_parse_decision_invalid_json_is_named() -> None:
    with pytest.raises(ReviewInputError, match="not valid JSON"):
        parse_decision('{"action": ', reviewer="ann")


# --- scripted and callable ------------------------------------------------------------------------


async def test_scripted_reviewer_answers_in_order_and_records_items() -> None:
    reviewer = ScriptedReviewer(
        [ReviewDecision(action="approve", reviewer="boss"), {"action": "edit", "text": "one drop"}, "r duplicate"],
        name="script",
    )
    assert isinstance(reviewer, Reviewer)
    first, second, third = [await reviewer.review(ITEM) for _ in range(3)]
    assert (first.action, first.reviewer) == ("approve", "boss")
    assert (second.action, second.text, second.reviewer) == ("edit", "one drop", "script")
    assert (third.action, third.reason) == ("reject", "duplicate")
    assert reviewer.seen == [ITEM, ITEM, ITEM] and reviewer.remaining == 0
    with pytest.raises(ReviewInputError, match="ran out"):
        await reviewer.review(ITEM)
    assert reviewer.remaining == 0


async def test_callable_reviewer_sync() -> None:
    def decide(item: ReviewItem) -> str:
        return "r too low" if (item.veracity or 0) < 0.5 else "a"

    decision = await CallableReviewer(decide, name="rules").review(ITEM)
    assert (decision.action, decision.reason, decision.reviewer) == ("reject", "too low", "rules")


async def test_callable_reviewer_async() -> None:
    async def decide(item: ReviewItem) -> dict[str, str]:
        return {"action": "edit", "text": item.text.replace("5%", "0.5%")}

    decision = await CallableReviewer(decide, name="fixer").review(ITEM)
    assert (decision.action, decision.text) == ("edit", "Tropicamide is used at 0.5%")


async def test_callable_reviewer_wrong_type_is_an_input_error() -> None:
    with pytest.raises(ReviewInputError, match="answered a int"):
        await CallableReviewer(lambda item: 7, name="odd").review(ITEM)


# --- console --------------------------------------------------------------------------------------


def test_format_item_is_compact_and_complete() -> None:
    shown = format_item(ITEM)
    assert "m1" in shown and "low veracity" in shown and "veracity=0.31" in shown and "fact_check=0.20" in shown
    assert "Tropicamide is used at 5%" in shown and "conflicts with: Tropicamide concentration" in shown
    assert len(shown.splitlines()) == 4


async def test_console_reviewer_re_asks_on_nonsense_then_accepts() -> None:
    out = io.StringIO()
    reviewer = ConsoleReviewer(stream_in=io.StringIO("dunno\ne one drop of 0.5%\n"), stream_out=out, name="ann")
    decision = await reviewer.review(ITEM)
    assert (decision.action, decision.text, decision.reviewer) == ("edit", "one drop of 0.5%", "ann")
    shown = out.getvalue()
    assert "Tropicamide is used at 5%" in shown
    assert shown.count("decision [a | e <new text> | r <reason>]> ") == 2
    assert "unknown review answer 'dunno'" in shown


async def test_console_reviewer_gives_up_after_three_nonsense_answers() -> None:
    reviewer = ConsoleReviewer(stream_in=io.StringIO("x\ny\nz\na\n"), stream_out=io.StringIO())
    with pytest.raises(ReviewInputError, match="no valid decision in 3 attempts"):
        await reviewer.review(ITEM)


async def test_console_reviewer_eof_is_an_input_error() -> None:
    with pytest.raises(ReviewInputError, match="closed"):
        await ConsoleReviewer(stream_in=io.StringIO(""), stream_out=io.StringIO()).review(ITEM)


# --- http -----------------------------------------------------------------------------------------


class _ReviewHandler(BaseHTTPRequestHandler):
    """A tiny remote reviewer: /approve, /edit, /nonsense (valid JSON, bad decision), /500."""

    received: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).received.append(body)
        answers = {
            "/approve": (200, {"action": "approve"}),
            "/edit": (200, {"action": "edit", "text": body["text"].replace("5%", "0.5%")}),
            "/nonsense": (200, {"action": "shrug"}),
            "/500": (500, {"error": "boom"}),
        }
        status, payload = answers[self.path]
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def review_server() -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 in a thread; yields its base URL."""
    _ReviewHandler.received = []
    with serve(_ReviewHandler) as url:
        yield url


async def test_http_reviewer_posts_the_item_and_parses_the_decision(review_server: str) -> None:
    reviewer = HttpReviewer(f"{review_server}/edit", timeout_s=5, name="remote")
    decision = await reviewer.review(ITEM)
    assert (decision.action, decision.text, decision.reviewer) == ("edit", "Tropicamide is used at 0.5%", "remote")
    assert _ReviewHandler.received == [ITEM.model_dump(mode="json")]
    approved = await HttpReviewer(f"{review_server}/approve", timeout_s=5).review(ITEM)
    assert approved.action == "approve" and approved.reviewer == f"{review_server}/approve"


async def test_http_reviewer_errors_are_one_clear_line(review_server: str) -> None:
    url = f"{review_server}/500"
    with pytest.raises(ReviewInputError, match="HTTP 500") as info:
        await HttpReviewer(url, timeout_s=5).review(ITEM)
    assert url in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(ReviewInputError, match="invalid review decision"):
        await HttpReviewer(f"{review_server}/nonsense", timeout_s=5).review(ITEM)


def test_http_reviewer_rejects_non_http_urls() -> None:
    with pytest.raises(ValueError, match="http"):
        HttpReviewer("file:///etc/passwd")


# --- safe_review ----------------------------------------------------------------------------------


async def test_safe_review_passes_valid_decisions_through() -> None:
    decision = await safe_review(ScriptedReviewer(["a"]), ITEM)
    assert decision is not None and decision.action is ReviewAction.APPROVE


async def test_safe_review_returns_none_on_nonsense(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="mark.agents.reviewers"):
        assert await safe_review(ScriptedReviewer(["maybe?"], name="shaky"), ITEM) is None
    assert "shaky" in caplog.text and "m1" in caplog.text and "left queued" in caplog.text


async def test_safe_review_returns_none_on_errors(caplog: pytest.LogCaptureFixture, review_server: str) -> None:
    def crash(item: ReviewItem) -> str:
        raise RuntimeError("database on fire")

    class Liar:
        name = "liar"

        async def review(self, item: ReviewItem) -> ReviewDecision:
            return "approve"  # type: ignore[return-value]

    with caplog.at_level(logging.WARNING, logger="mark.agents.reviewers"):
        assert await safe_review(CallableReviewer(crash, name="crashy"), ITEM) is None
        assert await safe_review(ScriptedReviewer([]), ITEM) is None
        assert await safe_review(HttpReviewer(f"{review_server}/500", timeout_s=5), ITEM) is None
        assert await safe_review(ConsoleReviewer(io.StringIO(""), io.StringIO()), ITEM) is None
        assert await safe_review(Liar(), ITEM) is None
    assert "database on fire" in caplog.text and "HTTP 500" in caplog.text and "liar" in caplog.text
    assert len(caplog.records) == 5


async def test_safe_review_times_out_slow_reviewers(caplog: pytest.LogCaptureFixture) -> None:
    async def slow(item: ReviewItem) -> str:
        await asyncio.sleep(5)
        return "a"

    with caplog.at_level(logging.WARNING, logger="mark.agents.reviewers"):
        assert await safe_review(CallableReviewer(slow, name="sloth"), ITEM, timeout_s=0.05) is None
    assert "timed out" in caplog.text
