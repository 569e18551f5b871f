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
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field, replace
from pathlib import Path

import openai
from autogen_core.models import ChatCompletionClient, CreateResult, ModelFamily, ModelInfo, UserMessage
from autogen_ext.models.llama_cpp import LlamaCppChatCompletionClient
from autogen_ext.models.replay import ReplayChatCompletionClient
from llama_cpp.llama_cache import LlamaRAMCache

from agents.client_wrappers import CreateRequest, WrappedClient
from agents.errors import ProviderError, TruncatedOutputError, truncated_message
from agents.local_model import QWEN_CODER_1_5B, ModelError, resolve_model_path
from agents.remote import azure_client, openai_client
from memory.config import ConfigError, ModelConfig, Provider, Settings

#: What the embedded llama.cpp model can do through AutoGen. ``function_calling`` is False on
#: purpose: llama.cpp's generic chat handler renders tools into the prompt but never parses tool
#: calls back, so an agent with tools would silently get plain text. With False it fails loudly.
LOCAL_MODEL_INFO = ModelInfo(
    vision=False, function_calling=False, json_output=True, structured_output=True, family=ModelFamily.UNKNOWN
)


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


class LocalChatClient(WrappedClient):
    """A view on a shared llama.cpp model that applies default sampling settings to every call.

    Usage, token counts and capabilities (:data:`LOCAL_MODEL_INFO`) are the shared model's.
    """

    def __init__(self, shared: _SharedLlama, *, temperature: float, max_tokens: int) -> None:
        """Wrap ``shared``; ``temperature`` and ``max_tokens`` apply unless a call overrides them."""
        super().__init__(shared.client, defaults={"temperature": temperature, "max_tokens": max_tokens})
        self._shared = shared

    async def complete(self, request: CreateRequest) -> CreateResult:
        """Run one completion; ``json_output=Model`` constrains the reply to ``Model``'s JSON schema.

        Raises :class:`TruncatedOutputError` when a JSON reply hits the token limit; a plain-text
        reply that does so is returned with ``finish_reason == "length"``.
        """
        request = request.with_defaults(self._defaults)
        async with self._shared.lock():
            task = asyncio.ensure_future(replace(request, cancellation_token=None).send(self.inner))
            waiter = asyncio.shield(task)
            if request.cancellation_token is not None:
                request.cancellation_token.link_future(waiter)
            try:
                result: CreateResult = await waiter
            except asyncio.CancelledError:
                # The executor thread cannot be stopped: keep the lock until the Llama is free again.
                await asyncio.wait({task})
                if not task.cancelled():
                    task.exception()
                raise
        if result.finish_reason == "length" and request.wants_json:
            raise TruncatedOutputError(truncated_message(request.extra_create_args.get("max_tokens")), result)
        return result

    async def stream(self, request: CreateRequest) -> AsyncGenerator[str | CreateResult, None]:
        """Not supported by AutoGen's llama.cpp client: keep ``model_client_stream=False``."""
        raise NotImplementedError("the local llama.cpp client cannot stream: use model_client_stream=False")
        yield ""  # pragma: no cover - makes this an async generator

    async def close(self) -> None:
        """Do nothing: the model is shared; :func:`release_local_models` frees it."""


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
                # opt-in: a saved llama.cpp state holds the logits of every prompt token (~0.6 MB per token
                # for a 152k vocabulary), so the copies cost more than they save on 2 cores; without it,
                # llama.cpp still reuses the prefix shared with the previous call
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
        return openai_client(cfg)
    if cfg.provider == Provider.AZURE:
        return azure_client(cfg)
    if cfg.provider == Provider.REPLAY:
        return replay_client(_read_replies(cfg.replay_file))
    raise ConfigError(f"unknown model provider {cfg.provider!r}: use one of {', '.join(p.value for p in Provider)}")


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
        "threads": str(cfg.n_threads) if cfg.provider == Provider.LOCAL else None,
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


__all__ = [
    "LOCAL_MODEL_INFO",
    "LocalChatClient",
    "ProviderError",
    "TruncatedOutputError",
    "build_client",
    "describe_provider",
    "ping",
    "release_local_models",
    "replay_client",
]
