"""Write throughput of the MARK engine: single ``engine.add`` latency and a batched write path.

Run:  nice -n 10 .venv/bin/python benchmarks/bench_write.py [--quick] [--writes N] [--batch B] [--batches K]
      [--embed-threads N]

Store: 100 users x 90 personal + 1,000 residual memories bulk-loaded with ``engine.store.put`` (SYNTHETIC
vectors: ONNX MiniLM vectors of generated sentences, jittered; no audit events). Every measured write
has a unique text embedded by the real ONNX MiniLM (the engine's cached embedder, always a cache miss).

(a) single writes: ``engine.add(text, type, user, source=SME)`` over a third each of residual,
    user_question and llm_response on random users (embed + conflict-candidate query + judge + write
    + audit event), median / p95, then an instrumented pass that splits one add into its parts.
(b) an engine-equivalent batched path built from public parts: per batch of B memories (a third of each type), in
    two layouts: ``mixed`` (every item on a random user: ~B/1.5 partitions per batch) and ``one_user``
    (all personal items on one user, as when one conversation is distilled: 2 partitions),
    1. one batched embed (``engine.embedder.embed(texts)``),
    2. per item the engine's own candidate lookup (``engine.neighbours``; its embedding is a cache hit),
       ``flag_candidates``, ``judge_candidates`` with the engine's judge, and the engine's initial
       veracity / status,
    3. ``restore_records(engine, batch)``: an existence check per record, IMPORT audit events appended in
       one transaction, one upsert per partition (the store re-embeds through the cache), commit.
    Reported in memories/s, with per-stage seconds. (b-many) the engine's real batched write,
    ``memory.batch.add_many``: one embed, one neighbour query per (partition, type) for the whole batch,
    judge, scores, one audit transaction and one upsert per partition. (b-base) BASELINE: raw
    ``engine.store.put`` of the same batch (fresh ids, the same vectors): ``collection.upsert`` per partition.
    The target is checked on (b-many).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import numpy as np
from _common import (
    NOW,
    CallTimer,
    dir_mb,
    machine_info,
    print_table,
    rss_mb,
    say,
    summarize,
    temp_home,
    timed,
    write_results,
)
from _dataset import SentenceMaker, VectorPool, build_dataset, bulk_load

from memory import conflicts, trust, veracity
from memory.config import load_settings
from memory.engine import MemoryEngine
from memory.models import SEARCHABLE, MemoryRecord, MemoryType, Source
from memory.portability import restore_records
from memory.record_layout import partition_for

TARGET_PER_S = 200.0
STATUS_WHERE = {"status": {"$in": sorted(s.value for s in SEARCHABLE)}}
TYPES = (MemoryType.RESIDUAL, MemoryType.USER_QUESTION, MemoryType.LLM_RESPONSE)


def single_writes(engine: MemoryEngine, user_ids: list[str], maker: SentenceMaker, args: Any) -> dict:
    """(a) ``engine.add`` latency, overall and per type, then an instrumented split of one add."""
    rng = np.random.default_rng(21)
    for i in range(args.warmup):
        engine.add(maker.unique(TYPES[i % 3]), TYPES[i % 3], str(rng.choice(user_ids)), source=Source.SME, now=NOW)
    samples: dict[str, list[float]] = {"all": [], **{t.value: [] for t in TYPES}}
    actions: dict[str, int] = {}
    for i in range(args.writes):
        memory_type = TYPES[i % 3]
        text, user_id = maker.unique(memory_type), str(rng.choice(user_ids))
        seconds, result = timed(engine.add, text, memory_type, user_id, source=Source.SME, now=NOW)
        samples["all"].append(seconds)
        samples[memory_type.value].append(seconds)
        actions[result.action] = actions.get(result.action, 0) + 1
    timer = CallTimer()
    timer.wrap(engine.embedder, "embed", "embed (1st: ONNX; 2nd in store.put: cache hit)")
    timer.wrap(engine.store, "query", "conflict-candidate store.query")
    timer.wrap(engine.audit, "append_many", "audit append (uncommitted)")
    timer.wrap(engine.store, "put", "store.put (to_metadata + upsert)")
    timer.wrap(engine.store, "update_metadata", "store.update_metadata")
    timer.wrap(engine.audit, "commit", "audit commit")
    total = 0.0
    try:
        for i in range(args.profile_runs):
            memory_type = TYPES[i % 3]
            text, user_id = maker.unique(memory_type), str(rng.choice(user_ids))
            total += timed(engine.add, text, memory_type, user_id, source=Source.SME, now=NOW)[0]
    finally:
        timer.restore()
    parts = timer.per_call_ms(args.profile_runs)
    inside = sum(timer.seconds.values())  # the cache-hit re-embed inside store.put counts twice: microseconds
    parts["rest (records, veracity, judge, pydantic)"] = {
        "ms_per_run": round((total - inside) * 1e3 / args.profile_runs, 3),
        "calls_per_run": 0,
    }
    parts["TOTAL engine.add"] = {"ms_per_run": round(total * 1e3 / args.profile_runs, 3), "calls_per_run": 1}
    return {"stats": {k: summarize(v) for k, v in samples.items()}, "actions": actions, "breakdown": parts}


def new_batch(
    maker: SentenceMaker, user_ids: list[str], size: int, rng: np.random.Generator, one_user: bool
) -> list[tuple[str, MemoryType, str]]:
    """``size`` (text, type, user) items, a third of each type, on random users or all on one user."""
    out = []
    owner = str(rng.choice(user_ids))
    for i in range(size):
        memory_type = TYPES[i % 3]
        out.append((maker.unique(memory_type), memory_type, owner if one_user else str(rng.choice(user_ids))))
    return out


def fresh_record(engine: MemoryEngine, text: str, memory_type: MemoryType, user_id: str) -> MemoryRecord:
    """The record ``engine.add`` would build before its conflict checks."""
    return MemoryRecord(
        text=text,
        type=memory_type,
        user_id=user_id,
        source=Source.SME,
        created_at=NOW,
        updated_at=NOW,
        trust=trust.trust_init(engine.config.trust),
        veracity_at=NOW,
    )


def candidates_engine(engine: MemoryEngine, record: MemoryRecord, vector: list[float]) -> list[Any]:
    """The engine's own neighbour lookup for one item (its embedding is a cache hit after the batch embed)."""
    lookup = getattr(engine, "neighbours", None)
    if lookup is not None:
        return lookup(record.text, record.type, record.user_id)  # type: ignore[no-any-return]
    partition = partition_for(record.type, record.user_id)  # engines before commit b249c7e
    neighbours = engine.store.query(partition, vector, 20, STATUS_WHERE)
    return [(r, s) for r, s in neighbours if r.type is record.type and (r.shared or r.user_id == record.user_id)]


