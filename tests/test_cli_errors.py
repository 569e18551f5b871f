"""Bad input through the real entry point: one ``error:`` line naming the file, exit 2, no file left behind.

A seeded data folder is made once by a separate process (so Chroma has closed its database, as it
would be on disk after any earlier run); every test copies it and damages its copy.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import cli

ROOT = Path(__file__).resolve().parents[1]
FACTS = [
    "alice takes her coffee without sugar",
    "bob is allergic to penicillin",
    "carol prefers answers in metric units",
    "dave works night shifts at the clinic",
    "erin reads the dosage tables every morning",
    "frank asked about tropicamide strength",
]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder with six memories, written by another process that has exited."""
    home = tmp_path_factory.mktemp("seed") / "home"
    adds = ", ".join(f"['memory', 'add', '--user', 'u{i}', {fact!r}]" for i, fact in enumerate(FACTS))
    script = f"import sys, cli\nsys.exit(max(cli.main(args) for args in [{adds}]))"
    env = {**os.environ, "MARK_HOME": str(home), "MARK_EMBEDDER": "hashing"}
    subprocess.run([sys.executable, "-c", script], env=env, cwd=ROOT, check=True, timeout=300, capture_output=True)
    assert (home / "audit.sqlite3").is_file() and (home / "chroma" / "chroma.sqlite3").is_file()
    return home


