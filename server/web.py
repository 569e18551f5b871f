"""The review page and the memory browser: server-rendered HTML over :class:`server.service.Service`.

``/review`` is the queue (reviewers): each pending memory with who said it and when, the truth gate's
and the knowledge base's verdicts, its veracity, why it waits, the conversation it came from, and the
memory it would supersede (or the closest one) as a word diff; approve, edit or reject it. ``/memories``
browses what the signed-in key may see, ``/memories/{id}`` shows a memory's audited history.

Sign-in (``/review/login``) takes an API key, checks it with the app's key store, and sets a session
cookie (HttpOnly, SameSite=Strict, Secure over HTTPS) that names the key, an expiry and an HMAC keyed
with the key's stored hash: the browser never keeps the key, any worker of ``mark serve --workers N``
can check the cookie, and revoking the key ends the session at once. Every POST carries a CSRF token
derived the same way (the sign-in form a double-submit token). Decisions go through
:meth:`Service.decide`, so they are audited with the reviewer as actor. Text from memories,
conversations and the audit log reaches the page only through Jinja2's autoescape, and the pages'
Content-Security-Policy allows no script at all.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Form, Request
from fastapi.responses import RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from jinja2 import Environment, FileSystemLoader, StrictUndefined

from mark.errors import MarkError, NotFoundError, one_line
from memory.keys import Identity, KeyStore, Role, digest
from memory.models import MemoryRecord, Status
from server.review_page import candidate_views
from server.service import Service

router = APIRouter(include_in_schema=False)

SESSION_COOKIE, LOGIN_COOKIE, FLASH_COOKIE = "mark_session", "mark_login", "mark_flash"
SESSION_SECONDS = 8 * 3600
QUEUE_PAGE = 50  # candidates shown at once, oldest first
BROWSE_LIMIT = 200  # memories listed at once, newest first
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}
_env = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def _when(at: datetime | str) -> str:
    moment = at if isinstance(at, datetime) else datetime.fromisoformat(at)
    return (moment.astimezone(UTC) if moment.tzinfo else moment).strftime("%Y-%m-%d %H:%M:%S UTC")


_env.filters["when"] = _when
_env.filters["value"] = lambda v: v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, sort_keys=True)
templates = Jinja2Templates(env=_env)


# -- sessions ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Session:
    """A signed-in browser: who it acts as and the CSRF token its forms carry."""

    who: Identity
    csrf: str


def _sign(secret: str, *parts: str) -> str:
    return hmac.new(secret.encode(), "|".join(parts).encode(), hashlib.sha256).hexdigest()


def session_cookie(key: str, who: Identity, now: float) -> str:
    """The cookie value for a key that just signed in: key id, expiry, HMAC keyed with the key's hash."""
    expires = str(int(now) + SESSION_SECONDS)
    return f"{who.key_id}.{expires}.{_sign(digest(key), 'session', who.key_id, expires)}"


def read_session(keys: KeyStore, cookie: str | None, now: float) -> Session | None:
    """The session a cookie stands for (None when absent, forged, expired, or its key is revoked)."""
    parts = (cookie or "").rsplit(".", 2)
    if len(parts) != 3 or not parts[1].isdigit() or int(parts[1]) <= now:
        return None
    key_id, expires, signature = parts
    for entry in keys.list():
        if entry.id != key_id or entry.revoked_at is not None:
            continue
        if hmac.compare_digest(signature.encode(), _sign(entry.sha256, "session", key_id, expires).encode()):
            who = Identity(user_id=entry.user_id, roles=frozenset(entry.roles), key_id=entry.id)
            return Session(who, _sign(entry.sha256, "csrf", key_id, expires))
    return None


def _session(request: Request) -> Session | None:
    return read_session(request.app.state.keys, request.cookies.get(SESSION_COOKIE), time.time())


def _cookie(response: Response, request: Request, name: str, value: str, max_age: int, path: str = "/") -> None:
    secure = request.url.scheme == "https"
    response.set_cookie(name, value, max_age=max_age, path=path, httponly=True, samesite="strict", secure=secure)