def batched_path(engine: MemoryEngine, items: list[tuple[str, MemoryType, str]]) -> dict[str, float]:
    """(b): embed, per-item candidates + judge + initial scores, restore_records. Seconds per stage."""
    stages: dict[str, float] = {}
    start = time.perf_counter()
    vectors = engine.embedder.embed([text for text, _, _ in items])
    stages["embed (batched ONNX)"] = time.perf_counter() - start
    start = time.perf_counter()
    records = [fresh_record(engine, text, memory_type, user_id) for text, memory_type, user_id in items]
    neighbour_lists = [candidates_engine(engine, r, v) for r, v in zip(records, vectors, strict=True)]
    for record, neighbours in zip(records, neighbour_lists, strict=True):
        pairs = [(r.veracity, sim) for r, sim in neighbours]
        record.veracity = veracity.initial_score(record.source.value, pairs, engine.config.veracity)
        record.status = engine.initial_status(record, False)
        flagged = conflicts.flag_candidates(neighbours, engine.config.conflicts)
        conflicts.judge_candidates(engine.judge, record.text, flagged)
    stages["candidates + judge + scores"] = time.perf_counter() - start
    timer = CallTimer()
    timer.wrap(engine.store, "get", "exists")
    timer.wrap(engine.audit, "append_many", "audit")
    timer.wrap(engine.audit, "commit", "audit")
    timer.wrap(engine.store, "put", "upsert")
    start = time.perf_counter()
    try:
        restore_records(engine, records, now=NOW)
    finally:
        timer.restore()
    write_s = time.perf_counter() - start
    stages["import: existence checks (store.get)"] = timer.seconds.get("exists", 0.0)
    stages["import: audit append + commit"] = timer.seconds.get("audit", 0.0)
    stages["import: store.put (upsert, cached re-embed)"] = timer.seconds.get("upsert", 0.0)
    stages["import: other"] = write_s - sum(timer.seconds.values())
    stages["total"] = sum(v for k, v in stages.items() if k != "total")
    return stages


