"""The knowledge-first chatbot (MARK M5) and :class:`MarkMemory`, mark's AutoGen ``Memory``.

Any AutoGen ``AssistantAgent`` can use mark memory: ``AssistantAgent(..., memory=[MarkMemory(engine,
user_id="alice")])``. Before each model call the top memory of each type is retrieved for the
latest user message and, with a knowledge base, the most relevant passages; both are injected as one
clearly delimited system message (:mod:`agents.injection`), the memories are counted as recalled and
the passages are kept as the answer's citations.
"""

from __future__ import annotations

import re
from typing import Any

from autogen_agentchat.agents import AssistantAgent
from autogen_core import CancellationToken
from autogen_core.memory import Memory, MemoryContent, MemoryMimeType, MemoryQueryResult, UpdateContextResult
from autogen_core.model_context import BufferedChatCompletionContext, ChatCompletionContext
from autogen_core.models import ChatCompletionClient, SystemMessage, UserMessage
from pydantic import BaseModel, ConfigDict

from agents.client_wrappers import TokenCappedClient
from agents.injection import Citation, citations, context_block, memory_block
from memory.engine import MemoryEngine
from memory.history import HistoryEvent
from memory.knowledge import KnowledgeBase
from memory.knowledge_models import KnowledgeHit
from memory.models import MemoryType, Source
from memory.profiles import owner_of, profile_lines
from memory.search import SearchHit
from prompts import render

__all__ = ["Citation", "MarkMemory", "build_chatbot", "memory_block", "needs_retrieval"]

_SMALL_TALK = re.compile(
    r"^\s*(hi|hello|hey|thanks?|thank you|ok(ay)?|bye|good (morning|evening|night)|how are you)\b[\s!.?]*$", re.I
)
_ARITHMETIC = re.compile(r"^\s*(what is\s+)?[\d\s+\-*/().^%=]+\??\s*$", re.I)


def needs_retrieval(query: str) -> bool:
    """The S3 classifier gate: skip memory retrieval for small talk and bare arithmetic."""
    text = query.strip()
    return not (len(text) < 3 or _SMALL_TALK.match(text) or _ARITHMETIC.match(text))


