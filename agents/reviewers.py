"""The reviewer plug for the review queue (spec H2): who approves, edits or rejects a queued memory.

A reviewer is anything with a ``name`` and ``async def review(item) -> ReviewDecision`` (the
:class:`Reviewer` protocol). Four come with the project: :class:`ScriptedReviewer` (scenario files,
tests), :class:`CallableReviewer` (any function), :class:`ConsoleReviewer` (a person at a terminal) and
:class:`HttpReviewer` (a remote service). Answers may be a :class:`ReviewDecision`, a dict / JSON object
``{"action": "approve|edit|reject", "text": ..., "reason": ...}`` or terse console text (see
:func:`parse_decision`).

Callers use :func:`safe_review`: a reviewer that fails or answers nonsense yields ``None`` and a logged
warning, and the memory simply stays queued for later. Applying and auditing a decision is the memory
engine's job (``memory.review``), not this module's.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import IO, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agents.human import HttpJsonError, call_maybe_async, check_http_url, post_json, run_blocking
from mark.errors import InputError

log = logging.getLogger("mark.agents.reviewers")

ACCEPTED_FORMS = (
    "'a' or 'approve'; 'e <new text>' or 'edit <new text>'; 'r <reason>' or 'reject <reason>'; "
    'or JSON {"action": "approve|edit|reject", "text": "...", "reason": "..."}'
)


class ReviewInputError(InputError):
    """A reviewer's answer could not be turned into a valid decision, or the reviewer could not answer."""


class ReviewItem(BaseModel):
    """One queued memory as a reviewer sees it, with the evidence for why it is queued."""

    model_config = ConfigDict(extra="forbid")

    memory_id: str | None = None
    text: str
    memory_type: Literal["residual", "user_question", "llm_response"]
    user_id: str
    source: str
    veracity: float | None = None
    fact_check: float | None = None
    fact_reason: str = ""
    conflicts: list[str] = Field(default_factory=list)
    reason: str

    @field_validator("memory_type", "source", mode="before")
    @classmethod
    def _enum_value(cls, value: Any) -> Any:
        """Accept the engine's str enums (``MemoryType``, ``Source``) as their values."""
        return getattr(value, "value", value)


class ReviewAction(StrEnum):
    """What a reviewer may do with a queued memory."""

    APPROVE = "approve"
    EDIT = "edit"
    REJECT = "reject"


