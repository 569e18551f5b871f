"""Export and import memories as JSON Lines: one full record per line, a lossless round trip.

Import validates the whole file before writing anything, so a corrupt or non-UTF-8 line leaves the
store untouched and the error names the line.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from pydantic import ValidationError

from memory.audit import EventKind
from memory.engine import MemoryEngine, utcnow
from memory.models import MemoryRecord
from memory.store import partition_for


class ImportFileError(ValueError):
    """The import file is unreadable or has an invalid line."""


def export_jsonl(engine: MemoryEngine, path: Path, user_id: str | None = None) -> int:
    """Write memories (one user's personal memories when ``user_id`` is given) to ``path``."""
    records = engine.list(user_id)
    if user_id is not None:
        records = [r for r in records if r.user_id == user_id]
    partial = path.with_name(path.name + ".partial")
    with partial.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record.to_public(), ensure_ascii=False, sort_keys=True) + "\n")
    partial.replace(path)
    return len(records)


def read_jsonl(path: Path) -> list[MemoryRecord]:
    """Parse and validate every line of an export file; raises on the first bad line."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ImportFileError(f"cannot read {path}: {exc.strerror}") from exc
    records: list[MemoryRecord] = []
    seen: set[str] = set()
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ImportFileError(f"{path}:{number}: not UTF-8 ({exc.reason} at byte {exc.start})") from exc
        try:
            record = MemoryRecord.model_validate_json(text)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "line"
            raise ImportFileError(f"{path}:{number}: invalid memory ({where}: {first['msg']})") from exc
        if record.id in seen:
            raise ImportFileError(f"{path}:{number}: duplicate id {record.id}")
        seen.add(record.id)
        records.append(record)
    return records


def import_jsonl(engine: MemoryEngine, path: Path) -> dict[str, int]:
    """Validate the whole file, then store its records; returns imported/skipped counts."""
    return import_records(engine, read_jsonl(path))


def import_records(
    engine: MemoryEngine, records: Sequence[MemoryRecord], now: datetime | None = None
) -> dict[str, int]:
    """Store records unchanged (ids, counters, timestamps) with IMPORT events; existing ids are skipped."""
    now = now or utcnow()
    fresh = [r for r in records if engine.store.get(r.id, [partition_for(r.type, r.user_id)]) is None]
    batch = [(r, EventKind.IMPORT, {"record": r.to_public()}) for r in fresh]
    for start in range(0, len(batch), 500):
        chunk = batch[start : start + 500]
        engine.apply(chunk, now, "import", reembed=[r for r, _, _ in chunk], bump=False)
    return {"imported": len(fresh), "skipped": len(records) - len(fresh)}
