"""The ``mark`` command line: parses, builds settings, calls the engine / agents / scenarios, prints."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from commands.common import JsonOpt, error_line, open_engine, out, print_json
from commands.lazy import lazy_typer
from mark.errors import InputError, MarkError

if TYPE_CHECKING:
    from memory.config import Settings

app = typer.Typer(
    help="mark: trusted, refined memory for domain chatbots (MARK).",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
lifecycle_app = typer.Typer(help="The four-stage MARK lifecycle.", no_args_is_help=True)
scenario_app = typer.Typer(help="Bundled and custom scenario files.", no_args_is_help=True)
# the memory, review and knowledge commands load their module when used, not to list the group in --help
memory_app = lazy_typer("commands.memory_cmds:memory_app", "Add, search, inspect and maintain memories.")
review_app = lazy_typer(
    "commands.review_cmds:review_app", "The human review queue: approve, edit or reject pending memories."
)
knowledge_app = lazy_typer(
    "commands.knowledge_cmds:knowledge_app", "The shared knowledge base: add, list, search and remove documents."
)
app.add_typer(memory_app, name="memory")
app.add_typer(review_app, name="review")
history_app = lazy_typer(
    "commands.history_cmds:history_app", "A user's conversation history as episodic events: search and list."
)
profile_app = lazy_typer("commands.profile_cmds:profile_app", "User and agent profiles: show, set and unset facts.")
keys_app = lazy_typer("commands.service_cmds:keys_app", "API keys of mark serve: create, list and revoke.")
app.add_typer(keys_app, name="keys")
app.add_typer(knowledge_app, name="knowledge")
app.add_typer(profile_app, name="profile")
app.add_typer(history_app, name="history")
app.add_typer(lifecycle_app, name="lifecycle")
app.add_typer(scenario_app, name="scenario")


@app.callback()
def _edge(
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Log mark's decisions to stderr (DEBUG); see also MARK_LOG_LEVEL.")
    ] = False,
) -> None:
    """Configure logging once, before any command runs."""
    from commands.logs import configure_logging

    configure_logging(verbose)


@app.command()
def doctor(as_json: JsonOpt = False) -> None:
    """Check the model, embedder, store and token counter; exit 1 if anything is broken."""
    from rich.table import Table
    from rich.text import Text

    from agents.doctor import run_checks
    from memory.config import load_settings

    report = run_checks(load_settings())
    if as_json:
        print_json(report.as_json())
    else:
        table = Table("check", "ok", "detail", title="mark doctor")
        for name, check in report.checks.items():
            table.add_row(name, Text("yes", "green") if check.ok else Text("NO", "red"), check.detail)
        out.print(table)
    if not report.ok:
        raise typer.Exit(1)


@app.command()
def ask(
    question: str,
    domain: Annotated[str, typer.Option(help="Domain named in the prompt.")] = "general",
    user: Annotated[str, typer.Option(help="Whose memories to use (shared memories reach everyone).")] = "anonymous",
    as_json: JsonOpt = False,
) -> None:
    """Ask one question, knowledge first: the knowledge base's passages and the memories are injected, sources cited."""
    import asyncio

    from agents.ask import ask as ask_agent
    from agents.chatbot import MarkMemory
    from agents.providers import build_client
    from memory.config import load_settings

    settings = load_settings()
    client = build_client(settings)
    with open_engine(settings) as engine:
        memory = MarkMemory(engine, user, knowledge=engine.knowledge)
        answer = asyncio.run(ask_agent(client, question, domain, settings.model.base_url, memory))
    if as_json:
        print_json(answer.model_dump(mode="json"))
        return
    sys.stdout.write(answer.answer + "\n")
    if answer.citations:
        sys.stdout.write("Sources: " + "; ".join(c.describe() for c in answer.citations) + "\n")


