"""One factory that turns :class:`~memory.config.Settings` into an AutoGen chat completion client.

Providers:

- ``local``: llama.cpp in-process on the GGUF from :mod:`agents.local_model`. One ``Llama`` (about
  2 GB) is loaded per model file and shared; calls to it are serialised, and each call gets the
  configured ``temperature`` / ``max_tokens`` unless it passes its own (llama.cpp would otherwise
  sample at 0.2 until the context is full).
- ``openai``: any OpenAI-compatible endpoint (OpenAI, llama.cpp server, vLLM, Ollama) via ``base_url``.
- ``azure``: Azure OpenAI; needs endpoint, deployment and key.
- ``replay``: scripted replies from a JSON file, for deterministic runs and tests.

A JSON reply cut off at the token limit raises :class:`TruncatedOutputError` (with the partial
result) on every provider, instead of handing half a JSON document to the caller.
"""

from __future__ import annotations

import asyncio
import json
import threading
import weakref
from collections.abc import AsyncGenerator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import openai
from autogen_core import CancellationToken
from autogen_core.models import (
    ChatCompletionClient,
    CreateResult,
    LLMMessage,
    ModelCapabilities,
    ModelFamily,
    ModelInfo,
    RequestUsage,
    UserMessage,
)
from autogen_core.tools import Tool, ToolSchema
from autogen_ext.models.llama_cpp import LlamaCppChatCompletionClient
from autogen_ext.models.openai import (
    AzureOpenAIChatCompletionClient,
    BaseOpenAIChatCompletionClient,
    OpenAIChatCompletionClient,
)
from autogen_ext.models.openai.config import AzureOpenAIClientConfiguration, OpenAIClientConfiguration
from autogen_ext.models.replay import ReplayChatCompletionClient
from llama_cpp.llama_cache import LlamaRAMCache
from pydantic import BaseModel

from agents.local_model import QWEN_CODER_1_5B, ModelError, resolve_model_path
from memory.config import ConfigError, ModelConfig, Provider, SchemaMode, Settings

#: What the embedded llama.cpp model can do through AutoGen. ``function_calling`` is False on
#: purpose: llama.cpp's generic chat handler renders tools into the prompt but never parses tool
#: calls back, so an agent with tools would silently get plain text. With False it fails loudly.
LOCAL_MODEL_INFO = ModelInfo(
    vision=False, function_calling=False, json_output=True, structured_output=True, family=ModelFamily.UNKNOWN
)
#: Capabilities assumed for an OpenAI-compatible model that AutoGen does not know by name.
GENERIC_MODEL_INFO = ModelInfo(
    vision=False, function_calling=True, json_output=True, structured_output=True, family=ModelFamily.UNKNOWN
)


class ProviderError(RuntimeError):
    """The model endpoint cannot be used right now; the message is one line saying why."""


class TruncatedOutputError(ProviderError):
    """A JSON reply stopped at the token limit; ``result`` holds the partial completion."""

    def __init__(self, message: str, result: CreateResult) -> None:
        """Keep the partial ``result`` next to the message."""
        super().__init__(message)
        self.result = result


@dataclass
class _SharedLlama:
    """One loaded llama.cpp model and the per-event-loop locks that serialise calls to it."""

    client: LlamaCppChatCompletionClient
    locks: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = field(
        default_factory=weakref.WeakKeyDictionary
    )

    def lock(self) -> asyncio.Lock:
        """The lock for the running event loop (an ``asyncio.Lock`` cannot cross loops)."""
        loop = asyncio.get_running_loop()
        if loop not in self.locks:
            self.locks[loop] = asyncio.Lock()
        return self.locks[loop]


_LLAMAS: dict[tuple[str, int, int], _SharedLlama] = {}
_LLAMAS_GUARD = threading.Lock()


