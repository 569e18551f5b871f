"""What every command group shares: settings, the engine context, JSON and table output.

``cli`` imports this module to list the commands, so the engine and pydantic load only when a
command opens the engine or reports an error.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console

from mark.errors import InputError, MarkError

if TYPE_CHECKING:
    from memory.config import Settings
    from memory.engine import MemoryEngine

out = Console(markup=False, highlight=False)  # memory text is data: never parse it as rich markup
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def error_line(exc: BaseException) -> str:
    """A user error as one line (see :func:`mark.errors.one_line`)."""
    from mark.errors import one_line

    return one_line(exc)


def print_json(data: Any) -> None:
    """Write ``data`` as indented JSON to stdout."""
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


@contextmanager
def open_engine(settings: Settings | None = None) -> Iterator[MemoryEngine]:
    """The configured engine, closed (and its store lock released) afterwards.

    This is where the command line hands the user's arguments to the engine, so an argument the
    engine refuses (``ValueError``, as a library should raise it, or a pydantic ``ValidationError``
    for a memory's text, user or metadata) becomes an :class:`~mark.errors.InputError` of one line;
    ``--verbose`` shows where it was raised.
    """
    from memory.config import load_settings
    from memory.engine import MemoryEngine

    engine = MemoryEngine.open(settings or load_settings())
    try:
        yield engine
    except ValueError as exc:
        if isinstance(exc, MarkError):
            raise
        raise InputError(error_line(exc)) from exc
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
