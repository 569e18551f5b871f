"""The API's dependencies: the service of the running app, and the caller a request's key stands for."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from mark.errors import MarkError
from memory.keys import Identity, KeyStore
from server.service import Service

_bearer = HTTPBearer(auto_error=False)


class Unauthorized(MarkError):
    """No key, or a key that is unknown or revoked (HTTP 401)."""


def service(request: Request) -> Service:
    """The service of the running app."""
    svc: Service = request.app.state.service
    return svc


def caller(request: Request, creds: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> Identity:
    """The caller a request's ``Authorization: Bearer`` key stands for (401 without a usable key)."""
    if creds is None or not creds.credentials:
        raise Unauthorized("an API key is needed: send Authorization: Bearer <key> (mark keys create)")
    keys: KeyStore = request.app.state.keys
    who = keys.identify(creds.credentials)
    if who is None:
        raise Unauthorized("unknown or revoked API key")
    return who


Svc = Annotated[Service, Depends(service)]
Caller = Annotated[Identity, Depends(caller)]