class Retrieved(BaseModel):
    """What one question retrieved: memories, knowledge passages, profile lines, earlier turns, and the block."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    hits: list[SearchHit]
    passages: list[KnowledgeHit]
    profile: tuple[list[str], list[str]]
    events: list[HistoryEvent]
    block: str  # the system text injected ("" when there is nothing to inject)


class MarkMemory(Memory):
    """AutoGen ``Memory`` over the mark engine (and an optional knowledge base) for one user."""

    component_type = "memory"

    def __init__(
        self,
        engine: MemoryEngine,
        user_id: str,
        *,
        k: int = 1,
        preset: str | None = None,
        risk: str = "medium",
        agent: str | None = None,
        gate: bool = True,
        knowledge: KnowledgeBase | None = None,
        memories: bool = True,
        profile: str | None = None,
        events: int = 0,
        session: str | None = None,
    ) -> None:
        """Serve ``user_id``'s memories (plus shared domain memories), ``k`` per type.

        With ``knowledge``, the most relevant passages are injected too (``KnowledgeConfig.inject_*``);
        ``memories=False`` injects knowledge only (a knowledge-only baseline). ``profile`` names the
        agent whose profile goes in with the user's (both always injected, bounded); ``events`` is how
        many turns of the user's history to inject, leaving out ``session`` (already in the context).
        """
        self.engine, self.user_id, self.k, self.preset, self.risk = engine, user_id, k, preset, risk
        self.agent, self.gate, self.knowledge, self.memories = agent, gate, knowledge, memories
        self.profile, self.events, self.session = profile, events, session
        self.injected: list[list[str]] = []  # memory ids injected into each answer
        self.cited: list[list[Citation]] = []  # knowledge passages given to each answer
        self.skipped: int = 0

    async def update_context(self, model_context: ChatCompletionContext) -> UpdateContextResult:
        """Inject the passages and top memories for the latest user message; count the memories as recalled."""
        messages = await model_context.get_messages()
        query = next((m.content for m in reversed(messages) if isinstance(m, UserMessage)), "")
        if not isinstance(query, str) or (self.gate and not needs_retrieval(query)):
            self.skipped += 1
            self.injected.append([])
            self.cited.append([])
            return UpdateContextResult(memories=MemoryQueryResult(results=[]))
        got = self.retrieve(query)
        self.injected.append([h.record.id for h in got.hits])
        self.cited.append(citations(got.passages))
        if got.block:
            await model_context.add_message(SystemMessage(content=got.block))
        if got.hits:
            self.engine.mark_injected([h.record.id for h in got.hits], actor=f"chatbot:{self.user_id}")
        hits, passages = got.hits, got.passages
        found = [_passage(h) for h in passages] + [_content(h) for h in hits]
        return UpdateContextResult(memories=MemoryQueryResult(results=found))

    def retrieve(self, query: str) -> Retrieved:
        """What this memory gives an answer to ``query`` (nothing is counted as recalled here)."""
        hits = self._search(query) if self.memories else []
        passages = self._passages(query)
        profile = self._profile()
        earlier = self._events(query)
        block = context_block(passages, hits, profile, earlier) if hits or passages or any(profile) or earlier else ""
        return Retrieved(hits=hits, passages=passages, profile=profile, events=earlier, block=block)

    def _profile(self) -> tuple[list[str], list[str]]:
        if self.profile is None:
            return [], []
        profiles = self.engine.episodes.profiles
        mine = profile_lines(profiles.current(owner_of(user_id=self.user_id)))
        return mine, profile_lines(profiles.current(owner_of(agent=self.profile)))

    def _events(self, query: str) -> list[HistoryEvent]:
        if self.events <= 0:
            return []
        hits = self.engine.episodes.search(
            self.user_id, query, k=self.events + self.engine.episodes.config.working_turns
        )
        return [h.event for h in hits if h.event.session_id != self.session][: self.events]

    def _passages(self, query: str) -> list[KnowledgeHit]:
        return self.knowledge.relevant([query])[0] if self.knowledge is not None else []

    def _search(self, query: str) -> list[SearchHit]:
        result = self.engine.search(query, self.user_id, k=self.k, preset=self.preset, risk=self.risk, agent=self.agent)
        return [hit for hits in result.hits.values() for hit in hits]

    async def query(
        self, query: str | MemoryContent, cancellation_token: CancellationToken | None = None, **kwargs: Any
    ) -> MemoryQueryResult:
        """Search without injecting (recall counts are unchanged)."""
        text = query if isinstance(query, str) else str(query.content)
        return MemoryQueryResult(results=[_content(h) for h in self._search(text)])

    async def add(self, content: MemoryContent, cancellation_token: CancellationToken | None = None) -> None:
        """Store content as a personal user-question memory of this user."""
        self.engine.add(str(content.content), MemoryType.USER_QUESTION, self.user_id, source=Source.USER)

    async def clear(self) -> None:
        """Forget every personal memory of this user (domain memories stay)."""
        self.engine.forget_user(self.user_id)

    async def close(self) -> None:
        """Nothing to release: the engine is owned by the caller."""


def _content(hit: SearchHit) -> MemoryContent:
    meta = {"id": hit.record.id, "type": hit.record.type.value, "score": hit.score}
    return MemoryContent(content=hit.record.text, mime_type=MemoryMimeType.TEXT, metadata=meta)


def _passage(hit: KnowledgeHit) -> MemoryContent:
    meta = {"id": hit.chunk.id, "type": "knowledge", "citation": hit.chunk.citation(), "score": hit.similarity}
    return MemoryContent(content=hit.chunk.text, mime_type=MemoryMimeType.TEXT, metadata=meta)


ANSWER_TOKENS = 160
CONTEXT_MESSAGES = 12


def build_chatbot(
    client: ChatCompletionClient,
    memory: MarkMemory | None = None,
    domain: str = "medicine",
    name: str = "chatbot",
    max_tokens: int = ANSWER_TOKENS,
) -> AssistantAgent:
    """The knowledge-first chatbot, with mark memory injected when given; answers capped at ``max_tokens``."""
    return AssistantAgent(
        name,
        model_client=TokenCappedClient(client, max_tokens),
        # a long chat must not overflow a 4k local context: keep the last turns (and their memory blocks)
        model_context=BufferedChatCompletionContext(buffer_size=CONTEXT_MESSAGES),
        system_message=render("chatbot", domain=domain),
        memory=[memory] if memory is not None else None,
        model_client_stream=False,
        description="Answers domain questions knowledge-first, using refined memories.",
    )
