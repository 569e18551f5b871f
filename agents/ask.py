"""One-shot question answering through a single AutoGen ``AssistantAgent`` (``mark ask``).

With a :class:`~agents.chatbot.MarkMemory`, the answer is knowledge-first: the most relevant knowledge
passages and the top memory of each type are injected, and the passages come back as citations.
"""

from __future__ import annotations

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.messages import TextMessage
from autogen_core.models import ChatCompletionClient
from pydantic import BaseModel, ConfigDict, Field

from agents.chatbot import MarkMemory
from agents.errors import ProviderError
from agents.injection import Citation
from agents.providers import ping
from prompts import render


class Answer(BaseModel):
    """An answer with what it was given: the knowledge passages (citations) and the memories injected."""

    model_config = ConfigDict(extra="forbid")

    answer: str
    citations: list[Citation] = Field(default_factory=list)
    memories: list[str] = Field(default_factory=list)  # ids of the memories injected


async def ask(
    client: ChatCompletionClient,
    question: str,
    domain: str = "general",
    endpoint: str | None = None,
    memory: MarkMemory | None = None,
) -> Answer:
    """Ask ``question`` once and return the assistant's final text with its citations.

    The endpoint is pinged first, so a server that is down gives one clear :class:`ProviderError`
    line instead of an agent traceback.
    """
    await ping(client, endpoint=endpoint)
    agent = AssistantAgent(
        "chatbot",
        model_client=client,
        system_message=render("ask", domain=domain),
        memory=[memory] if memory is not None else None,
        model_client_stream=False,
    )
    result = await agent.run(task=question)
    replies = [m for m in result.messages if isinstance(m, TextMessage) and m.source == "chatbot"]
    if not replies:
        raise ProviderError("the model returned no text answer")
    cited = memory.cited[-1] if memory is not None and memory.cited else []
    injected = memory.injected[-1] if memory is not None and memory.injected else []
    return Answer(answer=replies[-1].content.strip(), citations=cited, memories=injected)
