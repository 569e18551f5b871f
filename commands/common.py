"""What every command group shares: settings, the engine context, JSON and table output."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console

from memory.config import Settings, load_settings
from memory.engine import MemoryEngine

out = Console(markup=False, highlight=False)  # memory text is data: never parse it as rich markup
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def error_line(exc: BaseException) -> str:
    """A user error as one line: a pydantic ``ValidationError`` shows its first problem, not its report."""
    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        message = first["msg"].removeprefix("Value error, ")
        return f"{where}: {message}" if where else message
    return str(exc)


def print_json(data: Any) -> None:
    """Write ``data`` as indented JSON to stdout."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


@contextmanager
def open_engine(settings: Settings | None = None) -> Iterator[MemoryEngine]:
    """The configured engine, closed (and its store lock released) afterwards."""
    engine = MemoryEngine.open(settings or load_settings())
    try:
        yield engine
    finally:
        engine.close()


def parse_meta(pairs: list[str]) -> dict[str, str]:
    """``KEY=VALUE`` options as a dict."""
    parsed: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"metadata must be KEY=VALUE, got {pair!r}")
        parsed[key] = value
    return parsed
