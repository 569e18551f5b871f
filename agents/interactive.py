"""``mark chat``: an interactive session with memory, built into memory as it goes.

Every turn is written to the user's episodic history the moment it is said (:mod:`memory.episodic`),
and held in a working memory of the last ``HistoryConfig.working_turns`` turns (:mod:`memory.working`).
When turns leave working memory, or every ``build_every`` new turns (debounced), the turns not yet
built go through the memory-building team and the user's profile is updated from their own lines; how
far a session was built is saved with it. So a chat killed at any moment loses at most the turn being
answered: its earlier turns are events, and ``mark chat --session ID`` (or the next chat of the user)
builds whatever was not built yet.

Consent (``MARK_CHAT_CONSENT``): with ``ask`` (the default) the chat asks once at the start whether the
session may be kept in memory; on no (the default answer), and always with ``never``, nothing of the
session is written: no history events, no memories built, no profile, and ``/remember`` is refused.

Commands: ``/correct TEXT`` (act as the SME: correct the last answer), ``/feedback good|bad`` (on
the memories injected into the last answer), ``/remember TEXT``, ``/forget ID|all``, ``/memories``,
``/help``, ``/quit``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from autogen_core.models import ChatCompletionClient

from agents.building import BuildReport, BuildState, ReviewPolicy, Turn
from agents.chatbot import MarkMemory, build_chatbot
from agents.checks import remember_with_judge
from agents.profile_update import update_profile
from agents.team import build_memories
from mark.errors import MarkError, one_line
from memory.config import Consent
from memory.engine import MemoryEngine, UnknownMemoryError
from memory.history import Speaker
from memory.ingest import ParsedTurn
from memory.models import Source, VoterRole
from memory.working import WorkingMemory, WorkingTurn

HELP = (
    "/correct TEXT  correct the last answer as the expert | /feedback good|bad  rate the memories just used\n"
    "/remember TEXT  keep a fact or preference | /forget ID|all  erase your memories\n"
    "/memories  what I can use for you | /quit  end (what is left of the session is then built into memory)"
)
AGENT = "chatbot"
HISTORY_EVENTS = 3  # turns of the user's earlier sessions injected with each answer
CONSENT_QUESTION = "May this session be kept in memory? [y/N] "
NOT_KEPT = "this session is not kept in memory: nothing of it is written"


class ChatSession:
    """One interactive session of one user."""

    def __init__(
        self,
        engine: MemoryEngine,
        client: ChatCompletionClient,
        user_id: str,
        *,
        session_id: str | None = None,
        domain: str = "medicine",
        sme: bool = False,
        clock: Callable[[], datetime] | None = None,
        keep: bool | None = None,
    ) -> None:
        """Start (or resume, when ``session_id`` has turns) a session; ``sme`` marks a trusted expert.

        ``keep``: may the session be written into memory; None follows ``MARK_CHAT_CONSENT`` (``ask``:
        :meth:`loop` asks first; a session driven without ``loop`` is kept unless the setting is ``never``).
        """
        self.engine, self.client, self.user_id, self.domain = engine, client, user_id, domain
        self.session_id = session_id or uuid.uuid4().hex[:8]
        self.source = Source.SME if sme else Source.USER
        self.role = VoterRole.SME if sme else VoterRole.USER
        self.clock = clock or (lambda: datetime.now(UTC))
        self.history = engine.episodes
        cfg = self.history.config
        self.consent = cfg.chat_consent if keep is None else (Consent.ALWAYS if keep else Consent.NEVER)
        self.keep = self.consent is not Consent.NEVER
        self.working = WorkingMemory(cfg.working_turns)
        self.build_every = cfg.build_every
        self.memory = MarkMemory(
            engine, user_id, knowledge=engine.knowledge, profile=AGENT, events=HISTORY_EVENTS, session=self.session_id
        )
        self.bot = build_chatbot(client, self.memory, domain)
        stored = self.history.store.session(user_id, self.session_id)
        self.turns: list[Turn] = [Turn(role=_role(e.speaker), content=e.text) for e in stored]
        self.built = self.history.store.built_turn(user_id, self.session_id)
        self.reports: list[BuildReport] = []

    def _record(self, role: str, text: str) -> list[WorkingTurn]:
        """Write a turn to the history at once (durable) and to working memory; returns what it evicted."""
        index, now = len(self.turns), self.clock()
        self.turns.append(Turn(role=role, content=text))
        parsed = ParsedTurn(session_id=self.session_id, turn=index, speaker=Speaker.parse(role), text=text, at=now)
        if self.keep:
            self.history.add(self.history.events_of(self.user_id, [parsed], f"chat:{self.session_id}", now))
        return self.working.push(WorkingTurn(role=role, text=text, at=now, index=index))

    async def say(self, text: str, role: str = "user") -> str:
        """Send a message (or a correction) and return the chatbot's reply."""
        evicted = self._record(role, text)
        prefix = "Correction from the expert: " if role == "sme" else ""
        result = await self.bot.run(task=prefix + text)
        reply = result.messages[-1].to_text() if result.messages else ""
        evicted += self._record("assistant", reply)
        if evicted or len(self.turns) - self.built >= self.build_every:
            await self.build()
        return reply + self.sources()

    def sources(self) -> str:
        """The knowledge passages given to the last answer, as a "Sources:" line ("" when none)."""
        cited = self.memory.cited[-1] if self.memory.cited else []
        return "\nSources: " + "; ".join(c.describe() for c in cited) if cited else ""

    async def command(self, line: str) -> str:
        """Run one slash command and return what to print."""
        name, _, arg = line[1:].partition(" ")
        arg = arg.strip()
        if name == "correct" and arg:
            return await self.say(arg, role="sme")
        if name == "feedback" and arg in {"good", "bad"}:
            used = self.memory.injected[-1] if self.memory.injected else []
            for memory_id in used:
                self.engine.feedback(memory_id, arg == "good", actor=f"user:{self.user_id}", role=self.role)
            return f"feedback recorded on {len(used)} memor{'y' if len(used) == 1 else 'ies'}"
        if name == "remember" and arg and not self.keep:
            return NOT_KEPT
        if name == "remember" and arg:
            result = await remember_with_judge(self.engine, self.client, arg, self.user_id)
            return f"{result.action}: {result.record.text}"
        if name == "forget" and arg:
            return self._forget(arg)
        if name == "memories":
            records = self.engine.list(self.user_id)
            return "\n".join(f"{r.id[:12]} [{r.type.value}/{r.status.value}] {r.text}" for r in records) or "none"
        return HELP

    def _forget(self, arg: str) -> str:
        if arg == "all":
            return f"forgot {self.engine.forget_user(self.user_id)} personal memories"
        matches = [r for r in self.engine.list(self.user_id) if r.id.startswith(arg) and r.user_id == self.user_id]
        if len(matches) != 1:
            raise UnknownMemoryError(arg)
        self.engine.forget(matches[0].id, self.user_id)
        return f"forgot {matches[0].id}"

    async def build(self) -> BuildReport | None:
        """Build the turns not built yet into memory and the profile; save how far the session is built."""
        pending = self.turns[self.built :]
        if not self.keep or not any(t.role == "assistant" for t in pending):
            return None
        state = BuildState(
            pending,
            self.user_id,
            source=self.source,
            policy=ReviewPolicy.AUTO,
            domain=self.domain,
            conversation_id=f"chat:{self.user_id}:{self.session_id}",
            situation="",  # a chat may cover many subjects: no applicability check
            keep_transcript=False,  # every turn of a chat is in the history already
        )
        await build_memories(self.engine, self.client, state)
        said = [t.content for t in pending if t.role in {"user", "sme"}]
        where = f"chat {self.session_id}, turns {self.built}-{len(self.turns) - 1}"
        profiled = await update_profile(
            self.engine, self.client, self.user_id, said, now=self.clock(), domain=self.domain, provenance=where
        )
        if profiled.error:
            state.errors.append(profiled.error)
        state.notes += [f"profile: {c.entry.key} = {c.entry.value}" for c in profiled.changes]
        self.built = len(self.turns)
        self.history.store.set_built_turn(self.user_id, self.session_id, self.built)
        report = state.report()
        self.reports.append(report)
        return report

    async def finish(self) -> BuildReport | None:
        """Build what is left of the session (None when nothing new was said)."""
        return await self.build()

    async def loop(self, input_fn: Callable[[str], str], print_fn: Callable[[str], Any]) -> BuildReport | None:
        """Read lines until /quit or end of input, then build the session into memory."""
        print_fn(f"mark chat: user {self.user_id}, session {self.session_id}. /help for commands.")
        if self.consent is Consent.ASK:
            self.keep = _agrees(input_fn, CONSENT_QUESTION)
        if not self.keep:
            print_fn(NOT_KEPT)
        while True:
            try:
                line = input_fn("you> ").strip()
            except EOFError:
                break
            if not line:
                continue
            if line in {"/quit", "/exit"}:
                break
            try:
                print_fn(await self.command(line) if line.startswith("/") else await self.say(line))
            except (MarkError, ValueError) as exc:  # a bad command line: say why and read the next one
                print_fn(f"error: {one_line(exc)}")
        report = await self.finish()
        if report:
            counts = {t: sum(n.values()) for t, n in report.counts.items()}
            print_fn(f"session built into memory: {counts}")
        return report if report is not None else (self.reports[-1] if self.reports else None)


def _agrees(input_fn: Callable[[str], str], question: str) -> bool:
    """Whether the answer to a yes/no question is yes (no answer, or end of input, is no)."""
    try:
        return input_fn(question).strip().lower() in {"y", "yes"}
    except EOFError:
        return False


def _role(speaker: Speaker) -> str:
    """A history speaker as a transcript role."""
    return speaker.value if speaker.value in {"user", "assistant", "sme", "system"} else "user"
