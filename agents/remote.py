"""Remote model clients: any OpenAI-compatible endpoint, and Azure OpenAI."""

from __future__ import annotations

from dataclasses import replace

import openai
from autogen_core.models import ChatCompletionClient, CreateResult, ModelFamily, ModelInfo, RequestUsage
from autogen_ext.models.openai import AzureOpenAIChatCompletionClient, OpenAIChatCompletionClient
from autogen_ext.models.openai.config import AzureOpenAIClientConfiguration, OpenAIClientConfiguration

from agents.client_wrappers import CreateRequest, WrappedClient
from agents.errors import TruncatedOutputError, truncated_message
from memory.config import ConfigError, ModelConfig, SchemaMode

#: Capabilities assumed for an OpenAI-compatible model that AutoGen does not know by name.
GENERIC_MODEL_INFO = ModelInfo(
    vision=False, function_calling=True, json_output=True, structured_output=True, family=ModelFamily.UNKNOWN
)


class JsonGuardedClient(WrappedClient):
    """Wraps an OpenAI client: cut-off JSON raises, and schemas can use llama.cpp's dialect.

    ``max_tokens`` is the inner client's configured limit, named in the error when a call sets none.
    """

    def __init__(
        self,
        inner: ChatCompletionClient,
        *,
        max_tokens: int | None = None,
        schema_mode: SchemaMode = SchemaMode.JSON_SCHEMA,
    ) -> None:
        """Guard ``inner``; ``schema_mode`` picks how a pydantic ``json_output`` is sent."""
        super().__init__(inner)
        self._max_tokens, self._schema_mode = max_tokens, schema_mode

    async def complete(self, request: CreateRequest) -> CreateResult:
        """As the inner client; a JSON reply cut at the token limit raises :class:`TruncatedOutputError`.

        With ``SchemaMode.JSON_OBJECT`` a pydantic ``json_output`` is sent as
        ``{"type": "json_object", "schema": ...}`` (what ``llama_cpp.server`` understands) instead of
        OpenAI's ``json_schema`` structured outputs; the reply text is the JSON either way.
        """
        limit = request.extra_create_args.get("max_tokens", self._max_tokens)
        wanted_json = request.wants_json
        if self._schema_mode is SchemaMode.JSON_OBJECT and isinstance(request.json_output, type):
            response_format = {"type": "json_object", "schema": request.json_output.model_json_schema()}
            extra = {**request.extra_create_args, "response_format": response_format}
            request = replace(request, json_output=None, extra_create_args=extra)
        try:
            result = await super().complete(request)
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


class OpenAICompatibleClient(JsonGuardedClient):
    """``OpenAIChatCompletionClient`` that never returns cut-off JSON and can speak llama.cpp's schema dialect."""

    def __init__(self, config: OpenAIClientConfiguration, schema_mode: SchemaMode) -> None:
        """Build the AutoGen client from ``config``; ``schema_mode`` picks how schemas are sent."""
        inner = OpenAIChatCompletionClient(**config)
        super().__init__(inner, max_tokens=config.get("max_tokens"), schema_mode=schema_mode)


class AzureChatClient(JsonGuardedClient):
    """``AzureOpenAIChatCompletionClient`` that raises :class:`TruncatedOutputError` on cut-off JSON."""

    def __init__(self, config: AzureOpenAIClientConfiguration) -> None:
        """Build the AutoGen client from ``config``."""
        super().__init__(AzureOpenAIChatCompletionClient(**config), max_tokens=config.get("max_tokens"))


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