class LocalChatClient(ChatCompletionClient):
    """A view on a shared llama.cpp model that applies default sampling settings to every call."""

    def __init__(self, shared: _SharedLlama, *, temperature: float, max_tokens: int) -> None:
        """Wrap ``shared``; ``temperature`` and ``max_tokens`` apply unless a call overrides them."""
        self._shared = shared
        self._defaults: dict[str, Any] = {"temperature": temperature, "max_tokens": max_tokens}

    @property
    def default_create_args(self) -> dict[str, Any]:
        """The sampling arguments added to every call (a copy)."""
        return dict(self._defaults)

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
        """Run one completion; ``json_output=Model`` constrains the reply to ``Model``'s JSON schema.

        Raises :class:`TruncatedOutputError` when a JSON reply hits the token limit; a plain-text
        reply that does so is returned with ``finish_reason == "length"``.
        """
        args = {**self._defaults, **extra_create_args}
        async with self._shared.lock():
            task = asyncio.ensure_future(
                self._shared.client.create(
                    messages, tools=tools, tool_choice=tool_choice, json_output=json_output, extra_create_args=args
                )
            )
            waiter = asyncio.shield(task)
            if cancellation_token is not None:
                cancellation_token.link_future(waiter)
            try:
                result: CreateResult = await waiter
            except asyncio.CancelledError:
                # The executor thread cannot be stopped: keep the lock until the Llama is free again.
                await asyncio.wait({task})
                if not task.cancelled():
                    task.exception()
                raise
        if result.finish_reason == "length" and json_output not in (None, False):
            raise TruncatedOutputError(_truncated_message(args.get("max_tokens")), result)
        return result

    async def create_stream(
        self,
        messages: Sequence[LLMMessage],
        *,
        tools: Sequence[Tool | ToolSchema] = [],
        tool_choice: Tool | Literal["auto", "required", "none"] = "auto",
        json_output: bool | type[BaseModel] | None = None,
        extra_create_args: Mapping[str, Any] = {},
        cancellation_token: CancellationToken | None = None,
    ) -> AsyncGenerator[str | CreateResult, None]:
        """Not supported by AutoGen's llama.cpp client: keep ``model_client_stream=False``."""
        raise NotImplementedError("the local llama.cpp client cannot stream: use model_client_stream=False")
        yield ""  # pragma: no cover - makes this an async generator

    async def close(self) -> None:
        """Do nothing: the model is shared; :func:`release_local_models` frees it."""

    def actual_usage(self) -> RequestUsage:
        """Tokens used by all clients sharing this model."""
        return self._shared.client.actual_usage()

    def total_usage(self) -> RequestUsage:
        """Tokens used by all clients sharing this model."""
        return self._shared.client.total_usage()

    def count_tokens(self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = []) -> int:
        """Count tokens with the model's own tokenizer."""
        return self._shared.client.count_tokens(messages)

    def remaining_tokens(self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = []) -> int:
        """Context tokens left after ``messages``."""
        return self._shared.client.remaining_tokens(messages)

    @property
    def capabilities(self) -> ModelCapabilities:
        """Deprecated AutoGen alias of :attr:`model_info`."""
        return LOCAL_MODEL_INFO

    @property
    def model_info(self) -> ModelInfo:
        """What this model supports (see :data:`LOCAL_MODEL_INFO`)."""
        return LOCAL_MODEL_INFO


class _JsonGuard(BaseOpenAIChatCompletionClient):
    """Mixin for the OpenAI clients: cut-off JSON raises, and schemas can use llama.cpp's dialect."""

    _schema_mode: SchemaMode = SchemaMode.JSON_SCHEMA
    _max_tokens: int | None = None

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
        """As the parent; a JSON reply cut at the token limit raises :class:`TruncatedOutputError`.

        With ``SchemaMode.JSON_OBJECT`` a pydantic ``json_output`` is sent as
        ``{"type": "json_object", "schema": ...}`` (what ``llama_cpp.server`` understands) instead of
        OpenAI's ``json_schema`` structured outputs; the reply text is the JSON either way.
        """
        extra = dict(extra_create_args)
        limit = extra.get("max_tokens", self._max_tokens)
        wanted_json = json_output not in (None, False)
        if self._schema_mode is SchemaMode.JSON_OBJECT and isinstance(json_output, type):
            extra["response_format"] = {"type": "json_object", "schema": json_output.model_json_schema()}
            json_output = None
        try:
            result = await super().create(
                messages,
                tools=tools,
                tool_choice=tool_choice,
                json_output=json_output,
                extra_create_args=extra,
                cancellation_token=cancellation_token,
            )
        except openai.LengthFinishReasonError as exc:  # raised by the structured-outputs (parse) path
            choices, usage = exc.completion.choices, exc.completion.usage
            partial = CreateResult(
                finish_reason="length",
                content=(choices[0].message.content if choices else None) or "",
                usage=RequestUsage(
                    prompt_tokens=usage.prompt_tokens if usage else 0,
                    completion_tokens=usage.completion_tokens if usage else 0,
                ),
                cached=False,
            )
            raise TruncatedOutputError(_truncated_message(limit), partial) from exc
        if wanted_json and result.finish_reason == "length":
            raise TruncatedOutputError(_truncated_message(limit), result)
        return result