@pytest.fixture
def home(seeded: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the seeded folder as ``MARK_HOME``, with the hashing embedder."""
    copy = tmp_path / "home"
    shutil.copytree(seeded, copy)
    monkeypatch.setenv("MARK_HOME", str(copy))
    monkeypatch.setenv("MARK_EMBEDDER", "hashing")
    monkeypatch.delenv("MARK_LOG_LEVEL", raising=False)
    monkeypatch.chdir(tmp_path)
    return copy


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_error_line(code: int, err: str, *names: str) -> str:
    """The single ``error:`` line of a user error that names each of ``names``."""
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("error: ") and "Traceback" not in err, err
    for name in names:
        assert name in err, err
    return err


def no_partial_files(folder: Path) -> bool:
    return not [p for p in folder.rglob("*") if p.name.endswith(".partial")]


def truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


RESTORE = "mark memory import --restore FILE"


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_damaged_audit_log_is_one_line_with_the_fix(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    audit = home / "audit.sqlite3"
    if damage == "garbage":
        audit.write_bytes(b"this is not a database, it is a shopping list\n" * 20)
    else:
        truncate(audit)
    code, _, err = run(capsys, "memory", "list")
    one_error_line(code, err, str(audit), "damaged", RESTORE, f"move {home} away")
    code, _, err = run(capsys, "memory", "add", "--user", "u", "a new fact that cannot be written")
    one_error_line(code, err, str(audit))
    assert no_partial_files(tmp_path)


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_a_damaged_chroma_database_is_one_line_with_the_fix(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    database = home / "chroma" / "chroma.sqlite3"
    if damage == "garbage":
        database.write_bytes(b"\x00garbage\xff" * 500)
    else:
        truncate(database)
    for _ in range(2):  # the store lock and Chroma's per-folder state are released after a failed open
        code, _, err = run(capsys, "memory", "search", "--user", "u0", "coffee")
        one_error_line(code, err, str(database), "damaged", RESTORE)
    assert no_partial_files(tmp_path)


def test_an_audit_path_that_is_a_directory_is_one_line(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    audit = home / "audit.sqlite3"
    audit.unlink()
    audit.mkdir()
    code, _, err = run(capsys, "memory", "list")
    one_error_line(code, err, str(audit), "is a directory", "MARK_HOME")
    assert audit.is_dir() and list(audit.iterdir()) == []
    assert no_partial_files(tmp_path)


def test_export_into_a_missing_folder_writes_nothing(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "no-such-folder" / "memories.jsonl"
    code, _, err = run(capsys, "memory", "export", str(target))
    one_error_line(code, err, str(target), "does not exist")
    assert not target.parent.exists()
    assert no_partial_files(tmp_path)


def test_export_onto_a_directory_leaves_no_plaintext_copy(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "backups"
    folder.mkdir()
    code, _, err = run(capsys, "memory", "export", str(folder))
    one_error_line(code, err, str(folder), "is a directory")
    assert list(folder.iterdir()) == []
    assert no_partial_files(tmp_path)  # the old export left backups.partial with every memory in it


def test_an_export_cut_short_by_the_file_system_removes_its_partial_file(home: Path, tmp_path: Path) -> None:
    """A write that fails half-way (the file size limit, as a full disk would) leaves no file behind.

    The limit is set in a separate process once its engine is open, so only the export's writes meet it.
    """
    target = tmp_path / "out.jsonl"
    script = (
        "import resource, signal\n"
        "from pathlib import Path\n"
        "from memory.config import load_settings\n"
        "from memory.engine import MemoryEngine\n"
        "from memory.portability import ExportFileError, export_jsonl\n"
        "engine = MemoryEngine.open(load_settings())\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (300, resource.RLIM_INFINITY))\n"
        "try:\n"
        f"    export_jsonl(engine, Path({str(target)!r}))\n"
        "except ExportFileError as exc:\n"
        "    print(exc)\n"
        "finally:\n"
        "    resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))\n"
        "    engine.close()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], env=os.environ, cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"cannot export to {target}: File too large; choose another path\n"
    assert not target.exists()
    assert no_partial_files(tmp_path)


@pytest.mark.parametrize("restore", [True, False])
def test_importing_a_record_with_an_empty_id_writes_nothing(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, restore: bool
) -> None:
    exported = tmp_path / "all.jsonl"
    assert run(capsys, "memory", "export", str(exported))[0] == 0
    lines = exported.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    record["id"] = ""
    bad = tmp_path / "empty-id.jsonl"
    bad.write_text(json.dumps(record) + "\n", encoding="utf-8")
    monkeypatch.setenv("MARK_HOME", str(tmp_path / "fresh"))
    code, _, err = run(capsys, "memory", "import", str(bad), *(["--restore"] if restore else []))
    one_error_line(code, err, f"{bad}:1", "id is empty")
    code, out, _ = run(capsys, "memory", "list", "--json")
    assert code == 0 and json.loads(out) == []


def test_an_invalid_memory_is_one_line_not_a_validation_report(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "memory", "add", "--user", "u", "--meta", "_secret=1", "a fact with bad metadata")
    one_error_line(code, err, "metadata", "'_secret'")


def test_an_unknown_log_level_is_one_line(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MARK_LOG_LEVEL", "loud")
    code, _, err = run(capsys, "memory", "list")
    one_error_line(code, err, "MARK_LOG_LEVEL='loud'", "debug, info, warning, error")


def test_verbose_logs_the_engines_decisions_to_stderr_only(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "--verbose", "memory", "add", "--user", "u9", "--json", "gina likes short answers")
    assert code == 0 and json.loads(out)["action"] == "created"  # stdout stays JSON
    created = json.loads(out)["record"]["id"]
    assert f"DEBUG memory.engine: create {created} rev 1 by engine: active" in err
    code, out, err = run(capsys, "memory", "add", "--user", "u9", "--json", "gina likes long answers")
    assert code == 0 and err == ""  # without --verbose: nothing below WARNING


def test_the_log_level_comes_from_the_environment(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MARK_LOG_LEVEL", "info")
    code, out, err = run(capsys, "memory", "forget", "--user", "u1", "--json")
    assert code == 0 and json.loads(out) == {"forgotten": 1}
    assert err.startswith("INFO memory.forgetting: forgot ") and "DEBUG" not in err


@pytest.fixture
def broken_command() -> Iterator[str]:
    """A command whose code has a bug (a plain ``ValueError``), registered on the real app for one test."""

    def broken() -> None:
        int("twelve")

    cli.app.command("broken-for-test")(broken)
    try:
        yield "broken-for-test"
    finally:
        cli.app.registered_commands.pop()


def test_a_bug_keeps_its_traceback(home: Path, broken_command: str) -> None:
    with pytest.raises(ValueError, match="invalid literal for int"):
        cli.main([broken_command])


def test_typer_usage_errors_stay_one_line(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "memory", "add", "--user", "u", "--type", "bogus", "x")
    one_error_line(code, err, "Invalid value for '--type'")


def test_an_unknown_review_policy_and_an_out_file_are_one_line(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    transcript = tmp_path / "t.json"
    transcript.write_text('[{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]')
    code, _, err = run(capsys, "memory", "build", str(transcript), "--user", "ann", "--review", "bogus")
    assert code == 2 and err.count("\n") == 1 and "unknown review policy 'bogus'" in err and "residual" in err
    blocker = tmp_path / "run"
    blocker.write_text("not a folder")
    code, _, err = run(capsys, "lifecycle", "run", "--scenario", "tropicamide", "--out", str(blocker))
    assert code == 2 and err.count("\n") == 1 and "is a file" in err
    assert blocker.read_text() == "not a folder"
