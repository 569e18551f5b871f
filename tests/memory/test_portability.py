"""Export/import: a lossless round trip; bad files are refused whole with the line named."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory.engine import MemoryEngine
from memory.models import MemoryType, Source
from memory.portability import ImportFileError, export_jsonl, import_jsonl, read_jsonl
from tests.conftest import NOW


def _fill(engine: MemoryEngine) -> None:
    engine.add("tropicamide 0.5-1% drops", MemoryType.RESIDUAL, "sme", source=Source.SME, now=NOW)
    rec = engine.add(
        "alice wants decimals", MemoryType.USER_QUESTION, "alice", metadata={"dept": "eye"}, now=NOW
    ).record
    engine.mark_injected([rec.id], now=NOW)
    engine.feedback(rec.id, correct=True, now=NOW)
    engine.add("bob is a dentist", MemoryType.USER_QUESTION, "bob", now=NOW)


def test_round_trip_is_lossless(engine: MemoryEngine, tmp_path: Path, settings) -> None:  # type: ignore[no-untyped-def]
    from memory.embedder import HashingEmbedder

    _fill(engine)
    path = tmp_path / "all.jsonl"
    assert export_jsonl(engine, path) == 3
    before = {r.id: r.to_public() for r in engine.list()}
    other_settings = settings.model_copy(update={"home": tmp_path / "other"})
    target = MemoryEngine.open(other_settings, embedder=HashingEmbedder())
    try:
        assert import_jsonl(target, path) == {"imported": 3, "skipped": 0}
        assert {r.id: r.to_public() for r in target.list()} == before
        assert import_jsonl(target, path) == {"imported": 0, "skipped": 3}
    finally:
        target.close()


def test_user_export_holds_only_that_users_memories(engine: MemoryEngine, tmp_path: Path) -> None:
    _fill(engine)
    path = tmp_path / "alice.jsonl"
    export_jsonl(engine, path, user_id="alice")
    assert {r.user_id for r in read_jsonl(path)} == {"alice"}


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        (b'{"text": "x"}\n', "invalid memory"),
        (b"\xff\xfe not utf8\n", "not UTF-8"),
        (b"{truncated\n", "invalid memory"),
    ],
)
def test_bad_files_write_nothing(engine: MemoryEngine, tmp_path: Path, payload: bytes, message: str) -> None:
    _fill(engine)
    good = tmp_path / "good.jsonl"
    export_jsonl(engine, good)
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(good.read_bytes() + payload)
    count = len(engine.list())
    with pytest.raises(ImportFileError, match=rf"bad.jsonl:4: {message}"):
        import_jsonl(engine, bad)
    assert len(engine.list()) == count
