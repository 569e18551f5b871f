"""``mark mcp`` through the SDK's own client: stdio for the key in the environment, HTTP for a key per request.

Each server is the real command in a fresh interpreter on a temporary store (the hashing embedder, no
model). The store is seeded before the server starts, since an embedded store belongs to one process:
a shared memory from an SME and a personal memory of bob's, which alice must never see.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import anyio
import httpx2
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult

from memory.config import load_settings
from memory.embedder import HashingEmbedder
from memory.engine import MemoryEngine
from memory.keys import KeyStore, Role
from memory.models import MemoryType, Source
from tests.conftest import HASHING_CONFIG, NOW
from tests.test_cli_startup import loaded_after

ROOT = Path(__file__).resolve().parents[2]
RUN_MARK = "import sys, cli; sys.exit(cli.main(sys.argv[1:]))"  # this checkout's cli, as `mark`
TIMEOUT_S = 90.0
ROLES = {"alice": [Role.USER], "bob": [Role.USER], "rita": [Role.REVIEWER]}
TOOLS = {"search", "add", "feedback", "list_reviews", "decide_review"}
SHARED_TEXT = "Tropicamide doses for pupil dilation are 0.5% to 1%."
BOBS_TEXT = "Bob takes his tropicamide doses at night."
ALICES_TEXT = "Alice takes her tropicamide doses in micrograms."


@dataclass
class Home:
    """A seeded store: its folder, a key per user, and the ids of the seeded memories."""

    path: Path
    keys_path: Path
    keys: dict[str, str]
    shared_id: str
    bobs_id: str

    def env(self, **extra: str) -> dict[str, str]:
        """The server's environment: no MARK_* setting of the runner's, this store, the hashing embedder."""
        path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
        inherited = {k: v for k, v in os.environ.items() if not k.startswith("MARK_")}
        return {**inherited, "MARK_HOME": str(self.path), "MARK_EMBEDDER": "hashing", "PYTHONPATH": path, **extra}


@pytest.fixture
def home(tmp_path: Path) -> Home:
    settings = load_settings(env={"MARK_HOME": str(tmp_path / "home"), "MARK_EMBEDDER": "hashing"})
    store = KeyStore(settings.keys_path)
    keys = {user: store.create(user, roles, now=NOW).key for user, roles in ROLES.items()}
    engine = MemoryEngine.open(settings, embedder=HashingEmbedder(), config=HASHING_CONFIG)
    try:
        shared = engine.add(SHARED_TEXT, MemoryType.RESIDUAL, "dr-ana", source=Source.SME, actor="seed")
        bobs = engine.add(BOBS_TEXT, MemoryType.USER_QUESTION, "bob", actor="seed")
    finally:
        engine.close()  # the server opens the store next
    return Home(tmp_path / "home", settings.keys_path, keys, shared.record.id, bobs.record.id)


def _data(result: CallToolResult) -> Any:
    assert not result.is_error, result.content
    return result.structured_content


def _refusal(result: CallToolResult) -> str:
    assert result.is_error and result.structured_content is None
    text = result.content[0]
    assert text.type == "text"
    return text.text


def _run_mark(home: Home, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", RUN_MARK, *args],
        env=home.env(**env),
        cwd=home.path.parent,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )


# -- stdio ---------------------------------------------------------------------------------------
def test_mcp_help_loads_no_sdk(tmp_path: Path) -> None:
    modules = loaded_after(["mcp", "--help"], home=tmp_path / "home")
    assert not {m.split(".")[0] for m in modules} & {"mcp", "mcp_types", "uvicorn", "server"}


@pytest.mark.parametrize("key", [None, "mk_nope"])
def test_stdio_without_a_usable_key_stops_before_serving(home: Home, key: str | None) -> None:
    env = {} if key is None else {"MARK_KEY": key}
    done = _run_mark(home, "mcp", **env)
    assert done.returncode == 2 and done.stdout == ""
    expected = "error: MARK_KEY is an unknown or revoked API key"
    if key is None:
        expected = "error: mark mcp over stdio needs an API key in MARK_KEY (create one with mark keys create)"
    assert done.stderr.splitlines() == [expected]


async def test_stdio_acts_for_the_key_in_the_environment(home: Home, tmp_path: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", RUN_MARK, "mcp"],
        env=home.env(MARK_KEY=home.keys["alice"]),
        cwd=tmp_path,
    )
    with (tmp_path / "server.log").open("w") as errlog, anyio.fail_after(TIMEOUT_S):
        async with Client(stdio_client(params, errlog=errlog)) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            assert set(listed) == TOOLS
            assert listed["search"].annotations is not None and listed["search"].annotations.read_only_hint
            assert all(t.output_schema for t in listed.values())

            added = _data(await client.call_tool("add", {"text": ALICES_TEXT}))
            mine = added["record"]
            assert (mine["user_id"], mine["source"], mine["status"], mine["type"]) == (
                "alice",
                "user",
                "active",
                "user_question",
            )

            hits = _data(await client.call_tool("search", {"query": "tropicamide doses", "k": 5}))["hits"]
            found = {h["id"] for h in hits}
            assert {mine["id"], home.shared_id} <= found and home.bobs_id not in found  # own + shared, not bob's
            assert all(h["score"] > 0 and "breakdown" in h for h in hits)

            voted = _data(await client.call_tool("feedback", {"memory_id": home.shared_id, "correct": True}))
            assert (voted["id"], voted["validated_correct"]) == (home.shared_id, 1)

            # bob's memory answers exactly as an id that does not exist
            theirs = _refusal(await client.call_tool("feedback", {"memory_id": home.bobs_id, "correct": False}))
            unknown = _refusal(await client.call_tool("feedback", {"memory_id": "no-such-id", "correct": False}))
            assert (theirs, unknown) == (f"no memory with id {home.bobs_id!r}", "no memory with id 'no-such-id'")

            assert _refusal(await client.call_tool("list_reviews", {})) == "this needs the reviewer role"
            decided = await client.call_tool("decide_review", {"memory_id": home.shared_id, "action": "approve"})
            assert _refusal(decided) == "this needs the reviewer role"


# -- streamable HTTP -----------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
OPEN = {  # a handshake-era client opening a session
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}},
}


def _post(port: int, key: str | None, body: dict[str, Any] = PING, session: str | None = None) -> tuple[int, Any]:
    """A bare MCP POST (no SDK client): the status and headers the server answers."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        if key is not None:
            headers["Authorization"] = f"Bearer {key}"
        if session is not None:
            headers["Mcp-Session-Id"] = session
        conn.request("POST", "/mcp", body=json.dumps(body).encode(), headers=headers)
        response = conn.getresponse()
        response.read()
        return response.status, response.headers
    finally:
        conn.close()


