"""One-shot question answering through a single AutoGen ``AssistantAgent`` (``mark ask``)."""

from __future__ import annotations

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.messages import TextMessage
from autogen_core.models import ChatCompletionClient

from agents.errors import ProviderError
from agents.providers import ping
from prompts import render


async def ask(client: ChatCompletionClient, question: str, domain: str = "general", endpoint: str | None = None) -> str:
    """Ask ``question`` once and return the assistant's final text.

    The endpoint is pinged first, so a server that is down gives one clear :class:`ProviderError`
    line instead of an agent traceback.
    """
    await ping(client, endpoint=endpoint)
    agent = AssistantAgent(
        "chatbot", model_client=client, system_message=render("ask", domain=domain), model_client_stream=False
    )
    result = await agent.run(task=question)
    replies = [m for m in result.messages if isinstance(m, TextMessage) and m.source == "chatbot"]
    if not replies:
        raise ProviderError("the model returned no text answer")
    return replies[-1].content.strip()
