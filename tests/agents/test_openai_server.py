"""The ``openai`` provider against a real OpenAI-compatible server: ``llama_cpp.server`` on loopback."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
from autogen_core.models import UserMessage
from pydantic import BaseModel

from agents.errors import ProviderError, TruncatedOutputError
from agents.providers import build_client, ping
from agents.remote import GENERIC_MODEL_INFO, OpenAICompatibleClient
from memory.config import SchemaMode, Settings, load_settings

READY_TIMEOUT_S = 60.0
QUESTION = [UserMessage(content="Is Paris the capital of France? Answer in JSON.", source="user")]


class Verdict(BaseModel):
    subject: str
    correct: bool


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_ready(proc: subprocess.Popen[bytes], url: str, log: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"llama_cpp.server exited with {proc.returncode}:\n{log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=1) as response:
                json.load(response)
                return
        except (urllib.error.URLError, OSError):
            time.sleep(0.2)
    pytest.fail(f"llama_cpp.server not ready after {READY_TIMEOUT_S:g} s:\n{log.read_text()[-2000:]}")


@pytest.fixture(scope="module")
def server_url(smollm2_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A llama.cpp OpenAI-compatible server on a free loopback port, for this module's tests."""
    pytest.importorskip("llama_cpp.server.app", reason="needs llama-cpp-python[server] (the dev extra)")
    port = _free_port()
    log = tmp_path_factory.mktemp("server") / "server.log"
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_path)]
    command += ["--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", "1"]
    command += ["--n_threads_batch", "1", "--verbose", "False"]
    with log.open("wb") as sink:  # a pipe nobody reads fills up and freezes the server
        proc = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}/v1"
        _wait_ready(proc, url, log)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def _settings(tmp_path: Path, url: str, **env: str) -> Settings:
    base = {"MARK_HOME": str(tmp_path), "MARK_PROVIDER": "openai", "MARK_MODEL": "smollm2", "MARK_BASE_URL": url}
    return load_settings(env={**base, "MARK_MAX_TOKENS": "64", **env})


@pytest.mark.asyncio
async def test_chat_call(server_url: str, tmp_path: Path) -> None:
    client = build_client(_settings(tmp_path, server_url))
    assert isinstance(client, OpenAICompatibleClient)
    try:
        await ping(client, endpoint=server_url)
        result = await client.create([UserMessage(content="Say hello.", source="user")])
        assert isinstance(result.content, str) and result.content
        assert result.finish_reason in ("stop", "length")
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_json_schema_in_json_object_mode(server_url: str, tmp_path: Path) -> None:
    client = build_client(_settings(tmp_path, server_url, MARK_SCHEMA_MODE="json_object"))
    try:
        result = await client.create(QUESTION, json_output=Verdict)
        assert result.finish_reason == "stop"
        assert isinstance(result.content, str)
        Verdict.model_validate_json(result.content)
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_json_mode_cut_off_at_max_tokens_raises(server_url: str, tmp_path: Path) -> None:
    client = build_client(_settings(tmp_path, server_url, MARK_MAX_TOKENS="6"))
    try:
        with pytest.raises(TruncatedOutputError, match="max_tokens=6") as info:
            await client.create(QUESTION, json_output=True)
        assert info.value.result.finish_reason == "length"
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_llama_cpp_server_rejects_openai_structured_outputs(server_url: str, tmp_path: Path) -> None:
    """Why ``MARK_SCHEMA_MODE=json_object`` exists: the server only accepts ``text`` / ``json_object``."""
    config = {"model": "smollm2", "base_url": server_url, "api_key": "x", "max_retries": 0}
    client = OpenAICompatibleClient({**config, "model_info": GENERIC_MODEL_INFO}, SchemaMode.JSON_SCHEMA)
    try:
        with pytest.raises(openai.APIStatusError, match="json_object"):
            await client.create(QUESTION, json_output=Verdict)
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_unreachable_endpoint_is_a_provider_error(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_free_port()}/v1"  # bound then released: nothing listens there
    client = build_client(_settings(tmp_path, url, MARK_TIMEOUT="2"))
    started = time.monotonic()
    try:
        with pytest.raises(ProviderError, match=f"^cannot reach the model endpoint at {url}: "):
            await ping(client, endpoint=url, timeout_s=10)
    finally:
        await client.close()
    assert time.monotonic() - started < 10
