"""Client wrappers: test doubles and a token cap for chat answers.

The test doubles are registered exactly like real model clients (public API, as pydantic-ai does).

:class:`FunctionChatClient` answers every call by calling a plain Python function with the
messages and the requested output model. Scenario tests use it to script a whole society
deterministically, including replies that depend on what was injected into the prompt.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from typing import Any, Literal

from autogen_core import CancellationToken
from autogen_core.models import (
    ChatCompletionClient,
    CreateResult,
    LLMMessage,
    ModelCapabilities,
    ModelFamily,
    ModelInfo,
    RequestUsage,
)
from autogen_core.tools import Tool, ToolSchema
from pydantic import BaseModel

from memory.tokens import count_tokens

Reply = Callable[[Sequence[LLMMessage], type[BaseModel] | None], str]
FAKE_INFO = ModelInfo(
    vision=False, function_calling=False, json_output=True, family=ModelFamily.UNKNOWN, structured_output=True
)


class FunctionChatClient(ChatCompletionClient):
    """A chat client whose replies come from ``fn(messages, output_model)``."""

    def __init__(self, fn: Reply) -> None:
        """Answer with ``fn``; every call is kept in ``calls``."""
        self.fn = fn
        self.calls: list[tuple[list[LLMMessage], type[BaseModel] | None]] = []
        self._usage = RequestUsage(prompt_tokens=0, completion_tokens=0)

    async def create(
        self,
        messages: Sequence[LLMMessage],
        *,
        tools: Sequence[Tool | ToolSchema] = [],
        tool_choice: Tool | Literal["auto", "required", "none"] = "auto",
        json_output: bool | type[BaseModel] | None = None,
        extra_create_args: Mapping[str, Any] = {},
        cancellation_token: CancellationToken | None = None,
    ) -> CreateResult:
        """Call the function and wrap its text as a completed result."""
        model = json_output if isinstance(json_output, type) else None
        self.calls.append((list(messages), model))
        text = self.fn(messages, model)
        prompt = sum(count_tokens(str(m.content)) for m in messages)
        usage = RequestUsage(prompt_tokens=prompt, completion_tokens=count_tokens(text))
        self._usage = RequestUsage(
            prompt_tokens=self._usage.prompt_tokens + usage.prompt_tokens,
            completion_tokens=self._usage.completion_tokens + usage.completion_tokens,
        )
        return CreateResult(finish_reason="stop", content=text, usage=usage, cached=False)

    def create_stream(
        self,
        messages: Sequence[LLMMessage],
        *,
        tools: Sequence[Tool | ToolSchema] = [],
        tool_choice: Tool | Literal["auto", "required", "none"] = "auto",
        json_output: bool | type[BaseModel] | None = None,
        extra_create_args: Mapping[str, Any] = {},
        cancellation_token: CancellationToken | None = None,
    ) -> AsyncGenerator[str | CreateResult, None]:
        """Streaming is not offered."""
        raise NotImplementedError("FunctionChatClient does not stream")

    async def close(self) -> None:
        """Nothing to release."""

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


class TokenCappedClient(ChatCompletionClient):
    """Delegates to ``inner`` with a max_tokens cap unless a call sets its own (for chat answers)."""

    def __init__(self, inner: ChatCompletionClient, max_tokens: int) -> None:
        """Cap every call of ``inner`` at ``max_tokens``."""
        self.inner, self.max_tokens = inner, max_tokens

    async def create(
        self,
        messages: Sequence[LLMMessage],
        *,
        tools: Sequence[Tool | ToolSchema] = [],
        tool_choice: Tool | Literal["auto", "required", "none"] = "auto",
        json_output: bool | type[BaseModel] | None = None,
        extra_create_args: Mapping[str, Any] = {},
        cancellation_token: CancellationToken | None = None,
    ) -> CreateResult:
        """The inner client's completion, capped."""
        args = {"max_tokens": self.max_tokens, **extra_create_args}
        return await self.inner.create(
            messages,
            tools=tools,
            tool_choice=tool_choice,
            json_output=json_output,
            extra_create_args=args,
            cancellation_token=cancellation_token,
        )

    def create_stream(
        self,
        messages: Sequence[LLMMessage],
        *,
        tools: Sequence[Tool | ToolSchema] = [],
        tool_choice: Tool | Literal["auto", "required", "none"] = "auto",
        json_output: bool | type[BaseModel] | None = None,
        extra_create_args: Mapping[str, Any] = {},
        cancellation_token: CancellationToken | None = None,
    ) -> AsyncGenerator[str | CreateResult, None]:
        """The inner client's stream, capped."""
        args = {"max_tokens": self.max_tokens, **extra_create_args}
        return self.inner.create_stream(
            messages,
            tools=tools,
            tool_choice=tool_choice,
            json_output=json_output,
            extra_create_args=args,
            cancellation_token=cancellation_token,
        )

    async def close(self) -> None:
        """The inner client is owned by the caller."""

    def actual_usage(self) -> RequestUsage:
        """The inner client's usage."""
        return self.inner.actual_usage()

    def total_usage(self) -> RequestUsage:
        """The inner client's usage."""
        return self.inner.total_usage()

    def count_tokens(self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = []) -> int:
        """The inner client's count."""
        return self.inner.count_tokens(messages, tools=tools)

    def remaining_tokens(self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = []) -> int:
        """The inner client's remaining context."""
        return self.inner.remaining_tokens(messages, tools=tools)

    @property
    def capabilities(self) -> ModelCapabilities:
        """Deprecated alias of :attr:`model_info`."""
        return self.inner.capabilities

    @property
    def model_info(self) -> ModelInfo:
        """The inner client's capabilities."""
        return self.inner.model_info
