"""Conversation histories from files: mark's transcripts and LongMemEval's records, read without a model.

Accepted shapes (JSON):

- a mark transcript: a list of ``{role, content}`` turns (``mark memory build`` reads the same), one
  session named after the file; a turn may carry ``at`` (ISO 8601) or ``date``;
- mark sessions: ``{"sessions": [{"id": ..., "date": ..., "turns": [{role, content, at?}, ...]}, ...]}``;
- LongMemEval (Wu et al., 2025): one record or a list of records with ``haystack_sessions`` (lists of
  ``{role, content}``), ``haystack_dates`` ("2023/05/20 (Sat) 02:21") and ``haystack_session_ids``;
  ``record`` picks one by ``question_id``.

Every turn keeps its speaker, session, position and the history's own date (a session's date for each
of its turns, a turn's own ``at`` where given); a turn without any date is accepted and flagged
(``at`` None). A malformed file is refused as a whole with one :class:`HistoryFileError` naming the
file and the record, before anything is written.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from mark.errors import InputError
from memory.history import Speaker

_LME_DATE = "%Y/%m/%d (%a) %H:%M"


class HistoryFileError(InputError):
    """A history file that cannot be read; the message names the file and the record."""


class ParsedTurn(BaseModel):
    """One turn of a history file, before it becomes an event."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    session_id: str
    turn: int
    speaker: Speaker
    text: str
    at: datetime | None


class ParsedHistory(BaseModel):
    """What a history file holds: its turns in order, and what kind of file it was."""

    model_config = ConfigDict(extra="forbid")

    path: str
    format: str  # "transcript", "sessions" or "longmemeval"
    turns: list[ParsedTurn]

    @property
    def undated(self) -> int:
        """How many turns carry no date."""
        return sum(t.at is None for t in self.turns)


def parse_date(value: Any, where: str) -> datetime | None:
    """A date from a history: ISO 8601 or LongMemEval's "2023/05/20 (Sat) 02:21"; naive dates are UTC."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise HistoryFileError(f"{where}: a date must be a string, not {type(value).__name__}")
    text = value.strip()
    for reader in (datetime.fromisoformat, lambda v: datetime.strptime(v, _LME_DATE)):
        try:
            parsed = reader(text)
        except ValueError:
            continue
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    raise HistoryFileError(f"{where}: unreadable date {text!r} (ISO 8601 or 'YYYY/MM/DD (Day) HH:MM')")


def _turn(item: Any, where: str, session_id: str, index: int, date: datetime | None) -> ParsedTurn | None:
    if not isinstance(item, dict):
        raise HistoryFileError(f"{where}: a turn is an object with role and content")
    role, content = item.get("role"), item.get("content")
    if not isinstance(role, str) or not role.strip():
        raise HistoryFileError(f"{where}: role is missing")
    if not isinstance(content, str):
        raise HistoryFileError(f"{where}: content is missing or not text")
    if not content.strip():
        return None  # an empty message says nothing: skipped, not an error
    at = parse_date(item.get("at") or item.get("date") or item.get("timestamp"), where) or date
    return ParsedTurn(session_id=session_id, turn=index, speaker=Speaker.parse(role), text=content, at=at)


def _session(turns: Any, where: str, session_id: str, date: datetime | None) -> list[ParsedTurn]:
    if not isinstance(turns, list):
        raise HistoryFileError(f"{where}: a session is a list of turns")
    parsed = [_turn(t, f"{where}[{i}]", session_id, i, date) for i, t in enumerate(turns)]
    return [t for t in parsed if t is not None]


def _longmemeval(records: list[Any], path: Path, record: str | None) -> list[ParsedTurn]:
    chosen = [r for r in records if record is None or (isinstance(r, dict) and r.get("question_id") == record)]
    if record is not None and not chosen:
        raise HistoryFileError(f"{path}: no record with question_id {record!r}")
    turns: list[ParsedTurn] = []
    seen: set[str] = set()
    for n, rec in enumerate(chosen):
        label = f"{path}: record {n}" + (f" ({rec.get('question_id')})" if isinstance(rec, dict) else "")
        if not isinstance(rec, dict) or not isinstance(rec.get("haystack_sessions"), list):
            raise HistoryFileError(f"{label}: haystack_sessions is missing")
        sessions, dates = rec["haystack_sessions"], rec.get("haystack_dates") or []
        ids = rec.get("haystack_session_ids") or [f"{rec.get('question_id', n)}-{i}" for i in range(len(sessions))]
        if len(ids) != len(sessions) or (dates and len(dates) != len(sessions)):
            lists = "haystack_sessions, haystack_dates and haystack_session_ids"
            raise HistoryFileError(f"{label}: {lists} differ in length")
        for i, session in enumerate(sessions):
            session_id = str(ids[i])
            if session_id in seen:  # records share sessions: one history holds each once
                continue
            seen.add(session_id)
            date = parse_date(dates[i], f"{label}: haystack_dates[{i}]") if dates else None
            turns += _session(session, f"{label}: haystack_sessions[{i}]", session_id, date)
    return turns


def read_history(path: Path, record: str | None = None, session: str | None = None) -> ParsedHistory:
    """Read a history file (see the module notes); ``session`` names a plain transcript's session."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise HistoryFileError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise HistoryFileError(f"{path}: not valid JSON ({exc}); is the file complete?") from exc
    records = data if isinstance(data, list) else [data]
    if records and isinstance(records[0], dict) and "haystack_sessions" in records[0]:
        return ParsedHistory(path=str(path), format="longmemeval", turns=_longmemeval(records, path, record))
    if record is not None:
        raise HistoryFileError(f"{path}: --record picks a LongMemEval record, and this is not a LongMemEval file")
    if isinstance(data, dict) and isinstance(data.get("sessions"), list):
        turns: list[ParsedTurn] = []
        for i, item in enumerate(data["sessions"]):
            where = f"{path}: sessions[{i}]"
            if not isinstance(item, dict):
                raise HistoryFileError(f"{where}: a session is an object with id and turns")
            date = parse_date(item.get("date"), where)
            turns += _session(item.get("turns"), f"{where}.turns", str(item.get("id", i)), date)
        return ParsedHistory(path=str(path), format="sessions", turns=turns)
    if isinstance(data, list):
        name = session or path.stem
        return ParsedHistory(path=str(path), format="transcript", turns=_session(data, str(path), name, None))
    raise HistoryFileError(
        f'{path}: expected a list of {{role, content}} turns, {{"sessions": [...]}} or LongMemEval records'
    )
