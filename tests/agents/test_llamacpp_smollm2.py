"""The real llama.cpp path, on the tiny SmolLM2-135M GGUF: loading, JSON grammar, limits, an agent."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.messages import StructuredMessage
from autogen_core.models import UserMessage
from pydantic import BaseModel

from agents.providers import LocalChatClient, TruncatedOutputError, build_client, ping
from memory.config import Settings, load_settings

QUESTION = [UserMessage(content="Is Paris the capital of France? Answer in JSON.", source="user")]


class Verdict(BaseModel):
    subject: str
    correct: bool


@pytest.fixture
def local_settings(tmp_path: Path, smollm2_path: Path) -> Settings:
    env = {
        "MARK_HOME": str(tmp_path / "home"),
        "MARK_PROVIDER": "local",
        "MARK_MODEL_PATH": str(smollm2_path),
        "MARK_N_CTX": "1024",
        "MARK_THREADS": "1",
        "MARK_MAX_TOKENS": "48",
    }
    return load_settings(env=env)


@pytest.fixture
def client(local_settings: Settings) -> LocalChatClient:
    built = build_client(local_settings)
    assert isinstance(built, LocalChatClient)
    return built


@pytest.mark.asyncio
async def test_json_output_model_is_grammar_constrained(client: LocalChatClient) -> None:
    result = await client.create(QUESTION, json_output=Verdict)
    assert result.finish_reason == "stop"
    assert isinstance(result.content, str)
    Verdict.model_validate_json(result.content)


@pytest.mark.asyncio
async def test_settings_sampling_is_injected_and_a_call_can_override_it(client: LocalChatClient) -> None:
    assert client.default_create_args == {"temperature": 0.0, "max_tokens": 48}
    story = [UserMessage(content="Tell a very long story about a lighthouse keeper.", source="user")]
    capped = await client.create(story)
    assert capped.finish_reason == "length"  # plain text cut at the limit is returned, flagged
    assert capped.usage.completion_tokens == 48
    shorter = await client.create(story, extra_create_args={"max_tokens": 4})
    assert shorter.usage.completion_tokens == 4


@pytest.mark.asyncio
async def test_cut_off_json_raises_with_the_partial_result(client: LocalChatClient) -> None:
    with pytest.raises(TruncatedOutputError, match="cut off at max_tokens=3") as info:
        await client.create(QUESTION, json_output=Verdict, extra_create_args={"max_tokens": 3})
    assert info.value.result.finish_reason == "length"
    assert isinstance(info.value.result.content, str)
    assert info.value.result.content.startswith("{")


@pytest.mark.asyncio
async def test_one_llama_is_shared_and_concurrent_calls_are_serialised(local_settings: Settings) -> None:
    first, second = build_client(local_settings), build_client(local_settings)
    assert isinstance(first, LocalChatClient) and isinstance(second, LocalChatClient)
    assert first._shared is second._shared
    prompts = [[UserMessage(content=f"Say the number {i}.", source="user")] for i in range(3)]
    results = await asyncio.gather(
        *(
            c.create(p, extra_create_args={"max_tokens": 6})
            for c, p in zip([first, second, first], prompts, strict=True)
        )
    )
    assert all(r.content for r in results)
    await ping(first)


@pytest.mark.asyncio
async def test_assistant_agent_returns_a_structured_message(client: LocalChatClient) -> None:
    agent = AssistantAgent("checker", model_client=client, output_content_type=Verdict)
    result = await agent.run(task="Is Paris the capital of France?")
    last = result.messages[-1]
    assert isinstance(last, StructuredMessage)
    assert isinstance(last.content, Verdict)


def test_agents_with_tools_fail_loudly_on_the_local_model(client: LocalChatClient) -> None:
    def lookup(term: str) -> str:
        """Look a term up."""
        return term

    with pytest.raises(ValueError, match="function calling"):
        AssistantAgent("tooled", model_client=client, tools=[lookup])