@pytest.fixture
def http_url(home: Home, tmp_path: Path) -> Iterator[str]:
    """``mark mcp --http`` on a free loopback port, stopped after the test."""
    port = _free_port()
    log = tmp_path / "server.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", RUN_MARK, "mcp", "--http", "--host", "127.0.0.1", "--port", str(port)],
            env=home.env(),
            cwd=tmp_path,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"mark mcp --http exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
            try:
                if _post(port, None)[0] == 401:  # it answers (and asks for a key)
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"mark mcp --http not answering after {TIMEOUT_S:g} s:\n{log.read_text()[-3000:]}")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


@asynccontextmanager
async def _connected(url: str, key: str, mode: Literal["auto", "legacy"] = "auto") -> AsyncIterator[Client]:
    """The SDK's client with a key: ``legacy`` opens a handshake-era session, ``auto`` speaks the newest protocol."""
    headers = {"Authorization": f"Bearer {key}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0)) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        yield client


async def test_http_identifies_each_request_by_its_key(home: Home, http_url: str) -> None:
    with anyio.fail_after(TIMEOUT_S):
        async with (
            _connected(http_url, home.keys["alice"], "legacy") as alice,
            _connected(http_url, home.keys["bob"]) as bob,
        ):
            assert {t.name for t in (await alice.list_tools()).tools} == TOOLS
            mine = _data(await alice.call_tool("add", {"text": ALICES_TEXT}))["record"]
            assert mine["user_id"] == "alice"
            residual = {"text": "Atropine drops last two weeks.", "type": "residual"}
            pending = _data(await alice.call_tool("add", residual))
            assert pending["record"]["status"] == "pending_review"  # shared from a user: a reviewer first
            assert _refusal(await alice.call_tool("list_reviews", {})) == "this needs the reviewer role"

            hits = _data(await bob.call_tool("search", {"query": "tropicamide doses", "k": 5}))["hits"]
            seen = {h["id"] for h in hits}
            assert home.bobs_id in seen and home.shared_id in seen and mine["id"] not in seen
            theirs = _refusal(await bob.call_tool("feedback", {"memory_id": mine["id"], "correct": False}))
            assert theirs == f"no memory with id {mine['id']!r}"
            assert _refusal(await bob.call_tool("list_reviews", {})) == "this needs the reviewer role"

        async with _connected(http_url, home.keys["rita"], "legacy") as rita:
            queue = _data(await rita.call_tool("list_reviews", {}))["pending"]
            assert [r["id"] for r in queue] == [pending["record"]["id"]]
            approved = _data(
                await rita.call_tool("decide_review", {"memory_id": pending["record"]["id"], "action": "approve"})
            )
            assert approved["status"] == "active"
            assert _data(await rita.call_tool("list_reviews", {}))["pending"] == []


async def test_http_refuses_a_missing_unknown_or_revoked_key(home: Home, http_url: str) -> None:
    port = int(http_url.rsplit(":", 1)[1].split("/")[0])
    for key in (None, "mk_nope"):
        status, headers = _post(port, key)
        assert status == 401 and headers["WWW-Authenticate"].startswith("Bearer"), key
    # a session belongs to the key that opened it: another key is told it does not exist
    status, headers = _post(port, home.keys["alice"], OPEN)
    assert status == 200 and headers["Mcp-Session-Id"]
    assert _post(port, home.keys["bob"], PING, session=headers["Mcp-Session-Id"])[0] == 404
    with anyio.fail_after(TIMEOUT_S):
        async with _connected(http_url, home.keys["bob"]) as bob:
            assert _data(await bob.call_tool("search", {"query": "tropicamide doses"}))["hits"]
        store = KeyStore(home.keys_path)
        store.revoke(next(e.id for e in store.list() if e.user_id == "bob"), now=NOW)
        assert _post(port, home.keys["bob"])[0] == 401  # checked on every request: revoked is refused at once
        # the SDK's client cannot open a session with an unknown key (it reports the 401 as an MCPError)
        with pytest.RaisesGroup(MCPError, flatten_subgroups=True):
            async with _connected(http_url, "mk_nope") as nobody:
                await nobody.list_tools()
