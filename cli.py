"""The ``mark`` command line: parses, builds settings, calls the engine / agents / scenarios, prints."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from commands.common import JsonOpt, error_line, open_engine, out, print_json
from commands.memory_cmds import memory_app
from commands.review_cmds import review_app
from memory.config import Settings, load_settings

app = typer.Typer(
    help="mark: trusted, refined memory for domain chatbots (MARK).",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
lifecycle_app = typer.Typer(help="The four-stage MARK lifecycle.", no_args_is_help=True)
scenario_app = typer.Typer(help="Bundled and custom scenario files.", no_args_is_help=True)
app.add_typer(memory_app, name="memory")
app.add_typer(review_app, name="review")
app.add_typer(lifecycle_app, name="lifecycle")
app.add_typer(scenario_app, name="scenario")


@app.command()
def doctor(as_json: JsonOpt = False) -> None:
    """Check the model, embedder, store and token counter; exit 1 if anything is broken."""
    from agents.doctor import run_checks

    report = run_checks(load_settings())
    if as_json:
        print_json(report)
    else:
        table = Table("check", "ok", "detail", title="mark doctor")
        for name, check in report["checks"].items():
            table.add_row(name, Text("yes", "green") if check["ok"] else Text("NO", "red"), check["detail"])
        out.print(table)
    if not report["ok"]:
        raise typer.Exit(1)


@app.command()
def ask(question: str, domain: Annotated[str, typer.Option(help="Domain named in the prompt.")] = "general") -> None:
    """Ask the configured model one question through an AutoGen AssistantAgent."""
    from agents.ask import ask as ask_agent
    from agents.providers import build_client

    settings = load_settings()
    client = build_client(settings)
    sys.stdout.write(asyncio.run(ask_agent(client, question, domain, settings.model.base_url)) + "\n")


ThreadsOpt = Annotated[
    int | None, typer.Option(min=1, max=64, help="llama.cpp threads for this run (overrides MARK_THREADS).")
]


def demo_threads(requested: int | None, settings: Settings, cores: int | None) -> int | None:
    """The demo's thread count: the option, else a configured count (None: keep it), else every core up to 8."""
    if requested is not None or "n_threads" in settings.model.model_fields_set:
        return requested
    return max(1, min(8, cores or 1))


def _run_lifecycle(
    scenario_ref: str, out_dir: Path | None, stages: str | None, as_json: bool, threads: int | None = None
) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from scenarios.report import render_summary
    from scenarios.runner import parse_stages, run_lifecycle
    from scenarios.schema import load_scenario, resolve

    scenario = load_scenario(resolve(scenario_ref))
    chosen = parse_stages(stages) if stages else None
    folder = out_dir or Path("runs") / scenario.name
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
        print_json(report)
        return
    Console().print(render_summary(report))
    Console().print(f"report: {folder / 'report.md'} (and report.json, plots) in {report['wall_s']:.0f} s")


@app.command()
def demo(
    scenario: Annotated[str, typer.Option(help="Bundled scenario or file.")] = "tropicamide",
    out: Annotated[Path | None, typer.Option(help="Run folder (default runs/<scenario>).")] = None,
    threads: ThreadsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run the whole MARK lifecycle on a bundled scenario with the configured (default: embedded) model.

    The demo expects an otherwise idle machine: unless ``--threads`` or a configured thread count
    (MARK_THREADS, mark.toml) says otherwise, the local model uses every core, up to 8.
    """
    _run_lifecycle(scenario, out, None, as_json, demo_threads(threads, load_settings(), os.cpu_count()))


@lifecycle_app.command("run")
def lifecycle_run(
    scenario: Annotated[str, typer.Option(help="Bundled scenario name or a YAML file.")],
    stages: Annotated[str | None, typer.Option(help="Comma-separated stages, e.g. 1,2,3,4.")] = None,
    out: Annotated[Path | None, typer.Option(help="Run folder; re-run into it to resume.")] = None,
    threads: ThreadsOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Run (or resume) the lifecycle stages of a scenario and write report.json, report.md and plots."""
    _run_lifecycle(scenario, out, stages, as_json, threads)


@scenario_app.command("list")
def scenario_list(as_json: JsonOpt = False) -> None:
    """The bundled scenarios."""
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
    from agents.interactive import ChatSession
    from agents.providers import build_client
    from memory.engine import utcnow
    from memory.maintenance import run_if_due

    settings = load_settings()
    with open_engine(settings) as engine:
        maintained = run_if_due(engine, utcnow(), settings.maintenance.every_hours)
        if maintained is not None and (maintained.decisions or maintained.rechecks):
            out.print(maintained.summary())
        session_obj = ChatSession(engine, build_client(settings), user, session_id=session, domain=domain, sme=sme)
        asyncio.run(session_obj.loop(input_fn=input, print_fn=out.print))


def _user_errors() -> tuple[type[BaseException], ...]:
    from agents.errors import ProviderError
    from agents.local_model import ModelError
    from memory.config import ConfigError
    from memory.embedder import EmbedderError
    from memory.engine import UnknownMemoryError
    from memory.portability import ImportFileError
    from memory.review import ReviewError
    from memory.store import StoreError
    from prompts import PromptError

    return (
        ConfigError,
        ModelError,
        ProviderError,
        EmbedderError,
        UnknownMemoryError,
        ImportFileError,
        ReviewError,
        StoreError,
        PromptError,
        ValueError,
    )


def main(argv: list[str] | None = None) -> int:
    """Console entry point: user errors become one line on stderr and exit code 2."""
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
    except _user_errors() as exc:
        sys.stderr.write(f"error: {error_line(exc)}\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
