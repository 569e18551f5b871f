"""Test doubles registered exactly like real model clients (public API, as pydantic-ai does).

:class:`FunctionChatClient` answers every call by calling a plain Python function with the
messages and the requested output model. Scenario tests use it to script a whole society
deterministically, including replies that depend on what was injected into the prompt.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Sequence

from autogen_core.models import (
    CreateResult,
    LLMMessage,
    ModelCapabilities,
    ModelFamily,
    ModelInfo,
    RequestUsage,
)
from autogen_core.tools import Tool, ToolSchema
from pydantic import BaseModel

from agents.client_wrappers import CreateRequest, RequestClient
from memory.tokens import count_tokens

Reply = Callable[[Sequence[LLMMessage], type[BaseModel] | None], str]
FAKE_INFO = ModelInfo(
    vision=False, function_calling=False, json_output=True, family=ModelFamily.UNKNOWN, structured_output=True
)


class FunctionChatClient(RequestClient):
    """A chat client whose replies come from ``fn(messages, output_model)``."""

    def __init__(self, fn: Reply) -> None:
        """Answer with ``fn``; every call is kept in ``calls``; ``closed`` turns True on :meth:`close`."""
        self.fn = fn
        self.calls: list[tuple[list[LLMMessage], type[BaseModel] | None]] = []
        self.closed = False
        self._usage = RequestUsage(prompt_tokens=0, completion_tokens=0)

    async def complete(self, request: CreateRequest) -> CreateResult:
        """Call the function and wrap its text as a completed result."""
        messages = request.messages
        model = request.json_output if isinstance(request.json_output, type) else None
        self.calls.append((list(messages), model))
        text = self.fn(messages, model)
        prompt = sum(count_tokens(str(m.content)) for m in messages)
        usage = RequestUsage(prompt_tokens=prompt, completion_tokens=count_tokens(text))
        self._usage = RequestUsage(
            prompt_tokens=self._usage.prompt_tokens + usage.prompt_tokens,
            completion_tokens=self._usage.completion_tokens + usage.completion_tokens,
        )
        return CreateResult(finish_reason="stop", content=text, usage=usage, cached=False)

    def stream(self, request: CreateRequest) -> AsyncGenerator[str | CreateResult, None]:
        """Streaming is not offered."""
        raise NotImplementedError("FunctionChatClient does not stream")

    async def close(self) -> None:
        """Nothing to release; remembered in ``closed``."""
        self.closed = True

    def actual_usage(self) -> RequestUsage:
        """Tokens of all calls."""
        return self._usage

    def total_usage(self) -> RequestUsage:
        """Tokens of all calls."""
        return self._usage

    def count_tokens(self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = []) -> int:
        """Tokens of the messages (cl100k)."""
        return sum(count_tokens(str(m.content)) for m in messages)

    def remaining_tokens(self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = []) -> int:
        """A generous fixed context."""
        return 32768 - self.count_tokens(messages)

    @property
    def capabilities(self) -> ModelCapabilities:
        """Deprecated alias of :attr:`model_info`."""
        return FAKE_INFO

    @property
    def model_info(self) -> ModelInfo:
        """Capabilities of the fake."""
        return FAKE_INFO