def _truncated_message(limit: object) -> str:
    return f"the model's JSON reply was cut off at max_tokens={limit}: raise MARK_MAX_TOKENS or shorten the prompt"


class OpenAICompatibleClient(_JsonGuard, OpenAIChatCompletionClient):
    """``OpenAIChatCompletionClient`` that never returns cut-off JSON and can speak llama.cpp's schema dialect."""

    def __init__(self, config: OpenAIClientConfiguration, schema_mode: SchemaMode) -> None:
        """Build the AutoGen client from ``config``; ``schema_mode`` picks how schemas are sent."""
        super().__init__(**config)
        self._schema_mode = schema_mode
        self._max_tokens = config.get("max_tokens")


class AzureChatClient(_JsonGuard, AzureOpenAIChatCompletionClient):
    """``AzureOpenAIChatCompletionClient`` that raises :class:`TruncatedOutputError` on cut-off JSON."""

    def __init__(self, config: AzureOpenAIClientConfiguration) -> None:
        """Build the AutoGen client from ``config``."""
        super().__init__(**config)
        self._max_tokens = config.get("max_tokens")


def _shared_llama(path: Path, cfg: ModelConfig) -> _SharedLlama:
    """Load ``path`` once per (path, n_ctx, n_threads) in this process."""
    key = (str(path.resolve()), cfg.n_ctx, cfg.n_threads)
    with _LLAMAS_GUARD:
        if key not in _LLAMAS:
            try:
                client = LlamaCppChatCompletionClient(
                    model_info=LOCAL_MODEL_INFO,
                    model_path=key[0],
                    n_ctx=cfg.n_ctx,
                    n_threads=cfg.n_threads,
                    n_threads_batch=cfg.n_threads,
                    seed=0,
                    verbose=False,
                )
            except ValueError as exc:
                raise ModelError(f"llama.cpp cannot load {path} ({exc}): check the file or MARK_N_CTX") from exc
            if cfg.prompt_cache_mb:
                # every role re-sends its long instructions: keep evaluated prefixes so only the new tail is read
                client.llm.set_cache(LlamaRAMCache(capacity_bytes=cfg.prompt_cache_mb << 20))
            _LLAMAS[key] = _SharedLlama(client)
        return _LLAMAS[key]


def release_local_models() -> None:
    """Free every llama.cpp model loaded by :func:`build_client` (clients built earlier stop working)."""
    with _LLAMAS_GUARD:
        shared = list(_LLAMAS.values())
        _LLAMAS.clear()
    for item in shared:
        item.client.llm.close()


def build_client(settings: Settings) -> ChatCompletionClient:
    """Build the chat completion client that ``settings.model`` describes.

    Raises :class:`~memory.config.ConfigError` for missing or unknown settings and
    :class:`~agents.local_model.ModelError` when the local GGUF cannot be found or loaded.
    """
    cfg = settings.model
    if cfg.provider == Provider.LOCAL:
        path = resolve_model_path(cfg, settings.models_dir)
        return LocalChatClient(_shared_llama(path, cfg), temperature=cfg.temperature, max_tokens=cfg.max_tokens)
    if cfg.provider == Provider.OPENAI:
        return _openai_client(cfg)
    if cfg.provider == Provider.AZURE:
        return _azure_client(cfg)
    if cfg.provider == Provider.REPLAY:
        return replay_client(_read_replies(cfg.replay_file))
    raise ConfigError(f"unknown model provider {cfg.provider!r}: use one of {', '.join(p.value for p in Provider)}")


