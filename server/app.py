"""``mark serve``: the REST API over the engine and the society, with OpenAPI docs at ``/docs``.

Every ``/v1`` route needs an API key (``Authorization: Bearer mk_...``, the header any OpenAI client
sends with its ``api_key``): an unknown or revoked key is a 401. What a key may do comes from its roles
(:mod:`server.service`). Errors are JSON ``{"error": ...}``: 404 for an id the caller may not see (never
403, so ids leak nothing), 403 for a missing role, 422 for a malformed body or a value mark refuses, 502
when the model cannot be reached (and nothing was written), 503 when the store is unavailable.
``/v1/chat/completions`` speaks OpenAI's chat API: an existing chatbot gets mark by changing its base
URL (see :mod:`server.openai_chat`). The review page is mounted from :mod:`server.web`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from agents.errors import ProviderError
from mark.errors import InputError, MarkError, NotFoundError, UnavailableError, one_line
from memory.config import Settings
from memory.engine import MemoryEngine
from memory.keys import KeyStore
from server import openai_chat, web
from server.deps import Unauthorized
from server.routes import router
from server.service import Forbidden, Service


def status_of(exc: MarkError) -> int:
    """The HTTP status of a mark error."""
    if isinstance(exc, Unauthorized):
        return 401
    if isinstance(exc, Forbidden):
        return 403
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, ProviderError):
        return 502
    if isinstance(exc, UnavailableError):
        return 503
    return 422 if isinstance(exc, InputError) else 400


async def _mark_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, MarkError)
    code = status_of(exc)
    headers = {"WWW-Authenticate": "Bearer"} if code == 401 else None
    return JSONResponse({"error": one_line(exc)}, status_code=code, headers=headers)


async def _invalid(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = list(exc.errors())
    first = errors[0] if errors else {"loc": (), "msg": "invalid request"}
    where = ".".join(str(p) for p in first.get("loc", ()))
    return JSONResponse({"error": f"{where}: {first.get('msg')}", "detail": errors}, status_code=422)


def create_app(
    settings: Settings,
    engine: MemoryEngine | None = None,
    client_factory: Callable[[], Any] | None = None,
) -> FastAPI:
    """The API for ``settings`` (an engine and a model client factory may be given, as tests do)."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        opened = engine or MemoryEngine.open(settings)
        factory = client_factory or _client_factory(settings)
        app.state.service = Service(opened, factory, "medicine")
        app.state.keys = KeyStore(settings.keys_path)
        try:
            yield
        finally:
            if engine is None:
                opened.close()

    app = FastAPI(title="mark", version="0.1.0", lifespan=lifespan, description=__doc__)
    app.add_exception_handler(MarkError, _mark_error)
    app.add_exception_handler(RequestValidationError, _invalid)
    app.include_router(router)
    app.include_router(openai_chat.router)
    app.include_router(web.router)
    return app


def _client_factory(settings: Settings) -> Callable[[], Any]:
    def build() -> Any:
        from agents.providers import build_client

        return build_client(settings)

    return build
