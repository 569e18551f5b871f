"""``mark ingest``, ``mark history`` and ``mark profile`` through the real entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_cli_memory import run

SESSIONS = {
    "sessions": [
        {
            "id": "s1",
            "date": "2024-02-10T10:00:00",
            "turns": [
                {"role": "user", "content": "My left knee hurts when I climb stairs."},
                {"role": "assistant", "content": "That is often the kneecap tendon."},
            ],
        },
        {"id": "s2", "turns": [{"role": "user", "content": "I added 12 postcards to my collection."}]},
    ]
}


def test_ingest_then_search_and_a_rerun_adds_nothing(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "h.json").write_text(json.dumps(SESSIONS), encoding="utf-8")
    code, reports, err = run(capsys, "ingest", "h.json", "--user", "ann", "--json")
    assert code == 0, err
    assert isinstance(reports, list)
    assert [(r["added"], r["existing"], r["undated"], r["sessions"]) for r in reports] == [(3, 0, 1, 2)]
    code, again, _ = run(capsys, "ingest", "h.json", "--user", "ann")
    assert code == 0 and isinstance(again, str) and "0 new, 3 already stored, 1 undated (flagged)" in again
    code, hits, _ = run(
        capsys, "history", "search", "knee stairs", "--user", "ann", "--at", "2024-03-14T09:00:00", "--json"
    )
    assert code == 0 and isinstance(hits, list) and hits[0]["event"]["session_id"] == "s1"
    code, shown, _ = run(capsys, "history", "list", "--user", "ann")
    assert code == 0 and isinstance(shown, str) and "(undated) s2#0" in shown and "3 event(s)" in shown
    # another user sees nothing of ann's history
    code, none, _ = run(capsys, "history", "search", "knee stairs", "--user", "bo", "--json")
    assert code == 0 and none == []


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('[{"role": "user", "content": "hi"}', "not valid JSON"),
        ('{"sessions": [{"id": "s", "turns": [{"role": "user"}]}]}', "sessions[0].turns[0]: content is missing"),
    ],
)
def test_a_bad_history_is_one_error_line_and_nothing_is_written(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    (tmp_path / "good.json").write_text(json.dumps(SESSIONS), encoding="utf-8")
    (tmp_path / "bad.json").write_text(content, encoding="utf-8")
    code, _, err = run(capsys, "ingest", "good.json", "bad.json", "--user", "ann")
    assert code == 2 and err.startswith("error: bad.json") and message in err and err.count("\n") == 1
    # the good file named first was not written either: every file is read before anything is stored
    code, listed, _ = run(capsys, "history", "list", "--user", "ann", "--json")
    assert code == 0 and listed == []


def test_profile_set_show_unset(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "profile", "set", "Preferred units", "micrograms", "--user", "ann")[0] == 0
    code, changed, _ = run(capsys, "profile", "set", "preferred_units", "milligrams", "--user", "ann", "--json")
    assert code == 0 and isinstance(changed, dict) and changed["superseded"]["value"] == "micrograms"
    code, shown, _ = run(capsys, "profile", "show", "--user", "ann", "--json")
    assert code == 0 and [(e["key"], e["value"]) for e in shown] == [("preferred_units", "milligrams")]  # type: ignore[union-attr]
    assert run(capsys, "profile", "set", "role", "triage assistant", "--agent", "chatbot")[0] == 0
    code, mine, _ = run(capsys, "profile", "show", "--user", "bo", "--json")
    assert code == 0 and mine == []  # profiles are per owner
    code, text, _ = run(capsys, "profile", "unset", "preferred_units", "--user", "ann")
    assert code == 0 and text == "unset: preferred_units (was 'milligrams')\n"
    code, _, err = run(capsys, "profile", "unset", "preferred_units", "--user", "ann")
    assert code == 2 and "has no key 'preferred_units'" in err
    code, _, err = run(capsys, "profile", "show", "--user", "ann", "--agent", "chatbot")
    assert code == 2 and err == "error: a profile belongs to a user or to an agent: name exactly one\n"