class ReviewDecision(BaseModel):
    """A reviewer's verdict: edit needs the new text, reject needs a reason, text is only for edit."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    action: ReviewAction
    text: str | None = None
    reason: str = ""
    reviewer: str

    @model_validator(mode="after")
    def _check_rules(self) -> ReviewDecision:
        if not self.reviewer.strip():
            raise ValueError("a decision needs the reviewer's name")
        if self.action is ReviewAction.EDIT and not (self.text or "").strip():
            raise ValueError("an edit needs the new, non-empty text")
        if self.action is not ReviewAction.EDIT and self.text is not None:
            raise ValueError(f"text is only for edit, not {self.action.value}")
        if self.action is ReviewAction.REJECT and not self.reason.strip():
            raise ValueError("a rejection needs a non-empty reason")
        return self


@runtime_checkable
class Reviewer(Protocol):
    """Anything that can decide on a queued memory."""

    name: str

    async def review(self, item: ReviewItem) -> ReviewDecision:
        """Decide on ``item``; raise :class:`ReviewInputError` when no valid decision can be given."""
        ...


_TERSE = {"a": ReviewAction.APPROVE, "e": ReviewAction.EDIT, "r": ReviewAction.REJECT}


def _terse(raw: str) -> dict[str, Any]:
    """'a' / 'e <text>' / 'r <reason>' (or the full words) as a decision dict."""
    word, _, rest = raw.strip().partition(" ")
    word, rest = word.lower(), rest.strip()
    action = _TERSE.get(word) or next((a for a in ReviewAction if a.value == word), None)
    if action is None:
        raise ReviewInputError(f"unknown review answer {raw.strip()[:60]!r}; accepted: {ACCEPTED_FORMS}")
    if action is ReviewAction.EDIT:
        return {"action": action, "text": rest}
    return {"action": action, "reason": rest}


def parse_decision(raw: str | dict[str, Any], reviewer: str) -> ReviewDecision:
    """Turn a reviewer's answer (dict, JSON text or terse console text) into a valid decision.

    Raises :class:`ReviewInputError` with a message listing the accepted forms when it cannot.
    """
    answer: object = raw
    if isinstance(raw, str) and raw.strip().startswith("{"):
        try:
            answer = json.loads(raw)
        except ValueError:
            raise ReviewInputError(
                f"review answer is not valid JSON: {raw.strip()[:60]!r}; accepted: {ACCEPTED_FORMS}"
            ) from None
    if isinstance(answer, str):
        fields = _terse(answer)
    elif isinstance(answer, dict):
        fields = {key: answer[key] for key in ("action", "text", "reason") if key in answer}
        action = fields.get("action")
        if isinstance(action, str) and not isinstance(action, ReviewAction):
            fields["action"] = _TERSE.get(action.strip().lower(), action.strip().lower())
    else:
        raise ReviewInputError(f"review answer is a {type(answer).__name__}; accepted: {ACCEPTED_FORMS}")
    try:
        return ReviewDecision(**fields, reviewer=reviewer)
    except ValidationError as exc:
        problems = "; ".join(str(err["msg"]).removeprefix("Value error, ") for err in exc.errors())
        raise ReviewInputError(f"invalid review decision ({problems}); accepted: {ACCEPTED_FORMS}") from None


def _as_decision(answer: object, reviewer: str) -> ReviewDecision:
    """Accept a decision as a model, a dict or a string."""
    if isinstance(answer, ReviewDecision):
        return answer
    if isinstance(answer, str | dict):
        return parse_decision(answer, reviewer)
    raise ReviewInputError(f"reviewer {reviewer!r} answered a {type(answer).__name__}; accepted: {ACCEPTED_FORMS}")


class ScriptedReviewer:
    """Answers from a fixed list (scenario files, tests) and records every item it was shown.

    Entries are parsed when used, so a nonsense entry behaves like a nonsense answer from a person.
    """

    def __init__(self, decisions: Sequence[ReviewDecision | dict[str, Any] | str], name: str = "scripted") -> None:
        """Answer with ``decisions`` in order; raise :class:`ReviewInputError` when they run out."""
        self.name = name
        if isinstance(decisions, str):
            raise TypeError("ScriptedReviewer takes a sequence of decisions, not one string")
        self._decisions = list(decisions)
        self._next = 0
        self.seen: list[ReviewItem] = []

    @property
    def remaining(self) -> int:
        """How many scripted decisions have not been used yet."""
        return len(self._decisions) - self._next

    async def review(self, item: ReviewItem) -> ReviewDecision:
        """Return the next scripted decision."""
        self.seen.append(item)
        if self._next >= len(self._decisions):
            raise ReviewInputError(f"reviewer {self.name!r} ran out of scripted decisions after {self._next}")
        answer = self._decisions[self._next]
        self._next += 1
        return _as_decision(answer, self.name)


class CallableReviewer:
    """Wraps any sync or async ``fn(item) -> ReviewDecision | dict | str``."""

    def __init__(self, fn: Callable[[ReviewItem], Any], name: str) -> None:
        """Ask ``fn`` for every decision; sync functions run in a worker thread."""
        self.fn = fn
        self.name = name

    async def review(self, item: ReviewItem) -> ReviewDecision:
        """Return ``fn(item)`` as a checked decision."""
        return _as_decision(await call_maybe_async(self.fn, item), self.name)


def format_item(item: ReviewItem) -> str:
    """A compact, human-readable view of a queued memory."""

    def score(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"

    lines = [
        f"--- review {item.memory_id or '(new)'}: {item.reason}",
        f"[{item.memory_type}] user={item.user_id} source={item.source} "
        f"veracity={score(item.veracity)} fact_check={score(item.fact_check)}"
        + (f" ({item.fact_reason})" if item.fact_reason else ""),
        f"text: {item.text}",
    ]
    lines += [f"  conflicts with: {conflict}" for conflict in item.conflicts]
    return "\n".join(lines) + "\n"


class ConsoleReviewer:
    """A person at a terminal: shows the item, reads 'a', 'e <text>' or 'r <reason>', re-asks on nonsense."""

    def __init__(
        self,
        stream_in: IO[str] | None = None,
        stream_out: IO[str] | None = None,
        name: str = "console",
        max_attempts: int = 3,
    ) -> None:
        """Read from ``stream_in`` (default stdin), write to ``stream_out`` (default stdout)."""
        self.stream_in = stream_in if stream_in is not None else sys.stdin
        self.stream_out = stream_out if stream_out is not None else sys.stdout
        self.name = name
        self.max_attempts = max_attempts

    def _ask(self, item: ReviewItem) -> ReviewDecision:
        self.stream_out.write(format_item(item))
        for _ in range(self.max_attempts):
            self.stream_out.write("decision [a | e <new text> | r <reason>]> ")
            self.stream_out.flush()
            line = self.stream_in.readline()
            if not line:
                raise ReviewInputError(f"reviewer {self.name!r}: console closed before a decision")
            try:
                return parse_decision(line.strip(), self.name)
            except ReviewInputError as exc:
                self.stream_out.write(f"{exc}\n")
        raise ReviewInputError(f"reviewer {self.name!r} gave no valid decision in {self.max_attempts} attempts")

    async def review(self, item: ReviewItem) -> ReviewDecision:
        """Ask on the console without blocking the event loop."""
        decision: ReviewDecision = await run_blocking(self._ask, item)
        return decision


class HttpReviewer:
    """A remote reviewer: POSTs the item as JSON and expects a decision JSON object back."""

    def __init__(self, url: str, timeout_s: float = 30, name: str | None = None) -> None:
        """Send items to ``url`` (http or https), waiting at most ``timeout_s`` seconds for each decision."""
        self.url = check_http_url(url)
        self.timeout_s = timeout_s
        self.name = name or url

    async def review(self, item: ReviewItem) -> ReviewDecision:
        """POST the item and return the decision."""
        try:
            answer = await run_blocking(post_json, self.url, item.model_dump(mode="json"), self.timeout_s)
        except HttpJsonError as exc:
            raise ReviewInputError(f"reviewer: {exc}") from None
        return _as_decision(answer, self.name)


async def safe_review(reviewer: Reviewer, item: ReviewItem, timeout_s: float | None = None) -> ReviewDecision | None:
    """Ask ``reviewer`` about ``item``; ``None`` (and a logged warning) when no valid decision comes back.

    Errors, nonsense answers and (with ``timeout_s``) slow reviewers never propagate: the caller leaves
    the memory queued for a later review.
    """
    name = getattr(reviewer, "name", type(reviewer).__name__)
    try:
        decision = await asyncio.wait_for(reviewer.review(item), timeout_s)
    except Exception as exc:  # a reviewer is outside code: nothing it does may crash the run
        reason = "timed out" if isinstance(exc, TimeoutError) else f"{type(exc).__name__}: {exc}"
        log.warning("reviewer %s gave no decision on memory %s, left queued: %s", name, item.memory_id, reason)
        return None
    if not isinstance(decision, ReviewDecision):
        log.warning(
            "reviewer %s answered a %s on memory %s, left queued", name, type(decision).__name__, item.memory_id
        )
        return None
    return decision


__all__ = [
    "ACCEPTED_FORMS",
    "CallableReviewer",
    "ConsoleReviewer",
    "HttpReviewer",
    "ReviewAction",
    "ReviewDecision",
    "ReviewInputError",
    "ReviewItem",
    "Reviewer",
    "ScriptedReviewer",
    "format_item",
    "parse_decision",
    "safe_review",
]


REVIEWER_CHOICES = "none, console, web or an http(s) URL"


def reviewer_from(spec: str) -> Reviewer | None:
    """The reviewer a command line or a scenario names: ``console``, an HTTP endpoint, or none.

    ``none`` and ``web`` decide nothing during a build: gated memories wait in the review queue, where
    ``mark review`` or the review page (``mark serve``, ``/review``) decides them, audited the same way.
    """
    choice = spec.strip()
    if choice in {"none", "web"}:
        return None
    if choice == "console":
        return ConsoleReviewer()
    if choice.startswith(("http://", "https://")):
        return HttpReviewer(choice)
    raise ReviewInputError(f"unknown reviewer {spec!r}: {REVIEWER_CHOICES}")
