"""The load and the checks of ``bench_service.py``, shared with ``tests/server/test_load.py``.

A mark server (``mark serve``, started as a separate process) is driven over loopback by client threads,
each with its own HTTP client, acting for users with one API key each. Every operation is timed; every
write the server acknowledged is remembered, so that afterwards, through the API again, it can be
checked that each one is present, audited and visible to its owner only, and that the votes add up.
"""

from __future__ import annotations

import json
import os
import random
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
WORDS = [
    "tropicamide",
    "atropine",
    "pilocarpine",
    "timolol",
    "latanoprost",
    "epinephrine",
    "phenylephrine",
    "cyclopentolate",
    "homatropine",
    "glaucoma",
    "mydriasis",
    "miosis",
    "cycloplegia",
    "sphincter",
    "dilator",
    "cornea",
    "retina",
    "lens",
    "pupil",
    "drops",
    "dose",
    "strength",
    "onset",
    "duration",
    "children",
    "adults",
    "contraindication",
    "warning",
    "interaction",
    "allergy",
]


def free_port() -> int:
    """A free TCP port on loopback."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until_up(url: str, seconds: float = 120.0) -> None:
    """Poll ``url`` until it answers 200 (or fail after ``seconds``)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"{url} did not answer within {seconds:.0f} s")


