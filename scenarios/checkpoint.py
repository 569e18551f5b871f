"""Resumable runs: each finished unit of work is appended to ``progress.jsonl`` at once.

A unit is one record of a stage or one session; its line is flushed and fsynced. A re-run of the same
scenario into the same folder skips what is there and continues from the first unfinished unit.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from mark.errors import InputError


class CheckpointError(InputError):
    """The run folder belongs to another scenario or its progress file is unreadable."""


class Checkpoint:
    """Append-only progress of one lifecycle run."""

    def __init__(self, folder: Path, scenario: str, fingerprint: str) -> None:
        """Open (or start) the progress of ``scenario`` in ``folder``."""
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "progress.jsonl"
        self.done: dict[tuple[int, str], dict[str, Any]] = {}
        header = {"scenario": scenario, "fingerprint": fingerprint}
        if self.path.exists():
            lines = self.path.read_text(encoding="utf-8").splitlines()
            self._load(lines, header)
        else:
            self._append({"header": header})

    def _load(self, lines: list[str], header: dict[str, str]) -> None:
        entries = []
        for number, line in enumerate(lines, start=1):
            try:
                entries.append(json.loads(line))
            except json.JSONDecodeError:
                if number == len(lines):
                    break  # a torn last line from a crash mid-write: that unit is simply redone
                raise CheckpointError(f"{self.path}:{number}: unreadable progress line") from None
        if not entries or entries[0].get("header") != header:
            raise CheckpointError(
                f"{self.path.parent} holds a run of another scenario or another version of it; use a new --out folder"
            )
        for entry in entries[1:]:
            self.done[(int(entry["stage"]), str(entry["unit"]))] = entry["result"]

    def _append(self, entry: dict[str, Any]) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry, sort_keys=True, default=str) + "\n")
            handle.flush()
            os.fsync(handle.fileno())

    def get(self, stage: int, unit: str) -> dict[str, Any] | None:
        """The stored result of a finished unit, or None."""
        return self.done.get((stage, unit))

    def put(self, stage: int, unit: str, result: dict[str, Any]) -> None:
        """Record a finished unit."""
        self.done[(stage, unit)] = result
        self._append({"stage": stage, "unit": unit, "result": result})

    def results(self, stage: int) -> list[dict[str, Any]]:
        """Finished results of a stage in completion order."""
        return [r for (s, _), r in self.done.items() if s == stage]
