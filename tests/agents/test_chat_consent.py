"""Consent before a chat is kept in memory (``MARK_CHAT_CONSENT``): ask (default), always, never."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agents.interactive import CONSENT_QUESTION, NOT_KEPT, ChatSession
from memory.config import Consent, HistoryConfig, load_settings
from memory.engine import MemoryEngine
from memory.profiles import owner_of
from tests.scenarios.fake_society import society

# "I am a baker" makes the fake profile extractor set an occupation; four turns (build_every) build memories
LINES = ["I am a baker.", "My oven burns bread at 250 degrees.", "/remember I like rye", "/quit"]


async def _run(engine: MemoryEngine, answers: list[str]) -> tuple[list[str], list[str]]:
    """Drive ``mark chat``'s loop; returns (the prompts it asked, what it printed)."""
    lines: Iterator[str] = iter(answers + LINES)
    asked: list[str] = []
    printed: list[str] = []

    def read(prompt: str) -> str:
        asked.append(prompt)
        return next(lines)

    await ChatSession(engine, society(), "ola", session_id="c1").loop(read, printed.append)
    return asked, printed


def _written(engine: MemoryEngine) -> tuple[int, int, int]:
    """(history events, personal memories, profile entries) of the chatting user."""
    events = engine.episodes.store.count("ola", status=None)
    memories = [r for r in engine.list("ola") if r.user_id == "ola"]
    profile = engine.episodes.profiles.current(owner_of(user_id="ola"))
    return events, len(memories), len(profile)


@pytest.mark.parametrize("answer", ["n", "", "whatever"])
async def test_no_keeps_nothing_of_the_session(engine: MemoryEngine, answer: str) -> None:
    asked, printed = await _run(engine, [answer])
    assert asked[0] == CONSENT_QUESTION
    assert printed.count(NOT_KEPT) == 2  # once at the start, once for /remember
    assert _written(engine) == (0, 0, 0)
    assert engine.audit.count() == 0  # no memory, profile or history event was audited either


async def test_yes_keeps_the_session(engine: MemoryEngine) -> None:
    asked, printed = await _run(engine, ["Y"])
    assert asked[0] == CONSENT_QUESTION and NOT_KEPT not in printed
    events, memories, profile = _written(engine)
    assert events == 4 and memories >= 1 and profile == 1
    assert any(line.startswith("created: I like rye") for line in printed)


async def test_end_of_input_at_the_question_is_no(engine: MemoryEngine) -> None:
    def closed(prompt: str) -> str:
        raise EOFError

    session = ChatSession(engine, society(), "ola")
    assert await session.loop(closed, lambda s: None) is None
    assert session.keep is False and _written(engine) == (0, 0, 0)


@pytest.mark.parametrize(("consent", "kept"), [(Consent.ALWAYS, True), (Consent.NEVER, False)])
async def test_always_and_never_do_not_ask(engine: MemoryEngine, consent: Consent, kept: bool) -> None:
    engine.episodes.config = HistoryConfig(chat_consent=consent)
    asked, _ = await _run(engine, [])
    assert CONSENT_QUESTION not in asked
    assert (_written(engine)[0] == 4) is kept


def test_the_setting_comes_from_the_environment(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    assert load_settings(env={"MARK_HOME": home, "MARK_CHAT_CONSENT": "never"}).history.chat_consent is Consent.NEVER
    assert load_settings(env={"MARK_HOME": home}).history.chat_consent is Consent.ASK
