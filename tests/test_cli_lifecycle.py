"""Scenario, lifecycle and build commands through the real entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import cli


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MARK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MARK_EMBEDDER", "hashing")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_scenario_list_and_validate(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "scenario", "list", "--json")
    names = {row["name"] for row in json.loads(out)}
    assert code == 0 and {"tropicamide", "medmcqa-sme", "preference-change", "multi-user"} <= names
    code, out, _ = run(capsys, "scenario", "validate", "tropicamide", "multi-user")
    assert code == 0 and "ok: tropicamide" in out


def test_invalid_scenario_file_names_file_line_field(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = home / "bad.yaml"
    bad.write_text("name: x\nusers:\n  - id: a\nsessions:\n  - id: s\n    user: ghost\n    steps:\n      - say: hi\n")
    code, _, err = run(capsys, "scenario", "validate", str(bad))
    assert code == 2 and f"{bad}:6: sessions.0.user: session s: user 'ghost' is not in users" in err
    code, _, err = run(capsys, "lifecycle", "run", "--scenario", "no-such-scenario")
    assert code == 2 and "no scenario 'no-such-scenario'" in err


def test_demo_uses_the_cores_unless_threads_are_configured(home: Path) -> None:
    from memory.config import load_settings

    unset = load_settings(env={"MARK_HOME": str(home)})
    assert cli.demo_threads(None, unset, 2) == 2
    assert cli.demo_threads(None, unset, 64) == 8 and cli.demo_threads(None, unset, None) == 1
    assert cli.demo_threads(3, unset, 2) == 3  # --threads wins
    configured = load_settings(env={"MARK_HOME": str(home), "MARK_THREADS": "1"})
    assert cli.demo_threads(None, configured, 16) is None  # keep MARK_THREADS / mark.toml
    (home / "mark.toml").write_text("[model]\nn_threads = 2\n")
    from_file = load_settings(env={"MARK_HOME": str(home), "MARK_CONFIG": str(home / "mark.toml")})
    assert from_file.model.n_threads == 2 and cli.demo_threads(None, from_file, 16) is None


def test_threads_option_is_validated(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "demo", "--threads", "0")
    assert code == 2 and "threads" in err
    assert not (home / "runs").exists()


def test_unknown_stage_is_refused_before_any_work(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "lifecycle", "run", "--scenario", "tropicamide", "--stages", "1,9")
    assert code == 2 and "unknown stage" in err
    assert not (home / "runs").exists()


def test_memory_build_from_transcript_with_replay_provider(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    replies = [
        json.dumps({"corrected_fact": "Tropicamide drops are 0.5-1%, so it is 0.01.", "more_facts": []}),
        json.dumps({"memories": [{"text": "The user asked for the tropicamide concentration.", "category": "fact"}]}),
        json.dumps({"topic": "tropicamide concentration", "final_answer": "A) 0.01", "reason": "", "avoid": ""}),
    ]
    (home / "replies.json").write_text(json.dumps(replies))
    monkeypatch.setenv("MARK_PROVIDER", "replay")
    monkeypatch.setenv("MARK_REPLAY_FILE", str(home / "replies.json"))
    transcript = home / "chat.json"
    transcript.write_text(
        json.dumps(
            [
                {"role": "user", "content": "Concentration of tropicamide? A) 0.01 B) 0.02"},
                {"role": "assistant", "content": "B"},
                {"role": "user", "content": "No, it is A) 0.01 because drops are 0.5-1%."},
            ]
        )
    )
    code, out, err = run(capsys, "memory", "build", str(transcript), "--user", "u1", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["counts"] == {
        "residual": {"queued": 1},
        "user_question": {"committed": 1},
        "llm_response": {"committed": 1},
    }
    code, out, _ = run(capsys, "review", "list", "--json")
    pending = json.loads(out)
    assert [p["text"] for p in pending] == ["Tropicamide drops are 0.5-1%, so it is 0.01."]
    code, out, _ = run(capsys, "review", "reject", pending[0]["id"], "--reason", "needs a source", "--json")
    assert code == 0 and json.loads(out)["status"] == "archived"
    code, _, err = run(capsys, "review", "approve", pending[0]["id"])
    assert code == 2 and "not pending review" in err


def test_memory_build_rejects_bad_transcripts(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = home / "t.json"
    bad.write_text(json.dumps([{"role": "robot", "content": "x"}]))
    code, _, err = run(capsys, "memory", "build", str(bad), "--user", "u")
    assert code == 2 and "message 0: role" in err
    bad.write_text("[")
    code, _, err = run(capsys, "memory", "build", str(bad), "--user", "u")
    assert code == 2 and "not valid JSON" in err


def test_chat_starts_with_maintenance_when_due(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import timedelta

    from memory.config import load_settings
    from memory.engine import MemoryEngine, utcnow
    from memory.models import MemoryType

    replies = tmp_path / "replies.json"
    replies.write_text("[]")
    monkeypatch.setenv("MARK_PROVIDER", "replay")
    monkeypatch.setenv("MARK_REPLAY_FILE", str(replies))
    engine = MemoryEngine.open(load_settings())
    try:  # a user's memory from 80 days ago: V = 0.69 - 0.3 * (1 - e^-0.4) = 0.5911 < 0.6, due
        engine.add("alice wants doses in micrograms", MemoryType.USER_QUESTION, "alice", now=utcnow() - timedelta(80))
    finally:
        engine.close()

    def no_input(prompt: str) -> str:
        raise EOFError

    monkeypatch.setattr("builtins.input", no_input)
    code, out, _ = run(capsys, "chat", "--user", "alice")
    assert code == 0 and "maintenance: 1 neutral" in out
    assert (home / "home" / "maintenance.json").exists()
    code, out, _ = run(capsys, "chat", "--user", "alice")
    assert code == 0 and "maintenance" not in out  # ran less than 24 hours ago