@app.command("ingest")
def ingest_command(
    files: Annotated[list[Path], typer.Argument(help="Histories: mark transcripts or sessions, LongMemEval records.")],
    user: Annotated[str, typer.Option(help="Whose history it is.")],
    record: Annotated[str | None, typer.Option(help="A LongMemEval question_id: that record's sessions only.")] = None,
    session: Annotated[str | None, typer.Option(help="Session id of a plain transcript (default: file name).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Store conversation histories as a user's episodic events (no model call; a re-run adds nothing)."""
    from commands.history_cmds import ingest

    ingest(user, files, record, session, as_json)


@app.command()
def serve(
    host: Annotated[
        str | None, typer.Option(help="Address to listen on (default MARK_SERVER_HOST, 127.0.0.1).")
    ] = None,
    port: Annotated[int | None, typer.Option(help="Port (default MARK_SERVER_PORT, 8420).")] = None,
    workers: Annotated[
        int, typer.Option(min=1, max=64, help="Worker processes (more than one needs MARK_CHROMA_URL).")
    ] = 1,
) -> None:
    """Serve the REST API, the OpenAI-compatible chat endpoint and the review page (docs at /docs)."""
    from commands.service_cmds import serve as run_server

    run_server(host, port, workers)


@app.command()
def mcp(
    http: Annotated[bool, typer.Option("--http", help="Serve streamable HTTP at /mcp (default: stdio).")] = False,
    host: Annotated[str | None, typer.Option(help="HTTP address (default MARK_SERVER_HOST, 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option(help="HTTP port (default MARK_SERVER_PORT, 8420).")] = None,
) -> None:
    """Serve mark's memory as MCP tools: stdio for the key in MARK_API_KEY, or HTTP with a bearer key per request."""
    from commands.service_cmds import mcp as run_mcp

    run_mcp(http, host, port)


KnowledgeOpt = Annotated[
    list[str] | None,
    typer.Option(
        help="Knowledge files for the run (repeatable): a path, or a bundled file such as ophthalmic-pharmacology.md."
    ),
]
ThreadsOpt = Annotated[
    int | None, typer.Option(min=1, max=64, help="llama.cpp threads for this run (overrides MARK_THREADS).")
]


def demo_threads(requested: int | None, settings: Settings, cores: int | None) -> int | None:
    """The demo's thread count: the option, else a configured count (None: keep it), else every core up to 8."""
    if requested is not None or "n_threads" in settings.model.model_fields_set:
        return requested
    return max(1, min(8, cores or 1))


def _run_lifecycle(
    scenario_ref: str,
    out_dir: Path | None,
    stages: str | None,
    as_json: bool,
    threads: int | None = None,
    knowledge: list[str] | None = None,
) -> None:
    import asyncio

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from memory.config import load_settings
    from scenarios.report import render_summary
    from scenarios.runner import parse_stages, run_lifecycle
    from scenarios.schema import load_scenario, resolve, with_knowledge

    scenario = with_knowledge(load_scenario(resolve(scenario_ref)), knowledge or [])
    chosen = parse_stages(stages) if stages else None
    folder = out_dir or Path("runs") / scenario.name
    if folder.exists() and not folder.is_dir():
        raise InputError(f"--out {folder} is a file: name a run folder (new, or one to resume)")
    settings = load_settings()
    if threads is not None:
        settings.model.n_threads = threads
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), disable=as_json) as bar:
        tasks: dict[str, Any] = {}

        def progress(label: str, done: int, total: int) -> None:
            if label not in tasks:
                tasks[label] = bar.add_task(label, total=total)
            bar.update(tasks[label], completed=done, total=total)

        report = asyncio.run(run_lifecycle(scenario, settings, folder, chosen, progress=progress))
    if as_json:
        print_json(report.as_json())
        return
    Console().print(render_summary(report.as_json()))
    Console().print(f"report: {folder / 'report.md'} (and report.json, plots) in {report.wall_s:.0f} s")


@app.command()
def demo(
    scenario: Annotated[str, typer.Option(help="Bundled scenario or file.")] = "tropicamide",
    out: Annotated[Path | None, typer.Option(help="Run folder (default runs/<scenario>).")] = None,
    threads: ThreadsOpt = None,
    knowledge: KnowledgeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run the whole MARK lifecycle on a bundled scenario with the configured (default: embedded) model.

    The demo expects an otherwise idle machine: unless ``--threads`` or a configured thread count
    (MARK_THREADS, mark.toml) says otherwise, the local model uses every core, up to 8.
    """
    from memory.config import load_settings

    _run_lifecycle(scenario, out, None, as_json, demo_threads(threads, load_settings(), os.cpu_count()), knowledge)


@lifecycle_app.command("run")
def lifecycle_run(
    scenario: Annotated[str, typer.Option(help="Bundled scenario name or a YAML file.")],
    stages: Annotated[str | None, typer.Option(help="Comma-separated stages, e.g. 1,2,3,4.")] = None,
    out: Annotated[Path | None, typer.Option(help="Run folder; re-run into it to resume.")] = None,
    threads: ThreadsOpt = None,
    knowledge: KnowledgeOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run (or resume) the lifecycle stages of a scenario and write report.json, report.md and plots."""
    _run_lifecycle(scenario, out, stages, as_json, threads, knowledge)


@scenario_app.command("list")
def scenario_list(as_json: JsonOpt = False) -> None:
    """The bundled scenarios."""
    from rich.table import Table

    from scenarios.schema import bundled, load_scenario

    rows: list[dict[str, Any]] = []
    for name, path in bundled().items():
        s = load_scenario(path)
        rows.append(
            {
                "name": name,
                "records": len(s.records),
                "sessions": len(s.sessions),
                "stages": s.stages,
                "description": s.description,
            }
        )
    if as_json:
        print_json(rows)
        return
    table = Table("name", "records", "sessions", "stages", "description")
    for r in rows:
        stages = ",".join(str(n) for n in r["stages"])
        table.add_row(str(r["name"]), str(r["records"]), str(r["sessions"]), stages, str(r["description"]))
    out.print(table)


@scenario_app.command("validate")
def scenario_validate(files: list[str], as_json: JsonOpt = False) -> None:
    """Validate scenario files (names of bundled ones or paths); errors name file, line and field."""
    from scenarios.schema import load_scenario, resolve

    checked = []
    for ref in files:
        s = load_scenario(resolve(ref))
        checked.append({"scenario": s.name, "records": len(s.records), "sessions": len(s.sessions)})
    print_json(checked) if as_json else out.print("\n".join(f"ok: {c['scenario']}" for c in checked))


@scenario_app.command("run")
def scenario_run(
    scenario: str,
    stages: Annotated[str | None, typer.Option(help="Comma-separated stages.")] = None,
    out: Annotated[Path | None, typer.Option(help="Run folder; re-run into it to resume.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Same as ``mark lifecycle run --scenario``."""
    _run_lifecycle(scenario, out, stages, as_json)


@app.command()
def chat(
    user: Annotated[str, typer.Option(help="Who is chatting.")],
    session: Annotated[str | None, typer.Option(help="Session id (for the audit trail).")] = None,
    domain: Annotated[str, typer.Option(help="Domain named in the prompts.")] = "medicine",
    sme: Annotated[bool, typer.Option(help="You are a trusted SME: your corrections become domain memory.")] = False,
) -> None:
    """Interactive chat with memory: /correct, /feedback, /remember, /forget, /memories, /help, /quit."""
    import asyncio

    from agents.interactive import ChatSession
    from agents.providers import build_client
    from memory.config import load_settings
    from memory.engine import utcnow
    from memory.maintenance import run_if_due

    settings = load_settings()
    with open_engine(settings) as engine:
        maintained = run_if_due(engine, utcnow(), settings.maintenance.every_hours)
        if maintained is not None and (maintained.decisions or maintained.rechecks):
            out.print(maintained.summary())
        session_obj = ChatSession(engine, build_client(settings), user, session_id=session, domain=domain, sme=sme)
        asyncio.run(session_obj.loop(input_fn=input, print_fn=out.print))


def main(argv: list[str] | None = None) -> int:
    """Console entry point: a :class:`~mark.errors.MarkError` becomes one line on stderr and exit code 2.

    Any other exception is a bug and keeps its traceback. ``--verbose`` also logs where a
    ``MarkError`` was raised.
    """
    from commands.logs import reset_logging

    try:
        app(args=argv, standalone_mode=False)
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except typer.Abort:
        sys.stderr.write("aborted\n")
        return 130
    except typer.exceptions.TyperException as exc:  # usage errors: typer vendors its own click
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        sys.stderr.write(f"error: {message}\n")
        return 2
    except MarkError as exc:
        logging.getLogger("cli").debug("%s raised here:", exc.__class__.__name__, exc_info=exc)
        sys.stderr.write(f"error: {error_line(exc)}\n")
        return 2
    finally:
        reset_logging()
    return 0


if __name__ == "__main__":
    sys.exit(main())
