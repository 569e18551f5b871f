"""``mark review ...``: the human review queue (approve, edit or reject pending memories)."""

from __future__ import annotations

from typing import Annotated

import typer

from commands.common import JsonOpt, open_engine, out, print_json
from commands.memory_cmds import memory_show

review_app = typer.Typer()  # the commands only: cli.py describes the group and imports this module when it is used


@review_app.command("list")
def review_list(as_json: JsonOpt = False) -> None:
    """Memories waiting for a reviewer."""
    from memory import review

    with open_engine() as engine:
        records = review.pending(engine)
    if as_json:
        print_json([r.to_public() for r in records])
        return
    for r in records:
        out.print(f"{r.id}  {r.type.value:<13} {r.user_id:<10} {r.text}")
    out.print(f"{len(records)} pending")


@review_app.command("show")
def review_show(memory_id: str, as_json: JsonOpt = False) -> None:
    """One pending memory with its scores and history."""
    memory_show(memory_id, as_json)


@review_app.command("approve")
def review_approve(
    memory_id: str, reviewer: Annotated[str, typer.Option(help="Who decides.")] = "cli", as_json: JsonOpt = False
) -> None:
    """Approve a pending memory (it becomes active)."""
    from memory import review

    with open_engine() as engine:
        record = review.approve(engine, memory_id, reviewer)
    print_json(record.to_public()) if as_json else out.print(f"approved {record.id}")


@review_app.command("edit")
def review_edit(
    memory_id: str,
    text: str,
    reviewer: Annotated[str, typer.Option(help="Who decides.")] = "cli",
    as_json: JsonOpt = False,
) -> None:
    """Replace a pending memory's text and approve it."""
    from memory import review

    with open_engine() as engine:
        record = review.edit(engine, memory_id, text, reviewer)
    print_json(record.to_public()) if as_json else out.print(f"edited and approved {record.id}: {record.text}")


@review_app.command("reject")
def review_reject(
    memory_id: str,
    reason: Annotated[str, typer.Option(help="Why it is rejected.")],
    reviewer: Annotated[str, typer.Option(help="Who decides.")] = "cli",
    as_json: JsonOpt = False,
) -> None:
    """Reject a pending memory (archived, labelled bad, never injected)."""
    from memory import review

    with open_engine() as engine:
        record = review.reject(engine, memory_id, reviewer, reason)
    print_json(record.to_public()) if as_json else out.print(f"rejected {record.id}")
