"""``mark chat`` sessions: commands, corrections as SME, and building the session on exit."""

from __future__ import annotations

import pytest

from agents.interactive import HELP, ChatSession
from memory.engine import MemoryEngine
from memory.models import MemoryType, Source, Status
from tests.conftest import NOW
from tests.scenarios.fake_society import society


async def test_session_commands_and_build_on_exit(engine: MemoryEngine) -> None:
    engine.add(
        "Tropicamide drops: the correct answer is A) 0.01 for the strength question.",
        MemoryType.RESIDUAL,
        "sme",
        source=Source.SME,
        now=NOW,
    )
    lines = iter(
        [
            "y",  # may this session be kept in memory?
            "Concentration of tropicamide:\nA) 0.01\nB) 0.02",
            "/feedback good",
            "/remember I prefer answers as decimals",
            "/memories",
            "/bogus",
            "/quit",
        ]
    )
    printed: list[str] = []
    session = ChatSession(engine, society(), "alice", session_id="s1", sme=False)
    report = await session.loop(input_fn=lambda prompt: next(lines), print_fn=printed.append)
    assert printed[1].startswith("Answer: A")  # the shared residual memory was injected
    assert printed[2] == "feedback recorded on 1 memory"
    assert printed[3].startswith("created: I prefer answers as decimals")
    assert "I prefer answers as decimals" in printed[4] and printed[5] == HELP
    assert report is not None and report.conversation_id == "chat:alice:s1"
    assert printed[-1].startswith("session built into memory")
    # alice only asked: with no statement after the question nothing shared is stored, and the build says why
    assert [r for r in engine.list("alice") if r.type is MemoryType.RESIDUAL and r.user_id == "alice"] == []
    assert any("no expert statement" in note for note in report.notes)


async def test_correct_as_sme_and_forget(engine: MemoryEngine) -> None:
    session = ChatSession(engine, society(), "dr-x", sme=True)
    reply = await session.say("Concentration of tropicamide:\nA) 0.01\nB) 0.02")
    assert reply.startswith("Answer: B")
    await session.command("/correct The correct answer is A) 0.01: drops are 0.5-1%.")
    assert [t.role for t in session.turns] == ["user", "assistant", "sme", "assistant"]
    # four turns (build_every) were built as they were said: nothing is left for the end
    assert await session.finish() is None and len(session.reports) == 1
    assert any(r.type is MemoryType.RESIDUAL and r.status is Status.ACTIVE for r in engine.list("dr-x"))
    mine = [r for r in engine.list("dr-x") if r.user_id == "dr-x" and not r.shared]
    assert (await session.command(f"/forget {mine[0].id[:10]}")).startswith("forgot")
    with pytest.raises(KeyError):
        await session.command("/forget nothing-like-this")


async def test_empty_session_builds_nothing(engine: MemoryEngine) -> None:
    session = ChatSession(engine, society(), "quiet")
    assert await session.loop(input_fn=lambda prompt: (_ for _ in ()).throw(EOFError), print_fn=lambda s: None) is None
