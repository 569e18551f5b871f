"""Client wrappers: one base that forwards an AutoGen ``ChatCompletionClient``, and the token cap.

AutoGen's ``create`` / ``create_stream`` signature is written once, in :class:`RequestClient`, which
packs each call into a :class:`CreateRequest` and hands it to :meth:`RequestClient.complete` or
:meth:`RequestClient.stream`. :class:`WrappedClient` forwards every request and every other method
of the client API to an inner client (the shape of pydantic-ai's ``WrapperModel``), so a wrapper
overrides only what it changes: :class:`TokenCappedClient` here, the local llama.cpp view in
:mod:`agents.providers`, the JSON guard in :mod:`agents.remote`.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from autogen_core import CancellationToken
from autogen_core.models import (
    ChatCompletionClient,
    CreateResult,
    LLMMessage,
    ModelCapabilities,
    ModelInfo,
    RequestUsage,
)
from autogen_core.tools import Tool, ToolSchema
from pydantic import BaseModel


@dataclass(frozen=True)
class CreateRequest:
    """One ``create`` / ``create_stream`` call as a value, so a wrapper can change it and send it on."""

    messages: Sequence[LLMMessage]
    tools: Sequence[Tool | ToolSchema] = field(default_factory=list)
    tool_choice: Tool | Literal["auto", "required", "none"] = "auto"
    json_output: bool | type[BaseModel] | None = None
    extra_create_args: Mapping[str, Any] = field(default_factory=dict)
    cancellation_token: CancellationToken | None = None

    @property
    def wants_json(self) -> bool:
        """Whether the call asks for JSON (JSON mode or a pydantic output model)."""
        return self.json_output not in (None, False)

    def with_defaults(self, defaults: Mapping[str, Any]) -> CreateRequest:
        """The request with ``defaults`` under its ``extra_create_args``: a value the call sets wins."""
        if not defaults:
            return self
        return replace(self, extra_create_args={**defaults, **self.extra_create_args})

    async def send(self, client: ChatCompletionClient) -> CreateResult:
        """Make this call with ``client.create``."""
        return await client.create(
            self.messages,
            tools=self.tools,
            tool_choice=self.tool_choice,
            json_output=self.json_output,
            extra_create_args=self.extra_create_args,
            cancellation_token=self.cancellation_token,
        )

    def send_stream(self, client: ChatCompletionClient) -> AsyncGenerator[str | CreateResult, None]:
        """Make this call with ``client.create_stream``."""
        return client.create_stream(
            self.messages,
            tools=self.tools,
            tool_choice=self.tool_choice,
            json_output=self.json_output,
            extra_create_args=self.extra_create_args,
            cancellation_token=self.cancellation_token,
        )


class RequestClient(ChatCompletionClient):
    """A ``ChatCompletionClient`` that takes each call as one :class:`CreateRequest`.

    Subclasses implement :meth:`complete` and :meth:`stream` (and the rest of the client API)
    instead of repeating AutoGen's keyword arguments.
    """

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
        """AutoGen's ``create``: the result of :meth:`complete` on the packed request."""
        request = CreateRequest(messages, tools, tool_choice, json_output, extra_create_args, cancellation_token)
        return await self.complete(request)

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
        """AutoGen's ``create_stream``: the stream of :meth:`stream` for the packed request."""
        request = CreateRequest(messages, tools, tool_choice, json_output, extra_create_args, cancellation_token)
        return self.stream(request)

    @abstractmethod
    async def complete(self, request: CreateRequest) -> CreateResult:
        """Answer one request."""

    @abstractmethod
    def stream(self, request: CreateRequest) -> AsyncGenerator[str | CreateResult, None]:
        """Answer one request as text chunks ending with the :class:`CreateResult`."""


class WrappedClient(RequestClient):
    """Forwards every call to ``inner``; a subclass overrides only what it changes.

    ``defaults`` are ``extra_create_args`` added to every request unless the call sets its own.
    :meth:`close` closes ``inner``: a wrapper around a client it does not own overrides it.
    """

    def __init__(self, inner: ChatCompletionClient, *, defaults: Mapping[str, Any] | None = None) -> None:
        """Wrap ``inner``, adding ``defaults`` to the arguments of every call."""
        self.inner = inner
        self._defaults: dict[str, Any] = dict(defaults or {})

    @property
    def default_create_args(self) -> dict[str, Any]:
        """The arguments added to every call (a copy)."""
        return dict(self._defaults)

    async def complete(self, request: CreateRequest) -> CreateResult:
        """The inner client's completion of the request (with the defaults)."""
        return await request.with_defaults(self._defaults).send(self.inner)

    def stream(self, request: CreateRequest) -> AsyncGenerator[str | CreateResult, None]:
        """The inner client's stream for the request (with the defaults)."""
        return request.with_defaults(self._defaults).send_stream(self.inner)

    async def close(self) -> None:
        """Close the inner client."""
        await self.inner.close()

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
        """Deprecated alias of :attr:`model_info`: the inner client's."""
        return self.inner.capabilities

    @property
    def model_info(self) -> ModelInfo:
        """The inner client's capabilities."""
        return self.inner.model_info


class TokenCappedClient(WrappedClient):
    """Delegates to ``inner`` with a max_tokens cap unless a call sets its own (for chat answers)."""

    def __init__(self, inner: ChatCompletionClient, max_tokens: int) -> None:
        """Cap every call of ``inner`` at ``max_tokens``."""
        super().__init__(inner, defaults={"max_tokens": max_tokens})
        self.max_tokens = max_tokens

    async def close(self) -> None:
        """Leave the inner client open: the caller owns it."""


__all__ = ["CreateRequest", "RequestClient", "TokenCappedClient", "WrappedClient"]
