"""Logging for the command line, configured once at the edge: ``--verbose`` or ``MARK_LOG_LEVEL``.

The packages only create loggers (``logging.getLogger(__name__)``) and log their decisions; nothing
below the CLI configures logging. Only mark's own loggers get the chosen level: the libraries it
uses (Chroma, httpx, AutoGen) stay at WARNING, so ``--verbose`` shows mark's decisions, not their
chatter. Records go to stderr, so ``--json`` output on stdout stays parseable.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping
from typing import TextIO

from mark.errors import InputError

ENV = "MARK_LOG_LEVEL"
# the top-level names of mark's code ("mark.agents" is the name some agents log under)
PACKAGES = ("mark", "agents", "memory", "prompts", "scenarios", "commands", "cli")
LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR}
_FORMAT = "%(levelname)s %(name)s: %(message)s"


class _StderrHandler(logging.StreamHandler[TextIO]):
    """Writes to the ``sys.stderr`` of the moment (tests and callers may swap it after setup)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    def emit(self, record: logging.LogRecord) -> None:
        """Write one record to the current stderr."""
        self.setStream(sys.stderr)
        super().emit(record)


def log_level(verbose: bool, env: Mapping[str, str]) -> int:
    """The level for mark's loggers: DEBUG with ``--verbose``, else ``MARK_LOG_LEVEL``, else WARNING."""
    if verbose:
        return logging.DEBUG
    name = env.get(ENV, "").strip().lower()
    if not name:
        return logging.WARNING
    if name not in LEVELS:
        raise InputError(f"{ENV}={env[ENV]!r} is not a log level: use one of {', '.join(LEVELS)}")
    return LEVELS[name]


def configure_logging(verbose: bool = False, env: Mapping[str, str] | None = None) -> int:
    """Send mark's log records at the chosen level to stderr; returns the level.

    Calling it again replaces the handler it installed before (one handler, never duplicates).
    """
    level = log_level(verbose, os.environ if env is None else env)
    reset_logging()
    handler = _StderrHandler()
    handler.setFormatter(logging.Formatter(_FORMAT))
    logging.getLogger().addHandler(handler)
    for name in PACKAGES:
        logging.getLogger(name).setLevel(level)
    return level


def reset_logging() -> None:
    """Undo :func:`configure_logging`: remove its handler and give mark's loggers back their default level."""
    root = logging.getLogger()
    for handler in [h for h in root.handlers if isinstance(h, _StderrHandler)]:
        root.removeHandler(handler)
    for name in PACKAGES:
        logging.getLogger(name).setLevel(logging.NOTSET)
