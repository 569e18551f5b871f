"""The client factory without a model: settings errors, azure/openai wiring, replay files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from autogen_core.models import UserMessage

from agents.providers import build_client, describe_provider, ping, replay_client
from agents.remote import GENERIC_MODEL_INFO, AzureChatClient, OpenAICompatibleClient
from memory.config import ConfigError, ModelConfig, Settings, load_settings


def _settings(tmp_path: Path, **env: str) -> Settings:
    return load_settings(env={"MARK_HOME": str(tmp_path / "home"), **env})


def test_unknown_provider_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"model\.provider"):
        _settings(tmp_path, MARK_PROVIDER="bogus")
    # a Settings object built without validation still fails with one clear line
    settings = Settings(home=tmp_path, model=ModelConfig.model_construct(provider="bogus"))
    with pytest.raises(ConfigError, match="unknown model provider 'bogus': use one of local, openai, azure, replay"):
        build_client(settings)


def test_azure_without_endpoint_is_a_config_error(tmp_path: Path) -> None:
    settings = _settings(tmp_path, MARK_PROVIDER="azure", MARK_AZURE_DEPLOYMENT="gpt4o", MARK_API_KEY="k")
    with pytest.raises(ConfigError, match=r"^provider azure needs MARK_BASE_URL \(the Azure endpoint\)$"):
        build_client(settings)


def test_azure_names_everything_missing(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"MARK_BASE_URL .*, MARK_AZURE_DEPLOYMENT, MARK_API_KEY"):
        build_client(_settings(tmp_path, MARK_PROVIDER="azure"))


def test_azure_with_full_settings_builds_offline(tmp_path: Path) -> None:
    env = {
        "MARK_PROVIDER": "azure",
        "MARK_BASE_URL": "https://example.openai.azure.com",
        "MARK_AZURE_DEPLOYMENT": "my-deployment",
        "MARK_API_KEY": "k",
        "MARK_MODEL": "my-private-model",
    }
    client = build_client(_settings(tmp_path, **env))
    assert isinstance(client, AzureChatClient)
    assert client.model_info == GENERIC_MODEL_INFO


def test_openai_needs_a_key_or_a_local_base_url(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="provider openai needs MARK_API_KEY, or MARK_BASE_URL"):
        build_client(_settings(tmp_path, MARK_PROVIDER="openai"))


def test_openai_model_info_is_known_or_generic(tmp_path: Path) -> None:
    local = build_client(
        _settings(tmp_path, MARK_PROVIDER="openai", MARK_MODEL="smollm2", MARK_BASE_URL="http://127.0.0.1:1/v1")
    )
    assert isinstance(local, OpenAICompatibleClient)
    assert local.model_info == GENERIC_MODEL_INFO
    known = build_client(_settings(tmp_path, MARK_PROVIDER="openai", MARK_MODEL="gpt-4o", MARK_API_KEY="k"))
    assert known.model_info["family"] != "unknown"


@pytest.mark.asyncio
async def test_replay_from_a_file_answers_in_order(tmp_path: Path) -> None:
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(["first", '{"ok": true}']))
    client = build_client(_settings(tmp_path, MARK_PROVIDER="replay", MARK_REPLAY_FILE=str(replies)))
    await ping(client)  # a no-op for replay: it must not use up a scripted reply
    message = [UserMessage(content="hi", source="user")]
    assert (await client.create(message)).content == "first"
    assert (await client.create(message, json_output=True)).content == '{"ok": true}'
    with pytest.raises(ValueError, match="No more mock responses"):
        await client.create(message)


@pytest.mark.parametrize(
    ("content", "error"),
    [
        (None, "cannot read replay file"),
        ("not json", "is not valid JSON"),
        ('{"a": 1}', "must hold a JSON list of strings"),
        ('["ok", 3]', "must hold a JSON list of strings"),
    ],
)
def test_bad_replay_files_are_config_errors(tmp_path: Path, content: str | None, error: str) -> None:
    replies = tmp_path / "replies.json"
    if content is not None:
        replies.write_text(content)
    with pytest.raises(ConfigError, match=error):
        build_client(_settings(tmp_path, MARK_PROVIDER="replay", MARK_REPLAY_FILE=str(replies)))


def test_replay_without_a_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="provider replay needs MARK_REPLAY_FILE"):
        build_client(_settings(tmp_path, MARK_PROVIDER="replay"))


@pytest.mark.asyncio
async def test_replay_client_records_what_agents_send() -> None:
    client = replay_client(["one"])
    await client.create([UserMessage(content="question", source="user")])
    assert client.create_calls[0]["messages"][0].content == "question"
    assert client.model_info["structured_output"] is True


def test_describe_provider_never_loads_anything(tmp_path: Path) -> None:
    local = describe_provider(_settings(tmp_path))
    assert local["provider"] == "local"
    assert local["model_path"] == str(tmp_path / "home" / "models" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")
    assert not (tmp_path / "home").exists()
    remote = describe_provider(
        _settings(tmp_path, MARK_PROVIDER="openai", MARK_MODEL="smollm2", MARK_BASE_URL="http://127.0.0.1:8/v1")
    )
    assert remote == {
        "provider": "openai",
        "model": "smollm2",
        "base_url": "http://127.0.0.1:8/v1",
        "model_path": None,
        "replay_file": None,
        "threads": None,
    }
    assert local["threads"] == "1" and describe_provider(_settings(tmp_path, MARK_THREADS="3"))["threads"] == "3"
