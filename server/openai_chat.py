"""``POST /v1/chat/completions``: OpenAI's chat API, answered with the caller's memory injected.

An existing chatbot switches to mark by pointing its OpenAI client at mark and using a mark key::

    client = OpenAI(base_url="http://127.0.0.1:8420/v1", api_key="mk_...")

For the latest user message, mark retrieves what an answer should be given (the caller's profile, the
knowledge base's passages, the top memory of each type, earlier turns of the caller's history: the
same block :class:`agents.chatbot.MarkMemory` injects), adds it as one system message after the
caller's own system messages, and forwards the conversation to the configured model. The reply is in
OpenAI's format, plus a ``mark`` field naming the memories used and the passages cited. ``stream``
is answered as one server-sent content chunk and ``[DONE]``.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

from autogen_core.models import AssistantMessage, LLMMessage, SystemMessage, UserMessage
from fastapi import APIRouter
from fastapi.responses import StreamingResponse

from agents.errors import ProviderError
from agents.structured import unreachable
from mark.errors import InputError
from server.deps import Caller, Svc
from server.schemas import ChatMessage, ChatRequest


def to_llm(messages: list[ChatMessage], block: str) -> list[LLMMessage]:
    """OpenAI messages as AutoGen ones, the memory block after the caller's system messages."""
    out: list[LLMMessage] = []
    leading = True
    for message in messages:
        text = message.text()
        if message.role in {"system", "developer"}:
            out.append(SystemMessage(content=text))
            continue
        if leading and block:
            out.append(SystemMessage(content=block))
        leading = False
        if message.role == "assistant":
            out.append(AssistantMessage(content=text, source="assistant"))
        elif message.role == "user":
            out.append(UserMessage(content=text, source="user"))
    if leading and block:
        out.append(SystemMessage(content=block))
    return out


def _reply(request: ChatRequest, content: str, usage: Any, extra: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": request.model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.prompt_tokens + usage.completion_tokens,
        },
        "mark": extra,
    }


def _stream(reply: dict[str, Any]) -> Iterator[str]:
    chunk = {
        "id": reply["id"],
        "object": "chat.completion.chunk",
        "created": reply["created"],
        "model": reply["model"],
        "choices": [{"index": 0, "delta": reply["choices"][0]["message"], "finish_reason": "stop"}],
    }
    yield f"data: {json.dumps(chunk)}\n\n"
    yield "data: [DONE]\n\n"


router = APIRouter()


@router.post("/v1/chat/completions", tags=["openai"], response_model=None)
def chat_completions(body: ChatRequest, svc: Svc, who: Caller) -> dict[str, Any] | StreamingResponse:
    """OpenAI chat completions with the caller's memory injected, forwarded to the configured model."""
    question = next((m.text() for m in reversed(body.messages) if m.role == "user"), "")
    if not question.strip():
        raise InputError("messages: a chat needs a user message with text")
    got = svc.context(who, question)
    limit = body.max_completion_tokens or body.max_tokens
    extra_args: dict[str, Any] = {"max_tokens": limit} if limit else {}
    if body.temperature is not None:
        extra_args["temperature"] = body.temperature
    started = time.monotonic()
    try:
        result = asyncio.run(svc.client.create(to_llm(body.messages, got.block), extra_create_args=extra_args))
    except Exception as exc:
        svc.metrics.observe("chat", time.monotonic() - started, True)
        if unreachable(exc):
            raise ProviderError(f"the model could not be reached: {exc}") from exc
        raise
    svc.metrics.observe("chat", time.monotonic() - started, False)
    content = result.content if isinstance(result.content, str) else json.dumps(result.content, default=str)
    extra = {
        "memories": [h.record.id for h in got.hits],
        "citations": [
            {"label": f"K{n}", "source": p.chunk.source, "section": p.chunk.section, "passage_id": p.chunk.id}
            for n, p in enumerate(got.passages, start=1)
        ],
    }
    reply = _reply(body, content, result.usage, extra)
    if body.stream:
        return StreamingResponse(_stream(reply), media_type="text/event-stream")
    return reply