def _openai_client(cfg: ModelConfig) -> OpenAICompatibleClient:
    if cfg.base_url is None and not cfg.api_key:
        raise ConfigError("provider openai needs MARK_API_KEY, or MARK_BASE_URL for a local OpenAI-compatible server")
    config = OpenAIClientConfiguration(
        model=cfg.model,
        api_key=cfg.api_key or "not-needed",
        temperature=cfg.temperature,
        max_tokens=cfg.max_tokens,
        timeout=cfg.timeout_s,
    )
    if cfg.base_url is not None:
        config["base_url"] = cfg.base_url
    try:
        return OpenAICompatibleClient(config, cfg.schema_mode)
    except ValueError:  # "model_info is required when model name is not a valid OpenAI model"
        config["model_info"] = GENERIC_MODEL_INFO
        return OpenAICompatibleClient(config, cfg.schema_mode)


def _azure_client(cfg: ModelConfig) -> AzureChatClient:
    missing = [
        name
        for name, value in (
            ("MARK_BASE_URL (the Azure endpoint)", cfg.base_url),
            ("MARK_AZURE_DEPLOYMENT", cfg.azure_deployment),
            ("MARK_API_KEY", cfg.api_key),
        )
        if not value
    ]
    if missing:
        raise ConfigError(f"provider azure needs {', '.join(missing)}")
    assert cfg.base_url and cfg.azure_deployment and cfg.api_key  # narrowed by the check above
    config = AzureOpenAIClientConfiguration(
        model=cfg.model,
        azure_endpoint=cfg.base_url,
        azure_deployment=cfg.azure_deployment,
        api_version=cfg.api_version,
        api_key=cfg.api_key,
        temperature=cfg.temperature,
        max_tokens=cfg.max_tokens,
        timeout=cfg.timeout_s,
    )
    try:
        return AzureChatClient(config)
    except ValueError:
        config["model_info"] = GENERIC_MODEL_INFO
        return AzureChatClient(config)


def _read_replies(path: Path | None) -> list[str]:
    if path is None:
        raise ConfigError("provider replay needs MARK_REPLAY_FILE (a JSON list of reply strings)")
    try:
        data = json.loads(path.expanduser().read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"cannot read replay file {path} ({exc.strerror})") from exc
    except ValueError as exc:
        raise ConfigError(f"replay file {path} is not valid JSON ({exc})") from exc
    if not isinstance(data, list) or not all(isinstance(item, str) for item in data):
        raise ConfigError(f"replay file {path} must hold a JSON list of strings")
    return data


def replay_client(replies: list[str]) -> ReplayChatCompletionClient:
    """A deterministic client that answers with ``replies`` in order (same capabilities as ``local``)."""
    return ReplayChatCompletionClient(chat_completions=list(replies), model_info=LOCAL_MODEL_INFO)


def describe_provider(settings: Settings) -> dict[str, str | None]:
    """What ``mark doctor`` prints about the model provider; never loads or contacts anything."""
    cfg = settings.model
    model_path: Path | None = None
    if cfg.provider == Provider.LOCAL:
        model_path = cfg.model_path or settings.models_dir / QWEN_CODER_1_5B.filename
    return {
        "provider": cfg.provider.value,
        "model": cfg.model if cfg.provider != Provider.LOCAL or cfg.model_path is None else cfg.model_path.name,
        "base_url": cfg.base_url,
        "model_path": str(model_path) if model_path else None,
        "replay_file": str(cfg.replay_file) if cfg.replay_file else None,
    }


async def ping(client: ChatCompletionClient, *, endpoint: str | None = None, timeout_s: float = 30.0) -> None:
    """Make one tiny completion to prove the model answers; replay clients are left untouched.

    Raises :class:`ProviderError` with one line ("cannot reach the model endpoint at URL: ...")
    when the endpoint is down, times out or rejects the request.
    """
    if isinstance(client, ReplayChatCompletionClient):
        return
    where = endpoint or "the configured model endpoint"
    message = UserMessage(content="Reply with OK.", source="user")
    try:
        await asyncio.wait_for(client.create([message], extra_create_args={"max_tokens": 1}), timeout_s)
    except TimeoutError:
        raise ProviderError(f"cannot reach the model endpoint at {where}: no answer within {timeout_s:g} s") from None
    except openai.APIConnectionError as exc:
        reason = str(exc.__cause__ or "") or str(exc)
        raise ProviderError(f"cannot reach the model endpoint at {where}: {reason}") from exc
    except openai.APIStatusError as exc:
        raise ProviderError(f"the model endpoint at {where} answered HTTP {exc.status_code}: {exc.message}") from exc
    except OSError as exc:
        raise ProviderError(f"cannot reach the model endpoint at {where}: {exc}") from exc
