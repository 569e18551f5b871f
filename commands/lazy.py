"""Command groups that import their module on first use: ``mark --help`` lists a group without loading it.

A group's commands (``mark memory ...``) live in a module whose imports (the engine, pydantic models)
cost more than printing the top-level help. The top-level app registers a :func:`lazy_typer` with the
group's one-line help instead; the module is imported when the group is run or its own help is shown.
"""

from __future__ import annotations

import importlib
from typing import ClassVar

import typer
from typer._click import Command, Context  # typer vendors its own click; TyperGroup's methods take these
from typer.core import TyperGroup


class LazyGroup(TyperGroup):
    """A group whose commands are those of the ``typer.Typer`` at ``source`` (``module:attribute``)."""

    source: ClassVar[str] = ""

    def _load(self) -> None:
        if self.commands:
            return
        module, _, attribute = self.source.partition(":")
        loaded = typer.main.get_group(getattr(importlib.import_module(module), attribute))
        self.commands.update(loaded.commands)

    def list_commands(self, ctx: Context) -> list[str]:
        """The group's command names, in the order its module defines them."""
        self._load()
        return super().list_commands(ctx)

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        """One command of the group (None for an unknown name, so typer suggests a close one)."""
        self._load()
        return super().get_command(ctx, cmd_name)


def lazy_typer(source: str, help: str) -> typer.Typer:
    """A group shown as ``help`` whose commands, those of the Typer at ``source``, load when it is used."""
    group = type(f"LazyGroup[{source}]", (LazyGroup,), {"source": source})
    return typer.Typer(help=help, no_args_is_help=True, cls=group)
