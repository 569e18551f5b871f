"""``mark profile ...``: show and edit a user's or an agent's profile (always injected next to memories)."""

from __future__ import annotations

from typing import Annotated

import typer

from commands.common import JsonOpt, open_engine, out, print_json

profile_app = typer.Typer()  # the commands only: cli.py describes the group and imports this module when it is used
UserOpt = Annotated[str | None, typer.Option(help="The user whose profile it is.")]
AgentOpt = Annotated[str | None, typer.Option(help="The agent whose profile it is (instead of --user).")]


@profile_app.command("show")
def profile_show(user: UserOpt = None, agent: AgentOpt = None, as_json: JsonOpt = False) -> None:
    """The current entries of a profile, newest first."""
    from memory.profiles import owner_of

    owner = owner_of(user, agent)
    with open_engine() as engine:
        entries = engine.episodes.profiles.current(owner)
    if as_json:
        print_json([e.model_dump(mode="json") for e in entries])
        return
    for e in entries:
        out.print(f"{e.key}: {e.value}  ({e.set_by}, {e.updated_at:%Y-%m-%d %H:%M}; from {e.provenance})")
    out.print(f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'} in {owner}")


@profile_app.command("set")
def profile_set(key: str, value: str, user: UserOpt = None, agent: AgentOpt = None, as_json: JsonOpt = False) -> None:
    """Set KEY to VALUE; a different current value is superseded (kept in the history, audited)."""
    from memory.engine import utcnow
    from memory.profiles import owner_of

    owner = owner_of(user, agent)
    with open_engine() as engine:
        change = engine.episodes.profiles.set(owner, key, value, now=utcnow(), actor="cli", provenance="set by hand")
    if as_json:
        print_json(change.model_dump(mode="json"))
    elif change.unchanged:
        out.print(f"unchanged: {change.entry.key} = {change.entry.value}")
    else:
        was = f" (was {change.superseded.value!r})" if change.superseded else ""
        out.print(f"set: {change.entry.key} = {change.entry.value}{was}")


@profile_app.command("unset")
def profile_unset(key: str, user: UserOpt = None, agent: AgentOpt = None, as_json: JsonOpt = False) -> None:
    """Remove KEY from the profile (its entries stay in the history, audited)."""
    from memory.engine import utcnow
    from memory.profiles import owner_of

    owner = owner_of(user, agent)
    with open_engine() as engine:
        removed = engine.episodes.profiles.unset(owner, key, now=utcnow(), actor="cli")
    if as_json:
        print_json(removed.model_dump(mode="json"))
    else:
        out.print(f"unset: {removed.key} (was {removed.value!r})")
