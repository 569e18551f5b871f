"""A running API on a real embedded store, the scripted society as its model, and keys for every role."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from memory.config import Settings, load_settings
from memory.embedder import HashingEmbedder
from memory.engine import MemoryEngine
from memory.keys import KeyStore, Role
from server.app import create_app
from tests.conftest import HASHING_CONFIG, NOW
from tests.scenarios.fake_society import society

ROLES = {
    "alice": [Role.USER],
    "bob": [Role.USER],
    "dr-ana": [Role.SME],
    "rita": [Role.REVIEWER],
    "root": [Role.ADMIN],
}


class Api:
    """The test client with one key per user."""

    def __init__(self, client: TestClient, keys: dict[str, str], engine: MemoryEngine, settings: Settings) -> None:
        self.client, self.keys, self.engine, self.settings = client, keys, engine, settings

    def auth(self, user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.keys[user]}"}

    def get(self, user: str, url: str, **kw: object) -> object:
        return self.client.get(url, headers=self.auth(user), **kw)  # type: ignore[arg-type]

    def post(self, user: str, url: str, body: object = None, **kw: object) -> object:
        return self.client.post(url, headers=self.auth(user), json=body, **kw)  # type: ignore[arg-type]


@pytest.fixture
def api_settings(tmp_path: Path) -> Settings:
    return load_settings(
        env={"MARK_HOME": str(tmp_path / "home"), "MARK_EMBEDDER": "hashing", "MARK_PROVIDER": "replay"}
    )


@pytest.fixture
def api(api_settings: Settings) -> Iterator[Api]:
    engine = MemoryEngine.open(api_settings, embedder=HashingEmbedder(), config=HASHING_CONFIG)
    store = KeyStore(api_settings.keys_path)
    keys = {user: store.create(user, roles, now=NOW).key for user, roles in ROLES.items()}
    app = create_app(api_settings, engine=engine, client_factory=society)
    try:
        with TestClient(app) as client:
            yield Api(client, keys, engine, api_settings)
    finally:
        engine.close()
