"""``mark serve``, ``mark mcp`` and ``mark keys ...``: mark as a service, and the API keys that say who calls it."""

from __future__ import annotations

from typing import Annotated

import typer

from commands.common import JsonOpt, out, print_json

keys_app = typer.Typer()  # the commands only: cli.py describes the group and imports this module when it is used


def serve(host: str | None, port: int | None, workers: int) -> None:
    """Run the REST API (and the review page) with uvicorn until interrupted."""
    import uvicorn

    from mark.errors import InputError
    from memory.config import load_settings

    settings = load_settings()
    if workers > 1 and not settings.store.chroma_url:
        raise InputError(
            "several workers need a Chroma server: run `chroma run --path DIR` and set MARK_CHROMA_URL"
            " (an embedded store belongs to one process)"
        )
    bind_host, bind_port = host or settings.server.host, port or settings.server.port
    if workers > 1:
        uvicorn.run(
            "server.factory:app", host=bind_host, port=bind_port, workers=workers, factory=True, log_level="info"
        )
        return
    from server.app import create_app

    uvicorn.run(create_app(settings), host=bind_host, port=bind_port, log_level="info")


def mcp(http: bool, host: str | None, port: int | None) -> None:
    """Serve the MCP tools: over stdio for the key in MARK_KEY, or over streamable HTTP (a key per request)."""
    import os

    from memory.config import load_settings
    from server.mcp_server import serve_http, serve_stdio

    settings = load_settings()
    if http:
        serve_http(settings, host or settings.server.host, port or settings.server.port)
    else:
        serve_stdio(settings, os.environ)


@keys_app.command("create")
def keys_create(
    user: Annotated[str, typer.Option(help="The user the key acts as.")],
    role: Annotated[
        list[str] | None, typer.Option(help="user, sme, reviewer or admin (repeatable; default user).")
    ] = None,
    name: Annotated[str, typer.Option(help="A label for the key.")] = "",
    as_json: JsonOpt = False,
) -> None:
    """Create an API key; it is shown once and only its hash is kept."""
    from mark.errors import InputError
    from memory.config import load_settings
    from memory.engine import utcnow
    from memory.keys import KeyStore, Role

    try:
        roles = [Role(r) for r in (role or ["user"])]
    except ValueError as exc:
        raise InputError(f"{exc}: a role is user, sme, reviewer or admin") from exc
    created = KeyStore(load_settings().keys_path).create(user, roles, now=utcnow(), name=name)
    if as_json:
        print_json(created.model_dump(mode="json"))
        return
    out.print(created.key)
    out.print(
        f"key {created.entry.id} for {user} ({', '.join(r.value for r in created.entry.roles)}): shown once, keep it"
    )


@keys_app.command("list")
def keys_list(as_json: JsonOpt = False) -> None:
    """The keys (ids, users, roles, when created or revoked; never the keys themselves)."""
    from memory.config import load_settings
    from memory.keys import KeyStore

    entries = KeyStore(load_settings().keys_path).list()
    if as_json:
        print_json([e.model_dump(mode="json", exclude={"sha256"}) for e in entries])
        return
    for e in entries:
        state = f"revoked {e.revoked_at:%Y-%m-%d}" if e.revoked_at else "active"
        out.print(f"{e.id}  {e.user_id}  {','.join(r.value for r in e.roles)}  {state}  {e.name}")
    out.print(f"{len(entries)} key(s)")


@keys_app.command("revoke")
def keys_revoke(key_id: str, as_json: JsonOpt = False) -> None:
    """Revoke a key by its id (it is kept, marked revoked, so the audit log's actors stay explained)."""
    from memory.config import load_settings
    from memory.engine import utcnow
    from memory.keys import KeyStore

    entry = KeyStore(load_settings().keys_path).revoke(key_id, now=utcnow())
    if as_json:
        print_json(entry.model_dump(mode="json", exclude={"sha256"}))
    else:
        out.print(f"revoked: {entry.id} ({entry.user_id})")
