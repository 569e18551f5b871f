"""``mark memory ...``: add, search, inspect, feed back on, forget, move and maintain memories."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from commands.common import JsonOpt, open_engine, out, parse_meta, print_json
from mark.errors import InputError
from memory.config import load_settings
from memory.models import Category, MemoryType, Source, Status, VoterRole

memory_app = typer.Typer()  # the commands only: cli.py describes the group and imports this module when it is used


@memory_app.command("add")
def memory_add(
    text: str,
    user: Annotated[str, typer.Option(help="Owner of the memory.")],
    type_: Annotated[MemoryType, typer.Option("--type", help="Memory type.")] = MemoryType.USER_QUESTION,
    agent: Annotated[str, typer.Option(help="Agent name.")] = "chatbot",
    category: Annotated[Category, typer.Option(help="Category (S1).")] = Category.FACT,
    source: Annotated[Source, typer.Option(help="Who said it.")] = Source.USER,
    meta: Annotated[list[str] | None, typer.Option(help="Metadata KEY=VALUE, repeatable.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Add a memory (conflict-checked and veracity-scored)."""
    metadata = parse_meta(meta or [])
    with open_engine() as engine:
        result = engine.add(text, type_, user, agent=agent, category=category, source=source, metadata=metadata)
    if as_json:
        print_json(result.model_dump(mode="json"))
    else:
        out.print(f"{result.action}: {result.record.id} [{result.record.status.value}] {result.record.text}")
        for old in result.superseded:
            out.print(f"  superseded {old}")


