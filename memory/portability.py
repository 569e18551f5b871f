"""Export and import memories as JSON Lines: one full record per line.

Both import modes validate the whole file before writing anything, so a corrupt or non-UTF-8 line
leaves the store untouched and the error names the line. An export is written to a ``.partial``
file renamed into place at the end; a destination that cannot be written (a missing folder, a
directory, a full disk) is an :class:`ExportFileError` and leaves no file behind.

- **Import** (the default) treats the file as untrusted input: every live record goes through the
  same write path as any other write (:func:`memory.batch.add_many`), so gates, conflict checks,
  veracity and status are recomputed and counters start fresh. A file cannot make a memory
  "active" for every user.
- **Restore** is the one exception: a trusted restore of a mark export keeps ids, statuses, scores,
  counters and timestamps exactly as exported (a lossless round trip), and says so in its audit
  events.
"""

from __future__ import annotations

import json
import logging
import os
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from mark.errors import InputError
from memory.audit import EventKind
from memory.batch import NewMemory, add_many
from memory.engine import MemoryEngine, utcnow
from memory.models import MemoryRecord, Status
from memory.record_layout import partition_for

log = logging.getLogger(__name__)
_CHUNK = 500
_LIVE = frozenset({Status.ACTIVE, Status.PROBATIONARY, Status.PENDING_REVIEW})
RESTORE_NOTE = "trusted restore of a mark export: status, scores and counters kept as exported, no gates"


class ImportFileError(InputError):
    """The import file is unreadable or has an invalid line."""


class ExportFileError(InputError):
    """The export destination cannot be written; nothing was left there."""


def check_destination(path: Path) -> None:
    """Refuse an export path that is a directory or whose folder does not exist (before any work)."""
    if path.is_dir():
        raise ExportFileError(
            f"cannot export to {path}: it is a directory; name a file, e.g. {path / 'memories.jsonl'}"
        )
    if not path.parent.is_dir():
        raise ExportFileError(f"cannot export to {path}: the folder {path.parent} does not exist; create it first")


def export_jsonl(engine: MemoryEngine, path: Path, user_id: str | None = None) -> int:
    """Write memories (one user's personal memories when ``user_id`` is given) to ``path``.

    The file appears complete or not at all: a failed export removes its ``.partial`` file.
    """
    check_destination(path)
    records = engine.list(user_id)
    if user_id is not None:
        records = [r for r in records if r.user_id == user_id]
    partial = path.with_name(path.name + ".partial")
    try:
        handle = partial.open("w", encoding="utf-8")
    except OSError as exc:
        raise ExportFileError(f"cannot export to {path}: {exc.strerror or exc}; choose another path") from exc
    try:
        with handle:
            for record in records:
                handle.write(json.dumps(record.to_public(), ensure_ascii=False, sort_keys=True) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        partial.replace(path)
    except BaseException as exc:
        partial.unlink(missing_ok=True)  # never leave a plaintext copy of the memories behind
        if isinstance(exc, OSError):
            raise ExportFileError(f"cannot export to {path}: {exc.strerror or exc}; choose another path") from exc
        raise
    log.info("exported %d memories to %s", len(records), path)
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
        if not record.id.strip():
            raise ImportFileError(f"{path}:{number}: the id is empty; give the memory an id or leave the field out")
        if record.id in seen:
            raise ImportFileError(f"{path}:{number}: duplicate id {record.id}")
        seen.add(record.id)
        records.append(record)
    return records


class ImportMode(StrEnum):
    """How an import file is trusted."""

    IMPORT = "import"
    RESTORE = "restore"


class ImportReport(BaseModel):
    """What an import or restore wrote."""

    model_config = ConfigDict(extra="forbid")

    mode: ImportMode
    imported: int
    skipped: int
    actions: dict[str, int]
    statuses: dict[str, int]

    def summary(self) -> str:
        """One line for people."""
        statuses = ", ".join(f"{count} {status}" for status, count in sorted(self.statuses.items())) or "none"
        if self.mode is ImportMode.RESTORE:
            return f"restored {self.imported} ({statuses}), skipped {self.skipped} existing; {RESTORE_NOTE}"
        actions = ", ".join(f"{count} {action}" for action, count in sorted(self.actions.items())) or "nothing"
        return (
            f"imported {self.imported} through the write path (gates, conflict checks and status recomputed): "
            f"{actions}; now {statuses}; skipped {self.skipped} not live (superseded, archived or pruned)"
        )


def import_jsonl(engine: MemoryEngine, path: Path, restore: bool = False) -> ImportReport:
    """Validate the whole file, then import it (``restore``: trusted restore, records kept as exported)."""
    records = read_jsonl(path)
    return restore_records(engine, records) if restore else import_records(engine, records)


def new_memory(record: MemoryRecord) -> NewMemory:
    """The write request an imported record stands for: its content, never its scores or status.

    A record waiting for review in the file still waits: a file may ask for more review, not less.
    A shared record always waits for a reviewer: the source a file names (even "sme") is a claim
    nobody checked, and shared memory reaches every user.
    """
    return NewMemory(
        text=record.text,
        type=record.type,
        user_id=record.user_id,
        agent=record.agent,
        category=record.category,
        source=record.source,
        confidence=record.confidence,
        metadata=record.metadata,
        provenance=record.provenance,
        review=record.status is Status.PENDING_REVIEW or record.shared,
    )


def import_records(engine: MemoryEngine, records: Sequence[MemoryRecord], now: datetime | None = None) -> ImportReport:
    """Write the live records (active, probationary, pending review) through the normal write path.

    Ids, statuses, veracity, trust and counters in the file are ignored; superseded, archived and
    pruned records are skipped (re-adding them would bring back what was retired).
    """
    now = now or utcnow()
    items = [new_memory(r) for r in records if r.status in _LIVE]
    results = []
    for start in range(0, len(items), _CHUNK):
        results.extend(add_many(engine, items[start : start + _CHUNK], now, actor="import"))
    report = ImportReport(
        mode=ImportMode.IMPORT,
        imported=len(items),
        skipped=len(records) - len(items),
        actions=dict(Counter(r.action for r in results)),
        statuses=dict(Counter(r.record.status.value for r in results)),
    )
    log.info("import: %s", report.summary())
    return report


def restore_records(engine: MemoryEngine, records: Sequence[MemoryRecord], now: datetime | None = None) -> ImportReport:
    """Trusted restore: store records unchanged (ids, status, scores, counters, timestamps), no gates.

    Only for a mark export the operator trusts; every IMPORT event says it was a restore. Existing
    ids are skipped.
    """
    now = now or utcnow()
    fresh = [r for r in records if engine.store.get(r.id, [partition_for(r.type, r.user_id)]) is None]
    batch = [(r, EventKind.IMPORT, {"record": r.to_public(), "restore": True, "note": RESTORE_NOTE}) for r in fresh]
    for start in range(0, len(batch), _CHUNK):
        chunk = batch[start : start + _CHUNK]
        engine.apply(chunk, now, "restore", reembed=[r for r, _, _ in chunk], bump=False)
    report = ImportReport(
        mode=ImportMode.RESTORE,
        imported=len(fresh),
        skipped=len(records) - len(fresh),
        actions={"restored": len(fresh)} if fresh else {},
        statuses=dict(Counter(r.status.value for r in fresh)),
    )
    log.warning("restore: %s", report.summary())
    return report