def add_many_path(engine: MemoryEngine, items: list[tuple[str, MemoryType, str]]) -> dict[str, float]:
    """(b-many) the engine's real batched write, ``memory.batch.add_many``: embed, candidates, judge,
    scores, audit events and upserts, all included. Seconds."""
    from memory.batch import NewMemory, add_many
    from memory.models import Source

    batch = [NewMemory(text=t, type=m, user_id=u, source=Source.SME) for t, m, u in items]
    start = time.perf_counter()
    add_many(engine, batch, now=NOW)
    return {"total": time.perf_counter() - start}


def baseline_put(engine: MemoryEngine, items: list[tuple[str, MemoryType, str]]) -> float:
    """(b-base) raw store.put of the same texts and vectors under fresh ids; seconds."""
    vectors = engine.embedder.embed([text for text, _, _ in items])  # cache hits: already embedded
    records = [fresh_record(engine, text, memory_type, user_id) for text, memory_type, user_id in items]
    return timed(engine.store.put, records, vectors)[0]


LAYOUTS = {"mixed": False, "one_user": True}
PATHS = ("engine", "many", "base")


def batched(engine: MemoryEngine, user_ids: list[str], maker: SentenceMaker, args: Any) -> dict:
    """Rounds of per-item path, add_many and baseline batches, for both layouts, so noise hits all alike."""
    rng = np.random.default_rng(33)
    stages: dict[str, list[dict[str, float]]] = {f"{p}/{lay}": [] for p in ("engine", "many") for lay in LAYOUTS}
    base: dict[str, list[float]] = {lay: [] for lay in LAYOUTS}
    batched_path(engine, new_batch(maker, user_ids, 20, rng, False))  # warm-up
    add_many_path(engine, new_batch(maker, user_ids, 20, rng, False))
    for _ in range(args.batches):
        for layout, one_user in LAYOUTS.items():
            items = new_batch(maker, user_ids, args.batch, rng, one_user)
            stages[f"engine/{layout}"].append(batched_path(engine, items))
            base[layout].append(baseline_put(engine, items))
            items = new_batch(maker, user_ids, args.batch, rng, one_user)
            stages[f"many/{layout}"].append(add_many_path(engine, items))
    out: dict[str, Any] = {}
    for name, batches in stages.items():
        totals = [b["total"] for b in batches]
        out[name] = {
            "per_s_median": round(args.batch / float(np.median(totals)), 1),
            "per_s_worst": round(args.batch / max(totals), 1),
            "stage_s_per_batch_median": {k: round(float(np.median([b[k] for b in batches])), 4) for k in batches[0]},
        }
    for layout, seconds in base.items():
        out[f"base/{layout}"] = {
            "per_s_median": round(args.batch / float(np.median(seconds)), 1),
            "per_s_worst": round(args.batch / max(seconds), 1),
            "s_per_batch_median": round(float(np.median(seconds)), 4),
        }
    return out


