"""``mark ingest`` and ``mark history ...``: a user's conversation history as episodic events, and searching it."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

from commands.common import JsonOpt, open_engine, out, print_json

history_app = typer.Typer()  # the commands only: cli.py describes the group and imports this module when it is used


def ingest(user: str, files: list[Path], record: str | None, session: str | None, as_json: bool) -> None:
    """Store conversation histories as a user's events; every file is read before anything is written."""
    from memory.engine import utcnow
    from memory.ingest import read_history
    from memory.models import check_user_id

    check_user_id(user)
    parsed = [read_history(path, record=record, session=session) for path in files]
    with open_engine() as engine:
        reports = [engine.episodes.ingest(user, history, utcnow()) for history in parsed]
    if as_json:
        print_json([{**r.model_dump(mode="json"), "turns_per_s": round(r.rate, 1)} for r in reports])
        return
    for r in reports:
        flagged = f", {r.undated} undated (flagged)" if r.undated else ""
        out.print(
            f"{r.source}: {r.turns} turn(s) in {r.sessions} session(s): {r.added} new, {r.existing} already stored"
            f"{flagged}; {r.episodes} episode(s); {r.rate:.0f} turns/s"
        )


@history_app.command("search")
def history_search(
    question: str,
    user: Annotated[str, typer.Option(help="Whose history.")],
    k: Annotated[int, typer.Option(min=1, max=100, help="Events to return.")] = 5,
    at: Annotated[str | None, typer.Option(help="When the question is asked (ISO 8601; default: now).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Find the turns of a user's history that answer QUESTION (vectors, BM25, time and episodes fused)."""
    from memory.engine import utcnow
    from memory.ingest import parse_date

    now = parse_date(at, "--at") if at else utcnow()
    with open_engine() as engine:
        hits = engine.episodes.search(user, question, now or utcnow(), k=k)
    if as_json:
        print_json([h.model_dump(mode="json") for h in hits])
        return
    for h in hits:
        e = h.event
        where = f"{_when(e.at)} {e.session_id}#{e.turn} {e.speaker.value}"
        out.print(f"{h.score:.4f} [{', '.join(h.found_by)}] {where}: {e.text}")
    out.print(f"{len(hits)} event(s)")


@history_app.command("list")
def history_list(
    user: Annotated[str, typer.Option(help="Whose history.")],
    session: Annotated[str | None, typer.Option(help="One session only.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """A user's events in history order (undated ones flagged)."""
    with open_engine() as engine:
        store = engine.episodes.store
        events = store.session(user, session) if session else store.events(user)
    if as_json:
        print_json([e.model_dump(mode="json") for e in events])
        return
    for e in events:
        out.print(f"{_when(e.at)} {e.session_id}#{e.turn} [{e.episode_id}] {e.speaker.value}: {e.text}")
    out.print(f"{len(events)} event(s)")


def _when(at: datetime | None) -> str:
    return f"{at:%Y-%m-%d %H:%M}" if at is not None else "(undated)"
