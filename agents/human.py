"""Input sources for the SME proxy (spec H1): console, scripted lines, any callable, or an HTTP endpoint.

Each source is an async input function that AutoGen's ``UserProxyAgent`` accepts directly::

    UserProxyAgent("sme", input_func=ScriptedInput(["It is one drop, not two.", ACCEPT]))

The SME ends a correction chat by replying exactly :data:`ACCEPT`; a team stops on it with
``TextMentionTermination(ACCEPT, sources=["sme"])``. Sources that run dry (a finished script, a console
at end of file) answer ``ACCEPT`` so that a chat never hangs waiting for a human who is gone. A source
that cannot produce an answer raises :class:`HumanInputError` with one line that says why.
"""

from __future__ import annotations

import asyncio
import inspect
import ipaddress
import json
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import IO, Any

from autogen_agentchat.agents import UserProxyAgent
from autogen_core import CancellationToken

from mark.errors import UnavailableError

ACCEPT = "ACCEPT"
"""The SME's explicit "this is right now, stop correcting" signal; it ends a correction chat."""

SME_DESCRIPTION = "The subject-matter expert: corrects the assistant and replies ACCEPT when the answer is right."

PromptFunc = Callable[[str], str | Awaitable[str]]
"""Any sync or async function from a prompt to the SME's reply."""


class HumanInputError(UnavailableError):
    """An input source could not produce the SME's reply."""


class ScriptExhausted(HumanInputError):
    """A script ran out of lines and was told not to answer ACCEPT by itself."""


class HttpJsonError(UnavailableError):
    """An HTTP JSON call failed; the message is one line that names the URL."""


class _AsyncInput:
    """Base of the async input sources: callable as ``await source(prompt, cancellation_token)``.

    ``UserProxyAgent`` picks the sync or async calling convention with ``inspect.iscoroutinefunction``,
    which is False for an *instance* with ``async def __call__`` on Python 3.11. Exposing the coroutine
    method's code object makes the instance "function-like" to ``inspect``, so it is awaited, not run
    in a thread (where it would return an un-awaited coroutine).
    """

    def __init__(self) -> None:
        call = type(self).__call__
        self.__name__ = type(self).__name__
        self.__code__ = call.__code__
        self.__defaults__ = call.__defaults__
        self.__kwdefaults__ = call.__kwdefaults__

    async def __call__(self, prompt: str, cancellation_token: CancellationToken | None = None) -> str:
        """Return the SME's reply to ``prompt``."""
        raise NotImplementedError


async def run_blocking(fn: Callable[..., Any], *args: Any, token: CancellationToken | None = None) -> Any:
    """Run a blocking call in a worker thread, cancellable through AutoGen's token."""
    task: asyncio.Task[Any] = asyncio.ensure_future(asyncio.to_thread(fn, *args))
    if token is not None:
        token.link_future(task)
    return await task


async def call_maybe_async(fn: Callable[..., Any], *args: Any) -> Any:
    """Call a sync or async function: coroutines are awaited, blocking functions run in a thread."""
    if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(type(fn).__call__):
        return await fn(*args)
    result = await run_blocking(fn, *args)
    if inspect.isawaitable(result):
        result = await result
    return result


class ScriptedInput(_AsyncInput):
    """Replies from a fixed list of lines (scenario files, tests); records every prompt it was shown."""

    def __init__(self, lines: Sequence[str], accept_when_exhausted: bool = True) -> None:
        """Answer with ``lines`` in order; then ACCEPT, or raise :class:`ScriptExhausted`."""
        super().__init__()
        if isinstance(lines, str):
            raise TypeError("ScriptedInput takes a sequence of lines, not one string")
        self._lines = [str(line) for line in lines]
        self._next = 0
        self.accept_when_exhausted = accept_when_exhausted
        self.prompts: list[str] = []

    @property
    def remaining(self) -> int:
        """How many scripted lines have not been used yet."""
        return len(self._lines) - self._next

    async def __call__(self, prompt: str, cancellation_token: CancellationToken | None = None) -> str:
        """Return the next scripted line."""
        self.prompts.append(prompt)
        if self._next >= len(self._lines):
            if self.accept_when_exhausted:
                return ACCEPT
            raise ScriptExhausted(f"the SME script ran out after {len(self._lines)} line(s)")
        line = self._lines[self._next]
        self._next += 1
        return line


class ConsoleInput(_AsyncInput):
    """Reads the SME's reply from a console (any text streams); end of file means ACCEPT."""

    def __init__(
        self, prompt_prefix: str = "SME> ", stream_in: IO[str] | None = None, stream_out: IO[str] | None = None
    ) -> None:
        """Read from ``stream_in`` (default stdin) and prompt on ``stream_out`` (default stdout)."""
        super().__init__()
        self.prompt_prefix = prompt_prefix
        self.stream_in = stream_in if stream_in is not None else sys.stdin
        self.stream_out = stream_out if stream_out is not None else sys.stdout

    def _read(self, prompt: str) -> str:
        self.stream_out.write(f"{self.prompt_prefix}{prompt}")
        self.stream_out.flush()
        line = self.stream_in.readline()
        if not line:
            return ACCEPT
        reply = line.rstrip("\r\n")
        return ACCEPT if reply.strip().upper() == ACCEPT else reply

    async def __call__(self, prompt: str, cancellation_token: CancellationToken | None = None) -> str:
        """Show the prompt and read one line without blocking the event loop."""
        reply: str = await run_blocking(self._read, prompt, token=cancellation_token)
        return reply


