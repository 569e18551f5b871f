"""The app factory uvicorn's workers import (``mark serve --workers N``): settings from the environment."""

from __future__ import annotations

from fastapi import FastAPI

from memory.config import load_settings
from server.app import create_app


def app() -> FastAPI:
    """A new app for one worker process."""
    return create_app(load_settings())
