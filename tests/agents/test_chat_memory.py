"""``mark chat`` keeps working memory, builds as it goes, survives a real kill, and keeps a profile current."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

from agents.interactive import ChatSession
from memory.config import HistoryConfig, load_settings
from memory.embedder import HashingEmbedder
from memory.engine import MemoryEngine
from memory.profiles import owner_of
from tests.conftest import HASHING_CONFIG, NOW
from tests.scenarios.fake_society import society

ROOT = Path(__file__).resolve().parents[2]


def _clock() -> Iterator[object]:
    minute = 0
    while True:
        minute += 1
        yield NOW + timedelta(minutes=minute)


def _engine(home: Path, **history: int) -> MemoryEngine:
    settings = load_settings(env={"MARK_HOME": str(home), "MARK_EMBEDDER": "hashing", "MARK_PROVIDER": "replay"})
    settings.history = HistoryConfig(**history)  # type: ignore[arg-type]
    return MemoryEngine.open(settings, embedder=HashingEmbedder(), config=HASHING_CONFIG)


async def test_turns_are_events_at_once_and_builds_are_debounced(tmp_path: Path) -> None:
    engine = _engine(tmp_path / "home", working_turns=4, build_every=4)
    ticks = _clock()
    try:
        chat = ChatSession(engine, society(), "nia", session_id="s1", clock=lambda: next(ticks))  # type: ignore[arg-type,return-value]
        await chat.say("I am a night nurse.")
        # two turns (question, reply) are events already; nothing built yet (debounced)
        assert engine.episodes.store.count("nia") == 2 and chat.reports == []
        await chat.say("What is the usual strength of tropicamide drops?")
        # four new turns: built once, and the session says so
        assert len(chat.reports) == 1 and engine.episodes.store.built_turn("nia", "s1") == 4
        assert [e.value for e in engine.episodes.profiles.current(owner_of("nia"))] == ["night nurse"]
        await chat.say("Actually I am a surgeon now.")
        # working memory holds 4 turns: the fifth and sixth push the oldest out, which builds at once
        assert len(chat.working) == 4 and len(chat.reports) == 2
        # the newer occupation supersedes the older one; both stay in the profile's history
        profiles = engine.episodes.profiles
        assert [e.value for e in profiles.current(owner_of("nia"))] == ["surgeon now"]
        assert [(e.value, e.status) for e in profiles.history(owner_of("nia"), "occupation")] == [
            ("night nurse", "superseded"),
            ("surgeon now", "current"),
        ]
        assert [e.kind.value for e in engine.audit.history(profiles.history(owner_of("nia"), "occupation")[0].id)] == [
            "profile_set"
        ]
        # the events keep the chat's own times
        assert [e.at for e in engine.episodes.store.events("nia")][:2] == [
            NOW + timedelta(minutes=1),
            NOW + timedelta(minutes=2),
        ]
    finally:
        engine.close()


async def test_a_later_session_gets_the_profile_and_earlier_turns(tmp_path: Path) -> None:
    engine = _engine(tmp_path / "home", working_turns=4, build_every=2)
    try:
        first = ChatSession(engine, society(), "nia", session_id="s1")
        await first.say("I am a night nurse. My left knee hurts on stairs.")
        client = society()
        second = ChatSession(engine, client, "nia", session_id="s2")
        await second.say("What did I tell you about my knee?")
        prompt = "\n".join(str(m.content) for m in client.calls[0][0])
        assert "<user_fact>occupation: night nurse</user_fact>" in prompt
        assert "My left knee hurts on stairs" in prompt and "<history>" in prompt
    finally:
        engine.close()


DRIVER = """
import asyncio, sys
from memory.config import HistoryConfig, load_settings
from memory.embedder import HashingEmbedder
from memory.engine import MemoryEngine
from agents.interactive import ChatSession
from tests.conftest import HASHING_CONFIG
from tests.scenarios.fake_society import society

settings = load_settings()
settings.history = HistoryConfig(working_turns=8, build_every=4)
engine = MemoryEngine.open(settings, embedder=HashingEmbedder(), config=HASHING_CONFIG)
chat = ChatSession(engine, society(), "kai", session_id="k1", keep=True)

def read(prompt):
    print("READY", len(chat.turns), chat.built, flush=True)
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line

asyncio.run(chat.loop(input_fn=read, print_fn=lambda s: None))
"""


def _wait_for(proc: subprocess.Popen[str], turns: int) -> str:
    assert proc.stdout is not None
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if line.startswith("READY") and int(line.split()[1]) >= turns:
            return line
    raise AssertionError("the chat did not answer in time")


def test_a_killed_chat_loses_at_most_the_turn_being_answered(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {**os.environ, "MARK_HOME": str(home), "MARK_EMBEDDER": "hashing", "PYTHONPATH": str(ROOT)}
    with subprocess.Popen(
        [sys.executable, "-c", DRIVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT
    ) as proc:
        assert proc.stdin is not None
        try:
            _wait_for(proc, 0)
            for n, line in enumerate(
                ["I am a baker.", "My oven burns bread at 250 degrees.", "What flour is best?"], 1
            ):
                proc.stdin.write(line + "\n")
                proc.stdin.flush()
                ready = _wait_for(proc, 2 * n)
            assert ready.split()[1:] == ["6", "4"]  # six turns said, four built (debounced at four)
            proc.stdin.write("A fourth question that is being answered when the process dies.\n")
            proc.stdin.flush()
            os.kill(proc.pid, signal.SIGKILL)  # a real kill: no cleanup, no /quit
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == -signal.SIGKILL
    engine = _engine(home, working_turns=8, build_every=4)
    try:
        said = [e.text for e in engine.episodes.store.session("kai", "k1")]
        # every answered turn survived; the one in flight may or may not have been written
        assert said[:6] == [
            "I am a baker.",
            said[1],
            "My oven burns bread at 250 degrees.",
            said[3],
            "What flour is best?",
            said[5],
        ]
        assert len(said) in (6, 7, 8)
        assert engine.episodes.store.built_turn("kai", "k1") == 4
        assert [e.value for e in engine.episodes.profiles.current(owner_of("kai"))] == ["baker"]
        # resuming the session builds what the killed process had not built
        resumed = ChatSession(engine, society(), "kai", session_id="k1")
        assert resumed.built == 4 and len(resumed.turns) == len(said)
    finally:
        engine.close()