class CallableInput(_AsyncInput):
    """Wraps any sync or async ``fn(prompt) -> str`` (a UI hook, another program, a test)."""

    def __init__(self, fn: PromptFunc) -> None:
        """Ask ``fn`` for every reply; sync functions run in a worker thread."""
        super().__init__()
        self.fn = fn

    async def __call__(self, prompt: str, cancellation_token: CancellationToken | None = None) -> str:
        """Return ``fn(prompt)``, checking that it is a string."""
        reply = await call_maybe_async(self.fn, prompt)
        if not isinstance(reply, str):
            name = getattr(self.fn, "__name__", type(self.fn).__name__)
            raise HumanInputError(f"SME input function {name!r} returned {type(reply).__name__}, expected str")
        return reply


def check_http_url(url: str) -> str:
    """Return ``url`` if it is an http(s) URL with a host; raise ValueError otherwise."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise ValueError(f"expected an http:// or https:// URL with a host, got {url!r}")
    return url


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def post_json(url: str, payload: Mapping[str, Any], timeout_s: float) -> Any:
    """POST ``payload`` as JSON and return the decoded JSON reply (blocking).

    Loopback URLs bypass any proxy set in the environment. Every failure (connection refused, timeout,
    HTTP error status, a reply that is not JSON) raises :class:`HttpJsonError` with one line naming the URL.
    """
    request = urllib.request.Request(
        check_http_url(url),
        data=json.dumps(payload).encode("utf-8"),
        headers={"Content-Type": "application/json", "Accept": "application/json"},
        method="POST",
    )
    handlers = [urllib.request.ProxyHandler({})] if _is_loopback(urllib.parse.urlsplit(url).hostname or "") else []
    opener = urllib.request.build_opener(*handlers)
    try:
        with opener.open(request, timeout=timeout_s) as response:
            body = response.read()
    except urllib.error.HTTPError as exc:
        exc.close()
        raise HttpJsonError(f"{url} answered HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        raise HttpJsonError(f"{url} could not be reached: {exc.reason}") from None
    except (TimeoutError, OSError) as exc:
        raise HttpJsonError(f"{url} failed: {type(exc).__name__}: {exc or 'timed out'}") from None
    try:
        return json.loads(body)
    except ValueError:
        raise HttpJsonError(f"{url} answered with invalid JSON: {body[:80]!r}") from None


class HttpInput(_AsyncInput):
    """Asks a remote SME over HTTP: POSTs ``{"prompt": ...}`` and expects ``{"reply": "..."}``."""

    def __init__(self, url: str, timeout_s: float = 30) -> None:
        """Send prompts to ``url`` (http or https), waiting at most ``timeout_s`` seconds for each."""
        super().__init__()
        self.url = check_http_url(url)
        self.timeout_s = timeout_s

    async def __call__(self, prompt: str, cancellation_token: CancellationToken | None = None) -> str:
        """POST the prompt and return the reply."""
        try:
            answer = await run_blocking(
                post_json, self.url, {"prompt": prompt}, self.timeout_s, token=cancellation_token
            )
        except HttpJsonError as exc:
            raise HumanInputError(f"SME input: {exc}") from None
        reply = answer.get("reply") if isinstance(answer, dict) else None
        if not isinstance(reply, str):
            raise HumanInputError(f'SME input: {self.url} answered without a string "reply": {str(answer)[:80]}')
        return reply


def sme_input_from(spec: str, script: list[str]) -> _AsyncInput:
    """Where an SME's lines come from: ``script`` (the scenario's lines), ``console``, or an HTTP endpoint."""
    choice = spec.strip()
    if choice == "script":
        return ScriptedInput(script)
    if choice == "console":
        return ConsoleInput()
    if choice.startswith(("http://", "https://")):
        return HttpInput(choice)
    raise HumanInputError(f"unknown SME input {spec!r}: script, console or an http(s) URL")


InputFunc = Callable[[str], str] | Callable[[str, CancellationToken | None], Awaitable[str]]
"""What ``UserProxyAgent(input_func=...)`` accepts; every source in this module is the async kind."""


def build_sme_proxy(input_func: InputFunc, name: str = "sme", *, description: str = SME_DESCRIPTION) -> UserProxyAgent:
    """The SME's AutoGen agent: a ``UserProxyAgent`` that answers with ``input_func``."""
    return UserProxyAgent(name, description=description, input_func=input_func)


__all__ = [
    "ACCEPT",
    "CallableInput",
    "ConsoleInput",
    "HttpInput",
    "HttpJsonError",
    "HumanInputError",
    "InputFunc",
    "PromptFunc",
    "ScriptExhausted",
    "ScriptedInput",
    "build_sme_proxy",
    "call_maybe_async",
    "check_http_url",
    "post_json",
    "run_blocking",
]
