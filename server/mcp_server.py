"""``mark mcp``: mark's memory as MCP tools (the official ``mcp`` SDK), with the REST API's permissions.

Five tools call :class:`server.service.Service` for the caller, so they obey the same rules as the REST
API: ``search`` (the caller's memories and shared ones, with scores), ``add`` (SME credit from the role),
``feedback`` (a vote weighted by the role), ``list_reviews`` and ``decide_review`` (the reviewer role).

Who the caller is depends on the transport:

- **stdio** serves one client for the life of the process, so the key is read once, from
  ``MARK_KEY``, before serving (:func:`stdio_identity`): without a key, or with an unknown or
  revoked one, ``mark mcp`` stops with one ``error:`` line (exit 2) and serves nothing.
- **streamable HTTP** identifies every request by its ``Authorization: Bearer <key>`` header through
  the hook the SDK documents for resource servers, not a Starlette middleware of our own: a
  :class:`KeyVerifier` (the SDK's ``TokenVerifier`` protocol) turns a key into an ``AccessToken`` (the
  key's id as ``client_id``, its user as ``subject``, its roles as ``scopes``), and a tool reads it back
  with ``get_access_token()`` (:func:`bearer_identity`). The SDK's own layers then do what a middleware
  would have to redo: a request without a usable key is answered 401 (``WWW-Authenticate: Bearer``;
  the body is the SDK's RFC 6750 one, not the REST API's ``{"error": ...}``) before any MCP message is
  read; the key is checked again on every request, so a revoked key stops at once; a handshake-era
  session belongs to the key that opened it (another key is told "session not found"); and the token
  reaches the tool both on per-request (2026-07-28) calls and inside a session's own task.
  ``AuthSettings`` requires an issuer URL: mark issues its own keys, so it names this server, and no
  OAuth metadata route is published (no ``resource_server_url``).

A refusal is a tool error result (``isError``) whose text is the REST API's one-line message: "this
needs the reviewer role", or "no memory with id '...'" for an unknown id and for another user's
memory alike. As on the command line, a value the engine refuses (``ValueError``) is reported the
same way; any other exception is a bug, logged with its traceback by the SDK.

The engine is opened once per process (an embedded store belongs to one process) and the service
serialises engine calls; the tools run them on worker threads so the event loop keeps serving.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Annotated, Any, Literal

import anyio
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import AnyHttpUrl, BaseModel, ConfigDict, Field
from starlette.applications import Starlette

from mark.errors import MarkError, one_line
from memory.config import Settings
from memory.engine import AddResult, MemoryEngine
from memory.keys import Identity, KeyStore, Role
from memory.models import MemoryRecord, MemoryType
from server.deps import Unauthorized
from server.service import Service

log = logging.getLogger(__name__)

KEY_ENV = "MARK_KEY"
PATH = "/mcp"
Caller = Callable[[], Identity]  # who is calling now (one identity on stdio, the request's key over HTTP)

Query = Annotated[str, Field(min_length=1, max_length=2000, description="What to look for.")]
TopK = Annotated[int, Field(ge=1, le=50, description="How many memories per memory type.")]
Text = Annotated[str, Field(min_length=1, max_length=2000, description="The memory, one fact in plain words.")]
MemoryId = Annotated[str, Field(min_length=1, max_length=200, description="A memory's id.")]
Action = Literal["approve", "edit", "reject"]
NewText = Annotated[str | None, Field(max_length=2000, description="The corrected text (action edit).")]
Reason = Annotated[str, Field(max_length=500, description="Why (needed to reject).")]


class Found(BaseModel):
    """What ``search`` answers: the best memories per type, best first, with their score breakdown."""

    model_config = ConfigDict(extra="forbid")

    hits: list[dict[str, Any]]


class Queue(BaseModel):
    """What ``list_reviews`` answers: the memories waiting for a reviewer."""

    model_config = ConfigDict(extra="forbid")

    pending: list[MemoryRecord]


def answered(result: BaseModel) -> CallToolResult:
    """A tool's result: the model as structured content, and the same JSON as text for older clients."""
    data = result.model_dump(mode="json")
    text = json.dumps(data, ensure_ascii=False, sort_keys=True)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def refused(exc: BaseException) -> CallToolResult:
    """A tool error result with the REST API's one-line message."""
    return CallToolResult(content=[TextContent(type="text", text=one_line(exc))], is_error=True)


async def run_for(caller: Caller, name: str, work: Callable[[Identity], BaseModel]) -> CallToolResult:
    """Run ``work`` for the current caller on a worker thread; a mark error becomes a tool error."""
    try:
        who = caller()
        result = await anyio.to_thread.run_sync(lambda: work(who))
    except (MarkError, ValueError) as exc:
        log.info("tool %s refused: %s", name, one_line(exc))
        return refused(exc)
    return answered(result)


