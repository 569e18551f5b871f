"""Robust structured replies: validate every model output against its pydantic model.

A malformed or truncated reply gets exactly one retry with a repair instruction; a second failure is
rejected with a logged reason. Nothing half-parsed ever leaves this module, and model errors never
crash the caller. Every call's tokens are recorded per agent for the reports.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from autogen_core.models import AssistantMessage, ChatCompletionClient, LLMMessage, SystemMessage, UserMessage
from pydantic import BaseModel, ConfigDict, ValidationError

from agents.errors import ProviderError, TruncatedOutputError

log = logging.getLogger("mark.agents")
T = TypeVar("T", bound=BaseModel)
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.MULTILINE)


class Usage(BaseModel):
    """LLM calls and tokens of one agent."""

    model_config = ConfigDict(extra="forbid")

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    failures: int = 0


class UsageLog:
    """Per-agent counters shared by every agent of a run."""

    def __init__(self) -> None:
        """Start empty."""
        self.by_agent: dict[str, Usage] = defaultdict(Usage)
        self.unreachable: list[str] = []  # calls that failed because the model could not be reached

    def record(self, agent: str, prompt: int, completion: int) -> None:
        """Count one call."""
        usage = self.by_agent[agent]
        usage.calls += 1
        usage.prompt_tokens += prompt
        usage.completion_tokens += completion

    def fail(self, agent: str) -> None:
        """Count one rejected output."""
        self.by_agent[agent].failures += 1

    def totals(self) -> Usage:
        """Sum over agents."""
        total = Usage()
        for usage in self.by_agent.values():
            total.calls += usage.calls
            total.prompt_tokens += usage.prompt_tokens
            total.completion_tokens += usage.completion_tokens
            total.failures += usage.failures
        return total

    def snapshot(self) -> dict[str, dict[str, int]]:
        """A JSON-ready copy."""
        return {name: usage.model_dump() for name, usage in sorted(self.by_agent.items())}


class Outcome(BaseModel, Generic[T]):
    """A validated value, or the reason it was rejected."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    value: T | None = None
    error: str | None = None
    attempts: int = 0
    raw: str = ""

    @property
    def ok(self) -> bool:
        """True when a valid value was obtained."""
        return self.value is not None


class DuplicateKeyError(ValueError):
    """A JSON object in the reply names the same key twice (which value was meant is unknowable).

    Not a :class:`~mark.errors.MarkError`: it is about a model's reply, not the user's input, and
    :func:`call_structured` turns it into a retry or a logged rejection; it never reaches a user.
    """


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads`` object hook: the object as a dict, refusing a repeated key."""
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise DuplicateKeyError(f"duplicate JSON key {key!r}: give each key once")
        found[key] = value
    return found


def _validate(text: str, model: type[T]) -> T:
    """``model`` from one JSON text; a repeated key anywhere in it is an error, not "last one wins"."""
    value = model.model_validate_json(text)
    with contextlib.suppress(json.JSONDecodeError):  # pydantic's parser accepted it; only repeated keys matter
        json.loads(text, object_pairs_hook=_unique_keys)
    return value


def parse_reply(text: str, model: type[T]) -> T:
    """Parse a model reply into ``model``; tolerates code fences and prose around one JSON object.

    A reply whose JSON repeats a key is rejected (:class:`DuplicateKeyError`, a ``ValueError``), so
    :func:`call_structured` treats it like any invalid reply: one repair retry, then rejection.
    """
    cleaned = _FENCE.sub("", text.strip()).strip()
    try:
        return _validate(cleaned, model)
    except (ValidationError, DuplicateKeyError) as first:
        start, end = cleaned.find("{"), cleaned.rfind("}")
        if 0 <= start < end:
            candidate = cleaned[start : end + 1]
            if candidate != cleaned:
                return _validate(candidate, model)
        raise first


class _CheckFailed(ValueError):
    """A reply that parsed but failed the caller's semantic check."""


def _reason(exc: Exception, finish_reason: str | None) -> str:
    if isinstance(exc, _CheckFailed):
        return f"failed the check: {exc}"
    if isinstance(exc, DuplicateKeyError):
        return str(exc)
    if finish_reason == "length":
        return "the reply was cut off at the token limit (finish_reason=length)"
    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "reply"
        return f"{where}: {err['msg']}"
    return f"{exc.__class__.__name__}: {exc}"


async def call_structured(
    client: ChatCompletionClient,
    agent: str,
    messages: Sequence[LLMMessage],
    model: type[T],
    usage: UsageLog | None = None,
    retries: int = 1,
    check: Callable[[T], str | None] | None = None,
    retry_failed_check: bool = True,
) -> Outcome[T]:
    """Ask for a reply shaped like ``model``; one repair retry, then a logged rejection.

    ``check`` adds a semantic test after schema validation: it returns a problem description (the
    repair instruction) or None. With ``retry_failed_check`` False a reply that parses but fails the
    check is rejected at once (for callers with a deterministic fallback, where a second call rarely
    fixes the content and costs a full prompt); malformed or truncated replies are still retried.
    """
    history = list(messages)
    outcome: Outcome[T] = Outcome()
    for attempt in range(retries + 1):
        outcome.attempts = attempt + 1
        try:
            result = await client.create(history, json_output=model)
        except TruncatedOutputError as exc:
            result = exc.result  # the local client refuses cut-off JSON; treat it as a failed attempt
        except Exception as exc:  # endpoint errors/timeouts must not crash a run
            outcome.error = f"model call failed: {exc.__class__.__name__}: {exc}"
            log.warning("%s: %s", agent, outcome.error)
            if usage:
                usage.fail(agent)
                if unreachable(exc):
                    usage.unreachable.append(f"{agent}: {outcome.error}")
            return outcome
        if usage:
            usage.record(agent, result.usage.prompt_tokens, result.usage.completion_tokens)
        text = result.content if isinstance(result.content, str) else json.dumps(result.content, default=str)
        outcome.raw = text
        try:
            if result.finish_reason == "length":
                raise ValueError("truncated")
            value = parse_reply(text, model)
            problem = check(value) if check else None
            if problem:
                raise _CheckFailed(problem)
            outcome.value = value
            outcome.error = None
            return outcome
        except (ValidationError, ValueError) as exc:
            outcome.error = _reason(exc, result.finish_reason)
            log.warning("%s: attempt %d rejected: %s", agent, attempt + 1, outcome.error)
            if isinstance(exc, _CheckFailed) and not retry_failed_check:
                break
            history = [
                *history,
                AssistantMessage(content=text[:2000], source=agent),
                UserMessage(
                    content=(
                        f"Your reply was not valid: {outcome.error}. Reply again with ONE complete JSON "
                        f"object that matches this schema, and nothing else. Keep it short.\n"
                        f"{json.dumps(model.model_json_schema())}"
                    ),
                    source="validator",
                ),
            ]
    if usage:
        usage.fail(agent)
    return outcome


def unreachable(exc: BaseException) -> bool:
    """Whether a failed call means the model could not be reached (not that it answered badly)."""
    return isinstance(exc, ProviderError | TimeoutError | OSError) or type(exc).__module__.split(".")[0] in {
        "openai",
        "httpx",
        "httpcore",
    }


def system(text: str) -> SystemMessage:
    """A system message."""
    return SystemMessage(content=text)


def user(text: str, source: str = "user") -> UserMessage:
    """A user message."""
    return UserMessage(content=text, source=source)