def _safe_next(url: str) -> str:
    """A page of this router to go back to after signing in (anything else: "")."""
    return url if url.split("?")[0].rstrip("/") in {"/review", "/memories"} or url.startswith("/memories/") else ""


# -- pages ---------------------------------------------------------------------------------------
def _flash(request: Request) -> str | None:
    raw = request.cookies.get(FLASH_COOKIE)
    try:
        return base64.urlsafe_b64decode(raw.encode()).decode()[:500] if raw else None
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


def _page(request: Request, name: str, session: Session | None, code: int = 200, **context: Any) -> Response:
    """Render a template with the header's context (who, CSRF token, flash) and the security headers."""
    flash = _flash(request)
    roles = ", ".join(sorted(r.value for r in session.who.roles)) if session else ""
    base = {"who": session.who if session else None, "roles": roles, "csrf": session.csrf if session else ""}
    response = templates.TemplateResponse(
        request, name, {**base, "flash": flash, **context}, status_code=code, headers=HEADERS
    )
    if flash is not None:
        response.delete_cookie(FLASH_COOKIE, path="/", httponly=True, samesite="strict")
    return response


def _redirect(request: Request, url: str, flash: str | None = None) -> Response:
    response = RedirectResponse(url, status_code=303, headers=HEADERS)
    if flash:
        _cookie(response, request, FLASH_COOKIE, base64.urlsafe_b64encode(_short(flash).encode()).decode(), 60)
    return response


def _short(text: str) -> str:
    """``text`` on one line, at most 300 characters (a flash message)."""
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:299] + "…"


def _to_login(request: Request) -> Response:
    path = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/review/login?next={quote(path, safe='/')}", status_code=303, headers=HEADERS)


def _error(request: Request, session: Session | None, code: int, message: str) -> Response:
    return _page(request, "error.html", session, code, error_code=code, message=message)


def _no_role(request: Request, session: Session) -> Response:
    held = ", ".join(sorted(r.value for r in session.who.roles))
    message = f"The review queue needs the reviewer role; {session.who.user_id}'s key has: {held}."
    return _error(request, session, 403, message)


def _service(request: Request) -> Service:
    svc: Service = request.app.state.service
    return svc


# -- sign-in -------------------------------------------------------------------------------------
def _login_page(request: Request, next_url: str, error: str | None = None, code: int = 200) -> Response:
    token = secrets.token_urlsafe(24)
    response = _page(request, "login.html", None, code, login_csrf=token, next_url=next_url, error=error)
    _cookie(response, request, LOGIN_COOKIE, token, 1800, path="/review/login")
    return response


def _landing(who: Identity) -> str:
    return "/review" if who.has(Role.REVIEWER) else "/memories"


@router.get("/review/login")
def login_form(request: Request, next: str = "") -> Response:
    """The sign-in form (an API key)."""
    session = _session(request)
    if session is not None:
        return _redirect(request, _safe_next(next) or _landing(session.who))
    return _login_page(request, _safe_next(next))


@router.post("/review/login")
def login(
    request: Request,
    key: Annotated[str, Form()] = "",
    csrf: Annotated[str, Form()] = "",
    next: Annotated[str, Form()] = "",
) -> Response:
    """Check the key with the key store and start a session."""
    expected = request.cookies.get(LOGIN_COOKIE, "")
    if not expected or not hmac.compare_digest(expected.encode(), csrf.encode()):
        return _login_page(request, _safe_next(next), "The sign-in form expired: sign in again.", 400)
    keys: KeyStore = request.app.state.keys
    who = keys.identify(key.strip()) if key.strip() else None
    if who is None:
        return _login_page(request, _safe_next(next), "Unknown or revoked API key.", 401)
    response = _redirect(request, _safe_next(next) or _landing(who), f"signed in as {who.user_id}")
    _cookie(response, request, SESSION_COOKIE, session_cookie(key.strip(), who, time.time()), SESSION_SECONDS)
    response.delete_cookie(LOGIN_COOKIE, path="/review/login", httponly=True, samesite="strict")
    return response


