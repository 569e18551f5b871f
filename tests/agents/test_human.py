"""SME input sources: scripted, console, callable, HTTP (real loopback server), and a real AutoGen team."""

from __future__ import annotations

import io
import json
import socket
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from typing import ClassVar

import pytest
from autogen_agentchat.agents import AssistantAgent, UserProxyAgent
from autogen_agentchat.conditions import TextMentionTermination
from autogen_agentchat.messages import BaseChatMessage, TextMessage, UserInputRequestedEvent
from autogen_agentchat.teams import RoundRobinGroupChat
from autogen_core import CancellationToken
from autogen_ext.models.replay import ReplayChatCompletionClient

from agents.human import (
    ACCEPT,
    CallableInput,
    ConsoleInput,
    HttpInput,
    HumanInputError,
    ScriptedInput,
    ScriptExhausted,
    build_sme_proxy,
    check_http_url,
)
from tests.loopback import serve


class _SmeHandler(BaseHTTPRequestHandler):
    """A tiny remote SME: /ok echoes a reply, /500 fails, /bad answers non-JSON, /noreply lacks the key."""

    received: ClassVar[list[dict[str, object]]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).received.append(body)
        if self.path == "/ok":
            self._send(200, json.dumps({"reply": f"SME says: {body['prompt']}"}).encode())
        elif self.path == "/500":
            self._send(500, b'{"error": "boom"}')
        elif self.path == "/bad":
            self._send(200, b"<html>not json</html>")
        elif self.path == "/noreply":
            self._send(200, b'{"answer": 1}')
        elif self.path == "/slow":
            time.sleep(0.6)
            self._send(200, b'{"reply": "late"}')

    def _send(self, status: int, payload: bytes) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def sme_server() -> Iterator[str]:
    """A real HTTP server on 127.0.0.1 in a thread; yields its base URL."""
    _SmeHandler.received = []
    with serve(_SmeHandler) as url:
        yield url


def _closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


# --- scripted -------------------------------------------------------------------------------------


async def test_scripted_input_replies_in_order_then_accepts() -> None:
    source = ScriptedInput(["It is one drop.", "Use 0.5%."])
    assert source.remaining == 2
    assert await source("p1") == "It is one drop."
    assert await source("p2", None) == "Use 0.5%."
    assert source.remaining == 0
    assert await source("p3") == ACCEPT
    assert await source("p4") == ACCEPT
    assert source.prompts == ["p1", "p2", "p3", "p4"]


async def test_scripted_input_can_refuse_to_accept_by_itself() -> None:
    source = ScriptedInput(["only line"], accept_when_exhausted=False)
    assert await source("p") == "only line"
    with pytest.raises(ScriptExhausted, match="ran out after 1 line"):
        await source("p")
    assert issubclass(ScriptExhausted, HumanInputError)


def test_scripted_input_rejects_a_bare_string() -> None:
    with pytest.raises(TypeError):
        ScriptedInput("It is one drop.")


def test_accept_is_the_documented_signal() -> None:
    assert ACCEPT == "ACCEPT"


# --- callable -------------------------------------------------------------------------------------


async def test_callable_input_sync_function() -> None:
    seen: list[str] = []

    def reply(prompt: str) -> str:
        seen.append(prompt)
        return "sync answer"

    assert await CallableInput(reply)("Enter your response: ") == "sync answer"
    assert seen == ["Enter your response: "]


async def test_callable_input_async_function() -> None:
    async def reply(prompt: str) -> str:
        return f"async answer to {prompt}"

    assert await CallableInput(reply)("q") == "async answer to q"


async def test_callable_input_async_callable_object() -> None:
    class Desk:
        async def __call__(self, prompt: str) -> str:
            return "from the desk"

    assert await CallableInput(Desk())("q") == "from the desk"


async def test_callable_input_non_string_is_a_clear_error() -> None:
    def broken(prompt: str) -> int:
        return 42

    with pytest.raises(HumanInputError, match=r"'broken' returned int, expected str"):
        await CallableInput(broken)("q")  # type: ignore[arg-type]


# --- console --------------------------------------------------------------------------------------


async def test_console_input_reads_a_line_then_eof_accepts() -> None:
    out = io.StringIO()
    source = ConsoleInput(stream_in=io.StringIO("It is one drop, not two.\n"), stream_out=out)
    assert await source("Enter your response: ") == "It is one drop, not two."
    assert await source("Enter your response: ") == ACCEPT  # end of file
    assert out.getvalue() == "SME> Enter your response: " * 2