@contextmanager
def process(args: list[str], env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """Run a server process for the duration of the block, its output in ``log``."""
    with log.open("wb") as out:
        proc = subprocess.Popen(args, env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
        try:
            yield proc
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def make_keys(home: Path, users: int, reviewer: bool = True) -> dict[str, str]:
    """One user key per user (u00, u01, ...) written into ``home``'s keys file (and a reviewer, ``rev``)."""
    sys.path.insert(0, str(ROOT))
    from memory.keys import KeyStore, Role

    store = KeyStore(home / "keys.json")
    now = datetime.now(UTC)
    keys = {f"u{i:02d}": store.create(f"u{i:02d}", [Role.USER], now=now).key for i in range(users)}
    if reviewer:
        keys["rev"] = store.create("rev", [Role.REVIEWER, Role.ADMIN], now=now).key
    return keys


@dataclass
class Ledger:
    """What the clients did and what the server acknowledged."""

    latencies: dict[str, list[float]] = field(default_factory=lambda: {"add": [], "search": [], "feedback": []})
    errors: dict[str, int] = field(default_factory=dict)
    added: dict[str, tuple[str, str]] = field(default_factory=dict)  # memory id -> (owner, text)
    votes: dict[str, list[bool]] = field(default_factory=dict)  # memory id -> acknowledged votes
    lock: threading.Lock = field(default_factory=threading.Lock)

    def error(self, what: str) -> None:
        with self.lock:
            self.errors[what] = self.errors.get(what, 0) + 1


def _text(rng: random.Random, user: str, n: int) -> str:
    return f"{user} note {n}: " + " ".join(rng.sample(WORDS, 6))


def client_loop(base: str, keys: dict[str, str], users: list[str], seconds: float, seed: int, ledger: Ledger) -> None:
    """One client: search, add and feedback (5:3:2) for its users until the time is up."""
    rng = random.Random(seed)
    mine: dict[str, list[str]] = {u: [] for u in users}
    deadline = time.monotonic() + seconds
    n = 0
    with httpx.Client(base_url=base, timeout=60.0) as http:
        while time.monotonic() < deadline:
            n += 1
            user = users[n % len(users)]
            headers = {"Authorization": f"Bearer {keys[user]}"}
            roll = rng.random()
            op = "search" if roll < 0.5 or (roll >= 0.8 and not mine[user]) else "add" if roll < 0.8 else "feedback"
            started = time.perf_counter()
            try:
                if op == "search":
                    r = http.get("/v1/memories/search", params={"q": " ".join(rng.sample(WORDS, 3))}, headers=headers)
                elif op == "add":
                    text = _text(rng, user, n)
                    r = http.post("/v1/memories", json={"text": text}, headers=headers)
                else:
                    target, correct = rng.choice(mine[user]), rng.random() < 0.7
                    r = http.post(f"/v1/memories/{target}/feedback", json={"correct": correct}, headers=headers)
            except httpx.HTTPError as exc:
                ledger.error(f"{op}: {type(exc).__name__}")
                continue
            elapsed = time.perf_counter() - started
            if r.status_code not in (200, 201):
                ledger.error(f"{op}: HTTP {r.status_code}")
                continue
            with ledger.lock:
                ledger.latencies[op].append(elapsed)
                if op == "add":
                    body = r.json()
                    memory_id = body["record"]["id"]
                    if body["action"] == "created":
                        ledger.added[memory_id] = (user, text)
                        mine[user].append(memory_id)
                elif op == "feedback":
                    ledger.votes.setdefault(target, []).append(correct)


def run_load(base: str, keys: dict[str, str], clients: int, seconds: float) -> tuple[Ledger, float]:
    """``clients`` threads for ``seconds``; returns the ledger and the wall time."""
    users = sorted(u for u in keys if u.startswith("u"))
    ledger = Ledger()
    threads = [
        threading.Thread(
            target=client_loop, args=(base, keys, users[i::clients], seconds, 1000 + i, ledger), daemon=True
        )
        for i in range(clients)
    ]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return ledger, time.monotonic() - started


def verify(base: str, keys: dict[str, str], ledger: Ledger, others: int = 3, seed: int = 7) -> dict[str, Any]:
    """Every acknowledged write present, audited, visible only to its owner; votes counted exactly."""
    rng = random.Random(seed)
    users = sorted(u for u in keys if u.startswith("u"))
    problems: list[str] = []
    checked = 0
    with httpx.Client(base_url=base, timeout=60.0) as http:
        for memory_id, (owner, text) in sorted(ledger.added.items()):
            got = http.get(f"/v1/memories/{memory_id}", headers={"Authorization": f"Bearer {keys[owner]}"})
            if got.status_code != 200:
                problems.append(f"{memory_id}: owner {owner} got HTTP {got.status_code}")
                continue
            body = got.json()
            if body["memory"]["text"] != text:
                problems.append(f"{memory_id}: text changed")
            if not any(e["kind"] == "create" and owner in e["actor"] for e in body["history"]):
                problems.append(f"{memory_id}: no create event by {owner}")
            votes = ledger.votes.get(memory_id, [])
            counted = (body["memory"]["validated_correct"], body["memory"]["validated_incorrect"])
            if counted != (sum(votes), len(votes) - sum(votes)):
                problems.append(f"{memory_id}: votes {counted} != acknowledged {(sum(votes), len(votes) - sum(votes))}")
            for other in rng.sample([u for u in users if u != owner], min(others, len(users) - 1)):
                seen = http.get(f"/v1/memories/{memory_id}", headers={"Authorization": f"Bearer {keys[other]}"})
                if seen.status_code != 404:
                    problems.append(f"{memory_id}: {other} got HTTP {seen.status_code}")
            checked += 1
        for user in users:
            listed = http.get("/v1/memories", headers={"Authorization": f"Bearer {keys[user]}"}).json()
            strangers = [m["id"] for m in listed if m["user_id"] != user and m["type"] != "residual"]
            if strangers:
                problems.append(f"{user} lists other users' personal memories: {strangers[:3]}")
    return {"acknowledged_adds": len(ledger.added), "checked": checked, "problems": problems}


def hot_spot(base: str, keys: dict[str, str], threads: int = 4, votes: int = 25) -> dict[str, Any]:
    """``threads`` x ``votes`` concurrent "correct" votes on one memory, and identical adds from every thread."""
    owner = "u00"
    auth = {"Authorization": f"Bearer {keys[owner]}"}
    with httpx.Client(base_url=base, timeout=60.0) as http:
        target = http.post("/v1/memories", json={"text": "hot spot memory for the vote count"}, headers=auth).json()
    memory_id = target["record"]["id"]
    texts = [f"identical add {i}: tropicamide drops strength {i}" for i in range(10)]
    acked: list[int] = []
    lock = threading.Lock()

    def worker() -> None:
        with httpx.Client(base_url=base, timeout=60.0) as http:
            ok = 0
            for _ in range(votes):
                r = http.post(f"/v1/memories/{memory_id}/feedback", json={"correct": True}, headers=auth)
                ok += r.status_code == 200
            for text in texts:
                http.post("/v1/memories", json={"text": text}, headers=auth)
            with lock:
                acked.append(ok)

    pool = [threading.Thread(target=worker) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    with httpx.Client(base_url=base, timeout=60.0) as http:
        after = http.get(f"/v1/memories/{memory_id}", headers=auth).json()["memory"]
        listed = http.get("/v1/memories", headers=auth).json()
    records = [m for m in listed if m["text"] in texts and m["status"] in ("active", "probationary")]
    return {
        "votes_acknowledged": sum(acked),
        "votes_counted": after["validated_correct"],
        "identical_texts": len(texts),
        "records_for_them": len(records),
    }


def dump(path: Path, payload: dict[str, Any]) -> None:
    """Write a JSON file."""
    path.write_text(json.dumps(payload, indent=2, default=str), encoding="utf-8")
