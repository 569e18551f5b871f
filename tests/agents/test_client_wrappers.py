"""The client-wrapper base: what it forwards, and wrappers that change only what they override.

Inner clients are the replay client (it records the arguments of every ``create``) and the function
fake (it records ``close``); no mocks.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence

import pytest
from autogen_core import CancellationToken
from autogen_core.models import ChatCompletionClient, CreateResult, LLMMessage, RequestUsage, UserMessage
from autogen_core.tools import ToolSchema
from pydantic import BaseModel

from agents.client_wrappers import CreateRequest, TokenCappedClient, WrappedClient
from agents.errors import TruncatedOutputError
from agents.fakes import FAKE_INFO, FunctionChatClient
from agents.providers import LOCAL_MODEL_INFO, LocalChatClient, _SharedLlama, replay_client
from agents.remote import JsonGuardedClient
from memory.config import SchemaMode

QUESTION: list[LLMMessage] = [UserMessage(content="what is the adult dose", source="user")]
LOOKUP: ToolSchema = {"name": "lookup", "description": "Look a term up.", "parameters": {"type": "object"}}


class Verdict(BaseModel):
    correct: bool


class RecordingClient(WrappedClient):
    """A wrapper that keeps every request it forwards and changes nothing."""

    def __init__(self, inner: ChatCompletionClient) -> None:
        super().__init__(inner)
        self.requests: list[CreateRequest] = []

    async def complete(self, request: CreateRequest) -> CreateResult:
        self.requests.append(request)
        return await super().complete(request)

    def stream(self, request: CreateRequest) -> AsyncGenerator[str | CreateResult, None]:
        self.requests.append(request)
        return super().stream(request)


def _echo(messages: Sequence[LLMMessage], model: type[BaseModel] | None) -> str:
    return f"{len(messages)} message(s), model {model.__name__ if model else None}"


def _cut(text: str) -> CreateResult:
    """A reply stopped at the token limit."""
    return CreateResult(
        finish_reason="length", content=text, usage=RequestUsage(prompt_tokens=4, completion_tokens=3), cached=False
    )


async def test_create_is_packed_into_one_request_and_forwarded_with_every_argument() -> None:
    replay = replay_client(["one"])
    wrapped = RecordingClient(replay)
    token = CancellationToken()
    result = await wrapped.create(
        QUESTION,
        tools=[LOOKUP],
        tool_choice="none",
        json_output=Verdict,
        extra_create_args={"seed": 7},
        cancellation_token=token,
    )
    assert result.content == "one"
    assert wrapped.requests == [CreateRequest(QUESTION, [LOOKUP], "none", Verdict, {"seed": 7}, token)]
    call = replay.create_calls[0]
    assert call["messages"] is QUESTION and call["tools"] == [LOOKUP]
    assert call["json_output"] is Verdict and call["extra_create_args"] == {"seed": 7}
    assert call["cancellation_token"] is token


async def test_create_stream_is_forwarded() -> None:
    wrapped = WrappedClient(replay_client(["two words"]))
    chunks = [chunk async for chunk in wrapped.create_stream(QUESTION)]
    assert chunks[:2] == ["two ", "words"]
    assert isinstance(chunks[2], CreateResult) and chunks[2].content == "two words"


async def test_usage_tokens_and_capabilities_are_the_inner_clients() -> None:
    replay = replay_client(["a reply of five words"])
    wrapped = WrappedClient(replay)
    await wrapped.create(QUESTION)
    # the replay client counts words: 5 in the question ("what is the adult dose"), 5 in the reply
    assert wrapped.actual_usage() == replay.actual_usage() == RequestUsage(prompt_tokens=5, completion_tokens=5)
    assert wrapped.total_usage() == replay.total_usage()
    assert wrapped.count_tokens(QUESTION, tools=[LOOKUP]) == 5
    assert wrapped.remaining_tokens(QUESTION) == 10000 - 10
    assert wrapped.model_info is LOCAL_MODEL_INFO
    with pytest.deprecated_call():  # the replay client warns that capabilities is deprecated
        assert wrapped.capabilities is LOCAL_MODEL_INFO


async def test_the_fake_counts_its_own_way_and_the_wrapper_reports_that() -> None:
    fake = FunctionChatClient(_echo)
    wrapped = WrappedClient(fake)
    result = await wrapped.create(QUESTION, json_output=Verdict)
    assert result.content == "1 message(s), model Verdict"
    assert fake.calls == [(QUESTION, Verdict)]
    assert wrapped.total_usage() == fake.total_usage() == result.usage
    assert wrapped.count_tokens(QUESTION) == fake.count_tokens(QUESTION)
    assert wrapped.remaining_tokens(QUESTION) == 32768 - fake.count_tokens(QUESTION)
    assert wrapped.model_info is FAKE_INFO and wrapped.capabilities is FAKE_INFO


async def test_close_closes_the_inner_client() -> None:
    fake = FunctionChatClient(_echo)
    await WrappedClient(fake).close()
    assert fake.closed


def test_defaults_go_under_the_calls_own_arguments() -> None:
    request = CreateRequest(QUESTION, extra_create_args={"max_tokens": 4, "seed": 1})
    assert request.with_defaults({}) is request
    merged = request.with_defaults({"max_tokens": 160, "temperature": 0.0})
    assert merged.extra_create_args == {"max_tokens": 4, "temperature": 0.0, "seed": 1}
    assert merged.messages is QUESTION and request.extra_create_args == {"max_tokens": 4, "seed": 1}


async def test_token_cap_changes_only_the_arguments_and_close() -> None:
    fake = FunctionChatClient(_echo)
    recorder = RecordingClient(replay_client(["capped", "own limit", "streamed"]))
    capped = TokenCappedClient(recorder, 160)
    assert capped.default_create_args == {"max_tokens": 160} and capped.max_tokens == 160
    await capped.create(QUESTION, json_output=True, extra_create_args={"seed": 1})
    await capped.create(QUESTION, extra_create_args={"max_tokens": 8})
    chunks = [chunk async for chunk in capped.create_stream(QUESTION)]
    sent = [request.extra_create_args for request in recorder.requests]
    assert sent == [{"max_tokens": 160, "seed": 1}, {"max_tokens": 8}, {"max_tokens": 160}]
    assert recorder.requests[0].json_output is True
    assert isinstance(chunks[-1], CreateResult) and chunks[-1].content == "streamed"
    # everything else is forwarded unchanged
    assert capped.total_usage() == recorder.total_usage()
    assert capped.count_tokens(QUESTION) == 5 and capped.model_info is LOCAL_MODEL_INFO
    # the chatbot's caller owns the inner client: closing the cap leaves it open
    fake_cap = TokenCappedClient(fake, 160)
    await fake_cap.close()
    assert not fake.closed


async def test_the_function_fake_takes_requests_and_does_not_stream() -> None:
    fake = FunctionChatClient(_echo)
    result = await fake.create(QUESTION + QUESTION)
    assert result.content == "2 message(s), model None" and result.finish_reason == "stop"
    with pytest.raises(NotImplementedError, match="does not stream"):
        fake.create_stream(QUESTION)


async def test_json_guard_raises_on_cut_off_json_and_passes_cut_off_text() -> None:
    guard = JsonGuardedClient(replay_client([_cut('{"corr'), _cut("a long sto")]), max_tokens=3)
    with pytest.raises(TruncatedOutputError, match="cut off at max_tokens=3") as info:
        await guard.create(QUESTION, json_output=True)
    assert info.value.result.content == '{"corr'
    text = await guard.create(QUESTION)
    assert text.finish_reason == "length" and text.content == "a long sto"


async def test_json_object_mode_sends_the_schema_as_llama_cpp_expects() -> None:
    replay = replay_client(['{"correct": true}'])
    guard = JsonGuardedClient(replay, schema_mode=SchemaMode.JSON_OBJECT)
    await guard.create(QUESTION, json_output=Verdict, extra_create_args={"seed": 1})
    call = replay.create_calls[0]
    assert call["json_output"] is None
    schema = {"type": "json_object", "schema": Verdict.model_json_schema()}
    assert call["extra_create_args"] == {"seed": 1, "response_format": schema}


async def test_local_view_adds_sampling_serialises_and_keeps_the_shared_model_open() -> None:
    replay = replay_client(["plain", _cut('{"corr')])
    local = LocalChatClient(_SharedLlama(replay), temperature=0.0, max_tokens=48)  # type: ignore[arg-type]
    assert local.default_create_args == {"temperature": 0.0, "max_tokens": 48}
    token = CancellationToken()
    assert (await local.create(QUESTION, extra_create_args={"max_tokens": 4}, cancellation_token=token)).content
    # the call's own limit wins; the token guards the shielded call, not the inner client's
    assert replay.create_calls[0]["extra_create_args"] == {"temperature": 0.0, "max_tokens": 4}
    assert replay.create_calls[0]["cancellation_token"] is None
    with pytest.raises(TruncatedOutputError, match="max_tokens=48"):
        await local.create(QUESTION, json_output=Verdict)
    with pytest.raises(NotImplementedError, match="cannot stream"):
        await anext(local.create_stream(QUESTION))
    fake = FunctionChatClient(_echo)
    await LocalChatClient(_SharedLlama(fake), temperature=0.0, max_tokens=48).close()  # type: ignore[arg-type]
    assert not fake.closed
