"""The REST API through FastAPI's test client: keys, roles, isolation, review, build, errors."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient

from agents.errors import ProviderError
from memory.keys import KeyStore
from memory.models import Status
from server.app import create_app
from tests.conftest import NOW
from tests.server.conftest import Api

TRANSCRIPT = [
    {"role": "user", "content": "Concentration of tropicamide: A) 0.01 B) 0.02"},
    {"role": "assistant", "content": "Answer: B) 0.02."},
    {"role": "sme", "content": "No: tropicamide drops are 0.5% to 1%, so the answer is A) 0.01."},
    {"role": "assistant", "content": "Understood: A) 0.01."},
]


def _json(response: Any) -> Any:
    return response.json()


def test_no_key_unknown_key_and_revoked_key_are_401(api: Api) -> None:
    assert api.client.get("/v1/memories").status_code == 401
    bad = api.client.get("/v1/memories", headers={"Authorization": "Bearer mk_nope"})
    assert bad.status_code == 401 and bad.json() == {"error": "unknown or revoked API key"}
    store = KeyStore(api.settings.keys_path)
    store.revoke(next(e.id for e in store.list() if e.user_id == "bob"), now=NOW)
    assert api.get("bob", "/v1/memories").status_code == 401  # type: ignore[union-attr]
    assert api.client.get("/health").json()["ok"] is True  # health needs no key


def test_personal_memories_reach_their_owner_only_and_ids_leak_nothing(api: Api) -> None:
    added = api.post("alice", "/v1/memories", {"text": "Alice takes her tropicamide doses in micrograms."})
    assert added.status_code == 201  # type: ignore[union-attr]
    memory_id = _json(added)["record"]["id"]
    assert api.get("alice", f"/v1/memories/{memory_id}").status_code == 200  # type: ignore[union-attr]
    # another user gets exactly what an unknown id gets: 404, same body shape
    theirs, unknown = api.get("bob", f"/v1/memories/{memory_id}"), api.get("bob", "/v1/memories/no-such-id")
    assert (theirs.status_code, unknown.status_code) == (404, 404)  # type: ignore[union-attr]
    assert _json(theirs)["error"] == f"no memory with id {memory_id!r}"
    for verb in ("post", "patch", "delete"):
        url = f"/v1/memories/{memory_id}" + ("/feedback" if verb == "post" else "")
        body = {"correct": False} if verb == "post" else {"text": "changed"} if verb == "patch" else None
        call = getattr(api.client, verb)
        got = call(url, headers=api.auth("bob"), json=body) if body is not None else call(url, headers=api.auth("bob"))
        assert got.status_code == 404, verb
    found = _json(api.get("bob", "/v1/memories/search", params={"q": "tropicamide doses micrograms"}))
    assert all(h["user_id"] != "alice" for h in found)
    assert api.get("root", f"/v1/memories/{memory_id}").status_code == 200  # type: ignore[union-attr]
    shown = _json(api.get("alice", f"/v1/memories/{memory_id}"))
    assert shown["history"][0]["kind"] == "create" and "alice" in shown["history"][0]["actor"]


def test_sme_credit_comes_from_the_role_not_the_body(api: Api) -> None:
    fact = {"text": "Tropicamide drops are used at 0.5% to 1%.", "type": "residual"}
    sme = _json(api.post("dr-ana", "/v1/memories", fact))["record"]
    user = _json(api.post("alice", "/v1/memories", {**fact, "text": "Tropicamide drops are used at 0.02."}))["record"]
    assert (sme["source"], sme["status"]) == ("sme", "active")
    assert (user["source"], user["status"]) == ("user", "pending_review")  # shared from a user: a reviewer first
    extra = api.post("alice", "/v1/memories", {**fact, "source": "sme"})
    assert extra.status_code == 422  # type: ignore[union-attr]  # no field lets a caller claim SME credit


def test_review_needs_the_reviewer_role_and_is_audited(api: Api) -> None:
    pending = _json(api.post("alice", "/v1/memories", {"text": "Atropine drops last two weeks.", "type": "residual"}))
    memory_id = pending["record"]["id"]
    assert api.get("alice", "/v1/reviews").status_code == 403  # type: ignore[union-attr]
    queue = _json(api.get("rita", "/v1/reviews"))
    assert [r["id"] for r in queue] == [memory_id]
    refused = api.post("rita", f"/v1/reviews/{memory_id}", {"action": "reject"})
    assert refused.status_code == 422  # type: ignore[union-attr]  # a rejection needs its reason
    edited = _json(
        api.post("rita", f"/v1/reviews/{memory_id}", {"action": "edit", "text": "Atropine lasts 7-14 days."})
    )
    assert (edited["status"], edited["text"]) == ("active", "Atropine lasts 7-14 days.")
    last = _json(api.get("rita", f"/v1/memories/{memory_id}"))["history"][-1]
    assert (
        last["kind"] == "edit"
        and "rita" in last["actor"]
        and last["detail"]["before"] == "Atropine drops last two weeks."
    )


def test_build_credits_the_sme_and_a_model_failure_is_502_with_nothing_written(api: Api, api_settings: Any) -> None:
    built = api.post("dr-ana", "/v1/build", {"turns": TRANSCRIPT})
    assert built.status_code == 200, _json(built)  # type: ignore[union-attr]
    residual = [o for o in _json(built)["outcomes"] if o["type"] == "residual"]
    assert residual and all(o["status"] == Status.ACTIVE.value for o in residual)
    before = len(api.engine.list())

    def down() -> Any:
        class Down:
            async def create(self, *args: Any, **kwargs: Any) -> Any:
                raise ProviderError("cannot reach the model endpoint at http://127.0.0.1:9: connection refused")

        return Down()

    app = create_app(api_settings, engine=api.engine, client_factory=down)
    with TestClient(app) as other:
        failed = other.post("/v1/build", headers=api.auth("dr-ana"), json={"turns": TRANSCRIPT})
    assert failed.status_code == 502 and "nothing was written" in failed.json()["error"]
    assert len(api.engine.list()) == before


def test_malformed_bodies_are_422_with_a_json_error(api: Api) -> None:
    raw = api.client.post(
        "/v1/memories", headers={**api.auth("alice"), "content-type": "application/json"}, content=b"{"
    )
    assert raw.status_code == 422 and "error" in raw.json()
    empty = api.post("alice", "/v1/memories", {"text": ""})
    assert empty.status_code == 422 and _json(empty)["error"].startswith("body.text")  # type: ignore[union-attr]
    wrong = api.post("alice", "/v1/memories", {"text": "x", "type": "gossip"})
    assert wrong.status_code == 422  # type: ignore[union-attr]


def test_openai_chat_completions_inject_the_callers_memory(api: Api) -> None:
    api.post(
        "dr-ana", "/v1/memories", {"text": "Tropicamide: the answer is A) 0.01 for its strength.", "type": "residual"}
    )
    body = {
        "model": "mark",
        "messages": [
            {"role": "system", "content": "You answer eye-drop questions."},
            {"role": "user", "content": "Concentration of tropicamide:\nA) 0.01\nB) 0.02"},
        ],
    }
    reply = _json(api.post("bob", "/v1/chat/completions", body))
    assert reply["object"] == "chat.completion" and reply["choices"][0]["message"]["content"].startswith("Answer: A")
    assert len(reply["mark"]["memories"]) == 1
    streamed = api.client.post("/v1/chat/completions", headers=api.auth("bob"), json={**body, "stream": True})
    assert streamed.status_code == 200 and streamed.text.endswith("data: [DONE]\n\n")


def test_profile_and_metrics(api: Api) -> None:
    assert (
        api.client.put("/v1/profile/units", headers=api.auth("alice"), json={"value": "micrograms"}).status_code == 200
    )
    assert [e["value"] for e in _json(api.get("alice", "/v1/profile"))] == ["micrograms"]
    assert _json(api.get("bob", "/v1/profile")) == []
    metrics = api.get("alice", "/metrics")
    assert 'mark_calls_total{op="profile"}' in metrics.text  # type: ignore[union-attr]
