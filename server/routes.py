"""The REST routes over :class:`server.service.Service` (memories, review, society, profile, history)."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Response
from fastapi.responses import PlainTextResponse

from agents.building import Turn
from memory.models import Status
from server.deps import Caller, Svc
from server.schemas import BuildBody, DecisionBody, EditBody, FeedbackBody, NewMemoryBody, ProfileBody

router = APIRouter()


@router.get("/health", tags=["service"])
def health(svc: Svc) -> dict[str, Any]:
    """Whether the service is up (no key needed)."""
    return {"ok": True, "store": svc.engine.store.mode}


@router.get("/metrics", tags=["service"], response_class=PlainTextResponse)
def metrics(svc: Svc, who: Caller) -> str:
    """Calls, errors and seconds per operation (Prometheus text format)."""
    m = svc.metrics
    lines = [f'mark_calls_total{{op="{k}"}} {v}' for k, v in sorted(m.calls.items())]
    lines += [f'mark_errors_total{{op="{k}"}} {v}' for k, v in sorted(m.errors.items())]
    lines += [f'mark_seconds_total{{op="{k}"}} {v:.6f}' for k, v in sorted(m.seconds.items())]
    return "\n".join(lines) + "\n"


@router.post("/v1/memories", tags=["memories"], status_code=201)
def add_memory(body: NewMemoryBody, svc: Svc, who: Caller) -> dict[str, Any]:
    """Add a memory for the caller (SME credit from the role; the engine's policy sets the status)."""
    return svc.add(who, body.text, body.type, body.category).model_dump(mode="json")


@router.get("/v1/memories", tags=["memories"])
def list_memories(svc: Svc, who: Caller, user: str | None = None, status: Status | None = None) -> list[Any]:
    """The caller's memories and shared ones (an admin: any user's, or all)."""
    return [r.to_public() for r in svc.memories(who, user, status)]


@router.get("/v1/memories/search", tags=["memories"])
def search(svc: Svc, who: Caller, q: str, k: int = 3, preset: str | None = None, risk: str = "medium") -> list[Any]:
    """The caller's best memories for ``q`` with their score breakdown (recall counts unchanged)."""
    return [h.to_public() for h in svc.search(who, q, max(1, min(k, 50)), preset, risk)]


@router.get("/v1/memories/{memory_id}", tags=["memories"])
def show(memory_id: str, svc: Svc, who: Caller) -> dict[str, Any]:
    """A memory with its audited history."""
    return {"memory": svc.get(who, memory_id).to_public(), "history": svc.history(who, memory_id)}


@router.patch("/v1/memories/{memory_id}", tags=["memories"])
def edit(memory_id: str, body: EditBody, svc: Svc, who: Caller) -> dict[str, Any]:
    """Change a memory's text (its owner, or a reviewer)."""
    return svc.edit(who, memory_id, body.text).to_public()


@router.post("/v1/memories/{memory_id}/feedback", tags=["memories"])
def feedback(memory_id: str, body: FeedbackBody, svc: Svc, who: Caller) -> dict[str, Any]:
    """Vote a memory correct or incorrect (weighted by the caller's role)."""
    return svc.feedback(who, memory_id, body.correct).to_public()


@router.delete("/v1/memories/{memory_id}", tags=["memories"], status_code=204)
def forget(memory_id: str, svc: Svc, who: Caller) -> Response:
    """Forget a memory (its owner; shared memory: an admin)."""
    svc.forget(who, memory_id)
    return Response(status_code=204)


@router.get("/v1/export", tags=["memories"], response_class=PlainTextResponse)
def export(svc: Svc, who: Caller) -> str:
    """The caller's memories as JSONL (an admin: every memory)."""
    return "".join(json.dumps(r.to_public(), ensure_ascii=False, sort_keys=True) + "\n" for r in svc.export(who))


@router.get("/v1/reviews", tags=["review"])
def reviews(svc: Svc, who: Caller) -> list[Any]:
    """The review queue (reviewers)."""
    return [r.to_public() for r in svc.pending(who)]


@router.post("/v1/reviews/{memory_id}", tags=["review"])
def decide(memory_id: str, body: DecisionBody, svc: Svc, who: Caller) -> dict[str, Any]:
    """Approve, edit or reject a pending memory (reviewers; audited)."""
    return svc.decide(who, memory_id, body.action, body.text, body.reason).to_public()


@router.post("/v1/build", tags=["society"])
def build(body: BuildBody, svc: Svc, who: Caller) -> dict[str, Any]:
    """Build a finished conversation into the caller's memory: all or nothing (502 if the model drops out)."""
    turns = [Turn(role=t.role, content=t.content) for t in body.turns]
    return svc.build(who, turns, body.review).as_json()


@router.get("/v1/profile", tags=["profile"])
def profile(svc: Svc, who: Caller) -> list[Any]:
    """The caller's profile."""
    return [e.model_dump(mode="json") for e in svc.profile(who)]


@router.put("/v1/profile/{key}", tags=["profile"])
def set_profile(key: str, body: ProfileBody, svc: Svc, who: Caller) -> dict[str, Any]:
    """Set a key of the caller's profile (a different value is superseded, audited)."""
    return svc.set_profile(who, key, body.value).model_dump(mode="json")


@router.delete("/v1/profile/{key}", tags=["profile"])
def unset_profile(key: str, svc: Svc, who: Caller) -> dict[str, Any]:
    """Remove a key from the caller's profile."""
    return svc.unset_profile(who, key).model_dump(mode="json")


@router.get("/v1/history/search", tags=["history"])
def history_search(svc: Svc, who: Caller, q: str, k: int = 5) -> list[Any]:
    """The turns of the caller's own history that answer ``q``."""
    return [h.model_dump(mode="json") for h in svc.history_search(who, q, max(1, min(k, 50)))]