def build_server(service: Service, caller: Caller, **auth: Any) -> MCPServer:
    """An MCP server whose tools act for ``caller()`` (``auth``: the SDK's ``token_verifier`` and ``auth``)."""
    mcp = MCPServer(
        "mark",
        instructions="Trusted memory for a domain chatbot: search it before answering, add what you learn, "
        "vote on what you used.",
        log_level="WARNING",
        **auth,
    )
    read_only = ToolAnnotations(read_only_hint=True)

    @mcp.tool(annotations=read_only)
    async def search(query: Query, k: TopK = 3) -> Annotated[CallToolResult, Found]:
        """The caller's best memories for ``query`` (their own and shared ones), with scores."""

        def found(who: Identity) -> Found:
            return Found(hits=[h.to_public() for h in service.search(who, query, k, None, "medium")])

        return await run_for(caller, "search", found)

    @mcp.tool()
    async def add(text: Text, type: MemoryType = MemoryType.USER_QUESTION) -> Annotated[CallToolResult, AddResult]:
        """Remember ``text`` for the caller; ``residual`` memories are shared (a user's wait for a reviewer)."""
        return await run_for(caller, "add", lambda who: service.add(who, text, type))

    @mcp.tool()
    async def feedback(memory_id: MemoryId, correct: bool) -> Annotated[CallToolResult, MemoryRecord]:
        """Vote a memory the caller may see correct or incorrect (weighted by the caller's role)."""
        return await run_for(caller, "feedback", lambda who: service.feedback(who, memory_id, correct))

    @mcp.tool(annotations=read_only)
    async def list_reviews() -> Annotated[CallToolResult, Queue]:
        """The memories waiting for a reviewer (needs the reviewer role)."""
        return await run_for(caller, "list_reviews", lambda who: Queue(pending=service.pending(who)))

    @mcp.tool()
    async def decide_review(
        memory_id: MemoryId, action: Action, text: NewText = None, reason: Reason = ""
    ) -> Annotated[CallToolResult, MemoryRecord]:
        """Approve, edit (with ``text``) or reject (with ``reason``) a pending memory (needs the reviewer role)."""
        return await run_for(caller, "decide_review", lambda who: service.decide(who, memory_id, action, text, reason))

    return mcp


# -- identity ------------------------------------------------------------------------------------
def stdio_identity(keys: KeyStore, env: Mapping[str, str]) -> Identity:
    """The caller a stdio server acts for: the key in ``MARK_KEY`` (else :class:`Unauthorized`)."""
    key = env.get(KEY_ENV, "").strip()
    if not key:
        raise Unauthorized(f"mark mcp over stdio needs an API key in {KEY_ENV} (create one with mark keys create)")
    who = keys.identify(key)
    if who is None:
        raise Unauthorized(f"{KEY_ENV} is an unknown or revoked API key")
    return who


class KeyVerifier:
    """The SDK's ``TokenVerifier`` over mark's API keys: a key's id, user and roles as an access token."""

    def __init__(self, keys: KeyStore) -> None:
        """Check bearer keys against ``keys`` (read on every request, so a revoked key stops at once)."""
        self.keys = keys

    async def verify_token(self, token: str) -> AccessToken | None:
        """The access token a key stands for (None: unknown or revoked, which the SDK answers with 401)."""
        who = await anyio.to_thread.run_sync(self.keys.identify, token)  # a file read: off the event loop
        if who is None:
            return None
        return AccessToken(
            token=token, client_id=who.key_id, subject=who.user_id, scopes=sorted(r.value for r in who.roles)
        )


def bearer_identity() -> Identity:
    """The caller of the HTTP request being served (the token :class:`KeyVerifier` accepted)."""
    token = get_access_token()
    if token is None or token.subject is None:
        raise Unauthorized("an API key is needed: send Authorization: Bearer <key> (mark keys create)")
    return Identity(user_id=token.subject, roles=frozenset(Role(s) for s in token.scopes), key_id=token.client_id)


def base_url(host: str, port: int) -> str:
    """The URL this server answers at (an IPv6 address in brackets)."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def http_app(service: Service, keys: KeyStore, host: str, port: int) -> Starlette:
    """The streamable HTTP app (MCP at ``/mcp``): every request identified by its bearer key."""
    auth = AuthSettings(issuer_url=AnyHttpUrl(base_url(host, port)), resource_server_url=None)
    mcp = build_server(service, bearer_identity, token_verifier=KeyVerifier(keys), auth=auth)
    return mcp.streamable_http_app(streamable_http_path=PATH, host=host)


# -- running -------------------------------------------------------------------------------------
@contextmanager
def opened_service(settings: Settings) -> Iterator[Service]:
    """The service over the configured engine, opened once for this process and closed afterwards."""
    engine = MemoryEngine.open(settings)

    def client() -> Any:
        from agents.providers import build_client

        return build_client(settings)

    try:
        yield Service(engine, client, "medicine")
    finally:
        engine.close()


def serve_stdio(settings: Settings, env: Mapping[str, str]) -> None:
    """Serve the caller ``MARK_KEY`` names over stdin/stdout until the client hangs up."""
    who = stdio_identity(KeyStore(settings.keys_path), env)  # refused before the engine is opened
    with opened_service(settings) as service:
        log.info("serving MCP over stdio for %s", who.actor)
        build_server(service, lambda: who).run("stdio")


def serve_http(settings: Settings, host: str, port: int) -> None:
    """Serve streamable HTTP at ``http://host:port/mcp`` with uvicorn until interrupted."""
    import uvicorn

    with opened_service(settings) as service:
        app = http_app(service, KeyStore(settings.keys_path), host, port)
        uvicorn.run(app, host=host, port=port, log_level="info")
