"""The root of mark's errors (this module imports nothing from mark's other packages).

Every error a user can cause or fix (a bad file, an unknown id, a store in use, a model that cannot be
reached) is a :class:`MarkError` whose message is one line saying what went wrong and what to do. The
CLI and the server catch this root only; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class MarkError(Exception):
    """An error a user can act on; ``str(error)`` is one line naming the input and the fix."""


class InputError(MarkError, ValueError):
    """Bad input from a user: a file, an id, an argument or a setting that cannot be used."""


class NotFoundError(MarkError, KeyError):
    """An id, name or file that does not exist."""

    def __str__(self) -> str:
        """The message as given (``KeyError`` would quote it)."""
        return str(self.args[0]) if self.args else ""


class UnavailableError(MarkError, RuntimeError):
    """Something mark needs cannot be used right now: a store in use, a model or server unreachable."""


def one_line(exc: BaseException) -> str:
    """An error as one line: a pydantic ``ValidationError`` shows its first problem, not its report."""
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        message = first["msg"].removeprefix("Value error, ")
        text = f"{where}: {message}" if where else message
    else:
        text = str(exc)
    return " ".join(part.strip() for part in text.splitlines() if part.strip())