@memory_app.command("search")
def memory_search(
    query: str,
    user: Annotated[str, typer.Option(help="Who is asking.")],
    type_: Annotated[list[MemoryType] | None, typer.Option("--type", help="Types to search (repeatable).")] = None,
    preset: Annotated[str | None, typer.Option(help="MRS weight preset.")] = None,
    k: Annotated[int, typer.Option(min=1, max=100, help="Results per type.")] = 3,
    risk: Annotated[str, typer.Option(help="Task risk: high, medium or low.")] = "medium",
    agent: Annotated[str | None, typer.Option(help="Only this agent's personal memories.")] = None,
    meta: Annotated[list[str] | None, typer.Option(help="Metadata filter KEY=VALUE, repeatable.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Search memories with MRS re-ranking (recall counts are not changed)."""
    from rich.table import Table

    with open_engine() as engine:
        result = engine.search(
            query,
            user,
            types=type_ or list(MemoryType),
            preset=preset,
            k=k,
            risk=risk,
            agent=agent,
            filters=parse_meta(meta or []),
        )
    hits = [h.to_public() for h in result.all_hits()]
    held = [h.to_public() for h in result.needs_recheck]
    if as_json:
        print_json(hits if not held else {"results": hits, "needs_recheck": held})
        return
    table = Table("score", "type", "id", "text", "rc/rec/ss/fs", title=f"memories for {user!r}")
    for hit in hits:
        b = hit["breakdown"]
        parts = "/".join(f"{b[c]:.2f}" for c in ("recall", "recency", "similarity", "feedback"))
        table.add_row(f"{hit['score']:.3f}", hit["type"], hit["id"][:12], hit["text"], parts)
    out.print(table)
    if held:
        out.print(f"{len(held)} candidate(s) below the {risk}-risk veracity threshold need a re-check")


@memory_app.command("show")
def memory_show(memory_id: str, as_json: JsonOpt = False) -> None:
    """Show one memory with its scores, status and audited history."""
    with open_engine() as engine:
        record = engine.get(memory_id)
        events = engine.history(memory_id)
    data = {"memory": record.to_public(), "history": [e.model_dump(mode="json") for e in events]}
    if as_json:
        print_json(data)
        return
    out.print(record.text, style="bold")
    out.print(
        f"id {record.id}  type {record.type.value}  user {record.user_id}  "
        f"status {record.status.value}  v{record.version}"
    )
    out.print(
        f"trust {record.trust:.3f}  persistence {record.persistence:.3f}  veracity {record.veracity:.3f}  "
        f"recalls {record.recall_count}  correct {record.validated_correct}  incorrect {record.validated_incorrect}"
    )
    for event in events:
        out.print(f"  {event.at:%Y-%m-%d %H:%M:%S}  {event.kind.value:<10} {event.actor}")


@memory_app.command("list")
def memory_list(
    user: Annotated[str | None, typer.Option(help="Only what this user may see.")] = None,
    status: Annotated[list[Status] | None, typer.Option(help="Filter by status (repeatable).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """List memories (one user's own plus shared domain memories with --user)."""
    from rich.table import Table

    with open_engine() as engine:
        records = engine.list(user, statuses=status)
    if as_json:
        print_json([r.to_public() for r in records])
        return
    table = Table("id", "type", "user", "status", "trust", "text")
    for r in records:
        table.add_row(r.id[:12], r.type.value, r.user_id, r.status.value, f"{r.trust:.2f}", r.text)
    out.print(table)


@memory_app.command("feedback")
def memory_feedback(
    memory_id: str,
    correct: Annotated[bool | None, typer.Option("--correct/--incorrect", help="Was the memory right?")] = None,
    role: Annotated[VoterRole, typer.Option(help="Who votes: an SME or reviewer counts fully on shared memory.")] = (
        VoterRole.USER
    ),
    as_json: JsonOpt = False,
) -> None:
    """Mark a memory correct or incorrect (FS, counters, trust, persistence; "correct" refreshes veracity).

    A user's or anonymous "incorrect" on a shared SME memory is a dispute: it moves no score, and
    enough disputes send the memory to review.
    """
    if correct is None:
        raise typer.BadParameter("say --correct or --incorrect")
    with open_engine() as engine:
        record = engine.feedback(memory_id, correct, actor=f"cli:{role.value}", role=role)
    if as_json:
        print_json(record.to_public())
    else:
        out.print(
            f"{record.id}: feedback {record.feedback_score:+.2f} trust {record.trust:.3f} "
            f"persistence {record.persistence:.3f} veracity {record.veracity:.3f} [{record.status.value}]"
        )


@memory_app.command("forget")
def memory_forget(
    memory_id: Annotated[str | None, typer.Argument(help="Memory to erase.")] = None,
    user: Annotated[
        str | None, typer.Option(help="Erase ALL personal memories, history and profile of this user.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Erase one memory, or everything personal of a user; the text leaves every file (the audit keeps ids and times).

    Shared memories stay. An export written before is a file you own: delete it yourself.
    """
    if (memory_id is None) == (user is None):
        raise typer.BadParameter("give either a memory id or --user")
    with open_engine() as engine:
        if memory_id is not None:
            engine.forget(memory_id)
            count = 1
        else:
            assert user is not None
            count = engine.forget_user(user)
    print_json({"forgotten": count}) if as_json else out.print(f"forgot {count} memor{'y' if count == 1 else 'ies'}")


@memory_app.command("export")
def memory_export(
    path: Path,
    user: Annotated[str | None, typer.Option(help="Only this user's personal memories.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Export memories to a JSON Lines file (lossless)."""
    from memory.models import check_user_id
    from memory.portability import export_jsonl

    if user is not None:
        check_user_id(user)
    with open_engine() as engine:
        count = export_jsonl(engine, path, user)
    print_json({"exported": count, "path": str(path)}) if as_json else out.print(f"exported {count} to {path}")


@memory_app.command("import")
def memory_import(
    path: Path,
    restore: Annotated[
        bool,
        typer.Option(
            "--restore",
            help="Trusted restore of a mark export: keep ids, statuses, scores and counters as exported (no gates).",
        ),
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Import a JSON Lines file through the normal write path (gates, conflict checks, fresh counters).

    The whole file is validated before anything is written.
    """
    from memory.portability import import_jsonl

    with open_engine() as engine:
        report = import_jsonl(engine, path, restore=restore)
    print_json(report.model_dump(mode="json")) if as_json else out.print(report.summary())


@memory_app.command("maintain")
def memory_maintain(
    dry_run: Annotated[bool, typer.Option(help="Only show the decisions.")] = False, as_json: JsonOpt = False
) -> None:
    """Retention (TTLs, confidence floor, trust/persistence), then re-check memories whose veracity is due (audited).

    Shared SME memory is sent to review, never pruned; a due memory is refreshed on trusted evidence
    (SME, reviewer, "correct" votes, restatements), else sent to review (shared) or re-checked neutral.
    """
    from memory.maintenance import maintain

    with open_engine() as engine:
        report = maintain(engine, dry_run=dry_run)
    if as_json:
        print_json(report.model_dump(mode="json"))
        return
    for d in report.decisions:
        out.print(f"{d.memory_id[:12]} -> {d.action.value}: {d.reason}")
    for r in report.rechecks:
        out.print(f"{r.memory_id[:12]} re-check {r.action.value} (veracity {r.veracity:.3f}): {r.reason}")
    out.print(report.summary())


@memory_app.command("build")
def memory_build(
    transcript: Annotated[Path, typer.Argument(help="JSON list of {role, content} messages.")],
    user: Annotated[str, typer.Option(help="Whose conversation it is.")],
    review: Annotated[str, typer.Option(help="Review policy: auto, residual or all.")] = "auto",
    source: Annotated[Source, typer.Option(help="Who the human in the chat is (sme is trusted).")] = Source.USER,
    domain: Annotated[str, typer.Option(help="Domain named in the prompts.")] = "medicine",
    evidence: Annotated[str, typer.Option(help="Trusted reference text for the fact check.")] = "",
    reviewer: Annotated[
        str, typer.Option(help="Who decides gated memories now: console, an http(s) URL; none or web: the queue.")
    ] = "none",
    as_json: JsonOpt = False,
) -> None:
    """Run the memory-building team on a finished conversation and commit what passes its gates."""
    import asyncio

    from agents.building import BuildState, ReviewPolicy, load_transcript
    from agents.providers import build_client
    from agents.reviewers import reviewer_from
    from agents.team import build_memories
    from memory.models import check_user_id

    check_user_id(user)  # refused before any model call, as one error line
    turns = load_transcript(transcript)
    settings = load_settings()
    if review not in {p.value for p in ReviewPolicy}:
        valid = ", ".join(p.value for p in ReviewPolicy)
        raise InputError(f"unknown review policy {review!r}; valid: {valid}")
    state = BuildState(turns, user, source=source, policy=ReviewPolicy(review), evidence=evidence, domain=domain)
    plug = reviewer_from(reviewer)
    with open_engine(settings) as engine:
        asyncio.run(build_memories(engine, build_client(settings), state, plug))
    report = state.report()
    if as_json:
        print_json(report.as_json())
        return
    for outcome in state.outcomes:
        extra = f" (supersedes {', '.join(outcome.superseded)})" if outcome.superseded else ""
        out.print(f"{outcome.action:<10} {outcome.type.value:<13} {outcome.text}{extra}")
    for error in state.errors:
        out.print(f"warning: {error}", style="yellow")
    total = report.usage.total
    out.print(f"{total.calls} LLM calls, {total.prompt_tokens + total.completion_tokens} tokens")
    if reviewer == "web" and any(o.action.value == "queued" for o in state.outcomes):
        server = settings.server
        out.print(f"queued memories wait on the review page: http://{server.host}:{server.port}/review (mark serve)")