def report(single: dict, batch: dict, args: Any) -> None:
    say(f"\n(a) single engine.add, {args.writes} writes (+{args.warmup} warm-up), random users:")
    rows = [[k, v["n"], v["median_ms"], v["p95_ms"], round(1000 / v["mean_ms"], 1)] for k, v in single["stats"].items()]
    print_table(["type", "n", "median ms", "p95 ms", "serial /s"], rows)
    say(f"  actions: {single['actions']}")
    say(f"  breakdown of one engine.add (instrumented, {args.profile_runs} writes):")
    print_table(
        ["part", "ms per add", "calls per add"],
        [[k, v["ms_per_run"], v["calls_per_run"]] for k, v in single["breakdown"].items()],
    )
    say(f"\n(b) batched writes, {args.batches} batches of {args.batch} per row (a third of each type):")
    names = {
        "engine": "(b) engine-equivalent batched path",
        "many": "(b-many) engine add_many (memory.batch)",
        "base": "(b-base) BASELINE raw store.put (upsert)",
    }
    rows = []
    for layout in LAYOUTS:
        base = batch[f"base/{layout}"]["per_s_median"]
        for path in PATHS:
            got = batch[f"{path}/{layout}"]
            rows.append(
                [f"{names[path]}, {layout}", got["per_s_median"], got["per_s_worst"], got["per_s_median"] / base]
            )
    print_table(["path, batch layout", "memories/s median", "worst batch /s", "x baseline"], rows)
    for layout in LAYOUTS:
        say(f"  seconds per batch by stage (median), layout {layout}:")
        engine_stages = batch[f"engine/{layout}"]["stage_s_per_batch_median"]
        print_table(["stage", "(b) s"], [[k, engine_stages[k]] for k in engine_stages])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer writes and batches (smoke run)")
    parser.add_argument("--writes", type=int, default=None, help="measured single writes (default 240)")
    parser.add_argument("--batch", type=int, default=100, help="memories per batch (default 100)")
    parser.add_argument("--batches", type=int, default=None, help="batches per path and layout (default 4)")
    parser.add_argument("--embed-threads", type=int, default=1, help="ONNX MiniLM threads (default 1, as shipped)")
    args = parser.parse_args(argv)
    args.writes = args.writes or (60 if args.quick else 240)
    args.batches = args.batches or (1 if args.quick else 4)
    args.warmup = 5 if args.quick else 15
    args.profile_runs = 15 if args.quick else 45
    started = time.perf_counter()
    machine = machine_info()
    say(f"bench_write: {machine['cores']} cores, {machine['cpu']}, load {machine['loadavg_at_start']}")
    users, per_user, residual = 100, 90, 1_000
    with temp_home("write") as home:
        env = {"MARK_HOME": str(home), "MARK_EMBEDDER": "onnx", "MARK_EMBED_THREADS": str(args.embed_threads)}
        engine = MemoryEngine.open(load_settings(env=env))
        try:
            maker = SentenceMaker(seed=5)
            pool = VectorPool(engine.embedder.inner.embed, maker, 600 if args.quick else 1_500)  # type: ignore[attr-defined]
            records, vectors, user_ids = build_dataset(pool, users, per_user, residual, seed=17)
            load_s = bulk_load(engine.store, records, vectors)
            say(f"store: {len(records):,} memories bulk-loaded in {load_s:.1f} s (synthetic vectors, no audit)")
            del records, vectors
            engine.store.cache.clear()  # start as a freshly opened store would: nothing cached
            single = single_writes(engine, user_ids, maker, args)
            batch = batched(engine, user_ids, maker, args)
            footprint = {"disk_mb": dir_mb(home), "audit_events": engine.audit.count(), **rss_mb()}
        finally:
            engine.close()
    report(single, batch, args)
    rates = {layout: batch[f"many/{layout}"]["per_s_median"] for layout in LAYOUTS}
    met = all(rate >= TARGET_PER_S for rate in rates.values())
    say(
        f"\nTARGET batched path >= {TARGET_PER_S:.0f} memories/s: {'MET' if met else 'MISSED'} "
        + "; ".join(
            f"{lay}: add_many {rates[lay]:.0f}/s, per-item engine path {batch[f'engine/{lay}']['per_s_median']:.0f}/s, "
            f"raw upsert {batch[f'base/{lay}']['per_s_median']:.0f}/s"
            for lay in LAYOUTS
        )
    )
    payload = {
        "benchmark": "write",
        "machine": machine,
        "params": {
            "writes": args.writes,
            "warmup": args.warmup,
            "batch": args.batch,
            "batches": args.batches,
            "embed_threads": args.embed_threads,
            "store": f"{users} users x {per_user} + {residual} residual, synthetic vectors",
            "quick": args.quick,
        },
        "load_s": round(load_s, 1),
        "footprint": footprint,
        "single": single,
        "batched": batch,
        "target": {"per_s": TARGET_PER_S, "engine_per_s": rates, "met": met},
        "wall_s": round(time.perf_counter() - started, 1),
    }
    say(f"results: {write_results('write', payload)}  (wall {payload['wall_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