async def test_console_input_normalises_a_typed_accept() -> None:
    source = ConsoleInput(prompt_prefix="", stream_in=io.StringIO("  accept \n"), stream_out=io.StringIO())
    assert await source("p") == ACCEPT


# --- http -----------------------------------------------------------------------------------------


async def test_http_input_posts_the_prompt_and_returns_the_reply(sme_server: str) -> None:
    source = HttpInput(f"{sme_server}/ok", timeout_s=5)
    assert await source("What is the dose?") == "SME says: What is the dose?"
    assert _SmeHandler.received == [{"prompt": "What is the dose?"}]


@pytest.mark.parametrize(
    ("path", "message"),
    [("/500", "HTTP 500"), ("/bad", "invalid JSON"), ("/noreply", 'without a string "reply"')],
)
async def test_http_input_bad_answers_are_clear_errors(sme_server: str, path: str, message: str) -> None:
    url = f"{sme_server}{path}"
    with pytest.raises(HumanInputError, match=message) as info:
        await HttpInput(url, timeout_s=5)("q")
    assert url in str(info.value) and "\n" not in str(info.value)


async def test_http_input_timeout_is_a_clear_error(sme_server: str) -> None:
    with pytest.raises(HumanInputError, match="/slow"):
        await HttpInput(f"{sme_server}/slow", timeout_s=0.2)("q")


async def test_http_input_closed_port_fails_fast() -> None:
    url = f"http://127.0.0.1:{_closed_port()}/sme"
    started = time.monotonic()
    with pytest.raises(HumanInputError, match="could not be reached") as info:
        await HttpInput(url, timeout_s=10)("q")
    assert time.monotonic() - started < 2
    assert url in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("url", ["file:///etc/passwd", "ftp://host/x", "http://", "not a url"])
def test_http_input_rejects_non_http_urls(url: str) -> None:
    with pytest.raises(ValueError, match="http"):
        HttpInput(url)
    with pytest.raises(ValueError):
        check_http_url(url)


# --- AutoGen --------------------------------------------------------------------------------------


async def test_sources_are_awaited_by_a_plain_user_proxy() -> None:
    """UserProxyAgent must see our instances as async input functions (not run them in a thread)."""
    proxy = UserProxyAgent("sme", input_func=ScriptedInput(["one drop"]))
    response = await proxy.on_messages([TextMessage(content="dose?", source="bot")], CancellationToken())
    assert isinstance(response.chat_message, TextMessage)
    assert response.chat_message.content == "one drop"


async def test_console_source_in_a_user_proxy() -> None:
    proxy = build_sme_proxy(ConsoleInput(stream_in=io.StringIO("two drops\n"), stream_out=io.StringIO()))
    response = await proxy.on_messages([TextMessage(content="dose?", source="bot")], CancellationToken())
    assert isinstance(response.chat_message, TextMessage)
    assert response.chat_message.content == "two drops"


async def test_correction_chat_runs_until_the_sme_accepts() -> None:
    client = ReplayChatCompletionClient(
        ["Tropicamide: two drops per eye.", "Corrected: one drop of 0.5% tropicamide per eye."]
    )
    assistant = AssistantAgent("assistant", model_client=client)
    script = ScriptedInput(["Wrong: it is one drop of 0.5%.", ACCEPT])
    sme = build_sme_proxy(script)
    assert isinstance(sme, UserProxyAgent) and sme.name == "sme"
    team = RoundRobinGroupChat([assistant, sme], termination_condition=TextMentionTermination(ACCEPT, sources=["sme"]))

    result = await team.run(task="How much tropicamide do I use for dilation?")

    chat = [(m.source, m.to_text()) for m in result.messages if isinstance(m, BaseChatMessage)]
    assert chat == [
        ("user", "How much tropicamide do I use for dilation?"),
        ("assistant", "Tropicamide: two drops per eye."),
        ("sme", "Wrong: it is one drop of 0.5%."),
        ("assistant", "Corrected: one drop of 0.5% tropicamide per eye."),
        ("sme", ACCEPT),
    ]
    # AutoGen announces each human turn with an (empty) input request just before the human message.
    for index, message in enumerate(result.messages):
        if isinstance(message, BaseChatMessage) and message.source == "sme":
            assert isinstance(result.messages[index - 1], UserInputRequestedEvent)
    assert result.stop_reason is not None and ACCEPT in result.stop_reason
    assert script.remaining == 0 and len(script.prompts) == 2