@router.post("/review/logout")
def logout(request: Request, csrf: Annotated[str, Form()] = "") -> Response:
    """End the session in this browser (revoking the key ends it everywhere)."""
    session = _session(request)
    if session is not None and not hmac.compare_digest(session.csrf.encode(), csrf.encode()):
        return _error(request, session, 403, "This form's token does not match your session: reload the page.")
    response = _redirect(request, "/review/login", "signed out")
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
    return response


# -- the review queue ----------------------------------------------------------------------------
@router.get("/review")
def queue(request: Request) -> Response:
    """The review queue: every pending memory with its provenance, verdicts and diff (reviewers)."""
    session = _session(request)
    if session is None:
        return _to_login(request)
    if not session.who.has(Role.REVIEWER):
        return _no_role(request, session)
    svc = _service(request)
    pending = svc.pending(session.who)
    shown = pending[:QUEUE_PAGE]
    views = svc.locked("review-page", lambda: candidate_views(svc.engine, shown))
    for view in views:
        view.visible = svc.visible(session.who, view.record)
    return _page(request, "queue.html", session, candidates=views, total=len(pending))


_DONE = {"approve": "approved", "edit": "edited and approved", "reject": "rejected"}


@router.post("/review/{memory_id}/decide")
def decide(
    request: Request,
    memory_id: str,
    action: Annotated[str, Form()] = "",
    csrf: Annotated[str, Form()] = "",
    text: Annotated[str, Form()] = "",
    reason: Annotated[str, Form()] = "",
) -> Response:
    """Approve, edit or reject a pending memory through the service (audited), then back to the queue."""
    session = _session(request)
    if session is None:
        return _to_login(request)
    if not hmac.compare_digest(session.csrf.encode(), csrf.encode()):
        return _error(request, session, 403, "This form's token does not match your session: reload the page.")
    if not session.who.has(Role.REVIEWER):
        return _no_role(request, session)
    try:
        record = _service(request).decide(session.who, memory_id, action, text if action == "edit" else None, reason)
    except MarkError as exc:  # not pending any more, an empty text or reason, an unknown id or action
        return _redirect(request, "/review", f"error: {one_line(exc)}")
    said = f"reason: {reason.strip()}" if action == "reject" else record.text
    return _redirect(request, "/review", f"{_DONE[action]} {record.id[:8]}: {said}")


# -- the memory browser --------------------------------------------------------------------------
def _listed(svc: Service, session: Session, status: Status | None, query: str) -> list[tuple[MemoryRecord, str]]:
    """What the browser lists: search hits with their score, or the memories the key may see, newest first."""
    if query.strip():
        hits = svc.search(session.who, query, 10, None, "medium")
        return [(h.record, f"{h.score:.2f}") for h in hits if status is None or h.record.status is status]
    records = svc.memories(session.who, None, status)
    return [(r, "") for r in reversed(records)]


@router.get("/memories")
def browse(request: Request, status: str = "", q: str = "") -> Response:
    """The memories the signed-in key may see (its own and shared; an admin: all), by status or search."""
    session = _session(request)
    if session is None:
        return _to_login(request)
    wanted = Status(status) if status in Status._value2member_map_ else None
    problem = f"unknown status {status!r}: showing every status" if status and wanted is None else None
    try:
        rows = _listed(_service(request), session, wanted, q)
    except MarkError as exc:
        rows, problem = [], one_line(exc)
    context: dict[str, Any] = {"rows": rows[:BROWSE_LIMIT], "total": len(rows), "statuses": [s.value for s in Status]}
    return _page(request, "memories.html", session, status=status, q=q, problem=problem, **context)


@router.get("/memories/{memory_id}")
def memory_page(request: Request, memory_id: str) -> Response:
    """One memory the key may see, with its full audited history."""
    session = _session(request)
    if session is None:
        return _to_login(request)
    svc = _service(request)
    try:
        record = svc.get(session.who, memory_id)
        events = svc.history(session.who, memory_id)
    except NotFoundError as exc:  # another user's memory reads as an unknown one
        return _error(request, session, 404, one_line(exc))
    reviewer = session.who.has(Role.REVIEWER)
    return _page(request, "memory.html", session, record=record, events=events, reviewer=reviewer)
