"""Remote model clients: any OpenAI-compatible endpoint, and Azure OpenAI."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import openai
from autogen_core import CancellationToken
from autogen_core.models import CreateResult, LLMMessage, ModelFamily, ModelInfo, RequestUsage
from autogen_core.tools import Tool, ToolSchema
from autogen_ext.models.openai import (
    AzureOpenAIChatCompletionClient,
    BaseOpenAIChatCompletionClient,
    OpenAIChatCompletionClient,
)
from autogen_ext.models.openai.config import AzureOpenAIClientConfiguration, OpenAIClientConfiguration
from pydantic import BaseModel

from agents.errors import TruncatedOutputError, truncated_message
from memory.config import ConfigError, ModelConfig, SchemaMode

#: Capabilities assumed for an OpenAI-compatible model that AutoGen does not know by name.
GENERIC_MODEL_INFO = ModelInfo(
    vision=False, function_calling=True, json_output=True, structured_output=True, family=ModelFamily.UNKNOWN
)


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
            raise TruncatedOutputError(truncated_message(limit), partial) from exc
        if wanted_json and result.finish_reason == "length":
            raise TruncatedOutputError(truncated_message(limit), result)
        return result


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


def openai_client(cfg: ModelConfig) -> OpenAICompatibleClient:
    """A client for any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, llama.cpp server)."""
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


def azure_client(cfg: ModelConfig) -> AzureChatClient:
    """A client for an Azure OpenAI deployment."""
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
