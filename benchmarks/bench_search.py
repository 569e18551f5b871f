"""Search latency of the MARK engine at 10k and 100k memories (MSS: 3 types x top-20 + MRS + query embedding).

Run:  nice -n 10 .venv/bin/python benchmarks/bench_search.py [--quick] [--queries N] [--sizes 10k,100k]

Data: bulk-loaded with ``engine.store.put`` (no audit events); the stored vectors are SYNTHETIC: real ONNX
MiniLM vectors of a pool of generated sentences, jittered per memory (see ``_common.VectorPool``). The
query path is real: ``engine.search`` embeds each (unique, uncached) query with the ONNX MiniLM.

Every 20th user holds a skewed mix (5 user_question + 85 llm_response memories); the others half and half.

Warm-up: one raw query on each of ``--active-users`` (default 100) user collections (the first query on
a collection since the process started loads its index; timed as row (f)), then one full search per
active user (its records are not in the record cache yet; timed as row (f2)).
Then, per query, on a random active user each time (steady state), interleaved so machine noise hits
every row alike:
(a) full ``engine.search(query, user, k=1)`` (whatever Chroma calls the engine makes); (a-nc) the same with
the record cache switched off (what a Chroma server store, or ``MARK_RECORD_CACHE=0``, does: Chroma hydrates
every candidate). The cache is emptied after the bulk load, so it fills only through the warm-up and the
measured searches themselves;
(b) BASELINE: a bare Chroma top-20 ``collection.query`` on the domain collection with a precomputed vector
and no ``where``; (b2) the same with a status/type ``where`` (what search sent before commit b249c7e);
(c) the query embedding alone; (d) a per-user ``store.query`` top-20 with that status/type ``where``,
(d2) without ``where``, (d3) with a selective composite-key ``where`` (``meta_skey``, see ``_common``).
(b2) and (d) are slow at 100k, so they run on every 5th query there (n shows it).
(g) full ``engine.search`` on the skewed users (a type with fewer than top_n rows in a full over-fetch
page sends the engine to its exact, filtered query). Then a where-clause anatomy on the per-user
collections and an instrumented pass that splits a full search into embedding, Chroma calls, decoding
and the rest.

Results go to ``benchmarks/results/search.json`` (both sizes) or ``search_<sizes>.json`` with ``--sizes``.
"""

from __future__ import annotations

import argparse
import gc
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
from _dataset import SentenceMaker, VectorPool, build_dataset, bulk_load, search_key, skewed_users

import memory.store as store_module
from memory.config import load_settings
from memory.embedder import build_embedder
from memory.engine import MemoryEngine
from memory.models import SEARCHABLE, SHARED_USER, MemoryType, Status
from memory.record_cache import RecordCache

TARGET_P95_MS = 25.0
SKEW_EVERY = 20  # every 20th user holds 5 user_question + 85 llm_response memories
SIZES = {"10k": (100, 90, 1_000), "100k": (1_000, 90, 10_000)}
STATUS_WHERE = {"status": {"$in": sorted(s.value for s in SEARCHABLE)}}
INCLUDE = ["documents", "metadatas", "distances"]
DECODE = "  (inside store.query: from_metadata decode)"
GET_COLLECTION = "  (inside store.query: get_collection)"
REST = "rest (MRS ranking, SearchHit models, glue)"


def engine_where(memory_type: MemoryType) -> dict[str, Any]:
    """The ``where`` ``memory.search`` sent for one type before commit b249c7e (now its exact fallback)."""
    return {"$and": [STATUS_WHERE, {"type": memory_type.value}]}


ROW_KEYS = ("a", "a_nc", "b", "b_ids", "b2", "c", "d", "d2", "d3", "f", "f2", "g")
ANATOMY = {
    "status $in only": STATUS_WHERE,
    "type == only": {"type": MemoryType.USER_QUESTION.value},
    "status AND type (old engine)": engine_where(MemoryType.USER_QUESTION),
    "user_id == (selective, no-op)": None,
    "meta_skey == (selective composite)": None,
}


def measure_size(engine: MemoryEngine, user_ids: list[str], maker: SentenceMaker, args: Any, slow_every: int) -> dict:
    """The interleaved measurement loop for one loaded store."""
    rng = np.random.default_rng(7)
    store = engine.store
    inner = engine.embedder.inner  # type: ignore[attr-defined]  # the uncached OnnxMiniLM
    domain = store._collection(SHARED_USER, create=False)
    types = list(MemoryType)
    rows: dict[str, list[float]] = {k: [] for k in ROW_KEYS}
    probe = np.asarray(inner.embed([maker.unique(MemoryType.USER_QUESTION)]), dtype=np.float32)
    active = [str(u) for u in rng.choice(user_ids, size=min(args.active_users, len(user_ids)), replace=False)]
    for user_id in active:  # the first query on a collection since process start loads its index
        collection = store._collection(user_id, create=False)
        rows["f"].append(timed(collection.query, query_embeddings=probe, n_results=20, include=["distances"])[0])
    for user_id in active:  # the first full search of each user since start: its records are not cached yet
        rows["f2"].append(timed(engine.search, maker.unique(types[int(rng.integers(3))]), user_id, k=1, now=NOW)[0])
    hits_before = engine.embedder.hits  # type: ignore[attr-defined]
    cache, no_cache = store.cache, RecordCache(0)
    cache_before = (cache.hits, cache.misses)
    residual_where, personal = engine_where(MemoryType.RESIDUAL), engine_where(MemoryType.USER_QUESTION)
    for i in range(args.queries):
        user_id = str(rng.choice(active))
        text = maker.unique(types[int(rng.integers(3))])
        rows["a"].append(timed(engine.search, text, user_id, k=1, now=NOW)[0])
        store.cache = no_cache  # the same search as a server store (or MARK_RECORD_CACHE=0) runs it
        try:
            rows["a_nc"].append(
                timed(engine.search, maker.unique(types[int(rng.integers(3))]), user_id, k=1, now=NOW)[0]
            )
        finally:
            store.cache = cache
        seconds, vectors = timed(inner.embed, [text])
        rows["c"].append(seconds)
        vec = np.asarray(vectors, dtype=np.float32)
        rows["b"].append(timed(domain.query, query_embeddings=vec, n_results=20, include=INCLUDE)[0])
        rows["b_ids"].append(timed(domain.query, query_embeddings=vec, n_results=20, include=["distances"])[0])
        if i % slow_every == 0:  # the slow filtered queries on a subsample, to keep the run short
            rows["b2"].append(
                timed(domain.query, query_embeddings=vec, n_results=20, where=residual_where, include=INCLUDE)[0]
            )
            rows["d"].append(timed(store.query, user_id, vectors[0], 20, personal)[0])
        rows["d2"].append(timed(store.query, user_id, vectors[0], 20, None)[0])
        skey = {"meta_skey": search_key(user_id, MemoryType.USER_QUESTION, Status.ACTIVE)}
        rows["d3"].append(timed(store.query, user_id, vectors[0], 20, skey)[0])
    cache_hits = engine.embedder.hits - hits_before  # type: ignore[attr-defined]
    record_hits, record_misses = cache.hits - cache_before[0], cache.misses - cache_before[1]
    skewed = skewed_users(user_ids, SKEW_EVERY)
    for user_id in skewed:  # warm their collections, untimed
        store._collection(user_id, create=False).query(query_embeddings=probe, n_results=20, include=["distances"])
    for _ in range(args.skew_queries):
        user_id = str(rng.choice(skewed))
        text = maker.unique(types[int(rng.integers(3))])
        rows["g"].append(timed(engine.search, text, user_id, k=1, now=NOW)[0])
    return {
        "stats": {k: summarize(v) for k, v in rows.items()},
        "query_embedding_cache_hits": cache_hits,
        "record_cache": {"hits": record_hits, "misses": record_misses, "held": len(cache), "capacity": cache.capacity},
        "active_users": len(active),
        "skewed_users": len(skewed),
        "where_anatomy": where_anatomy(store, inner, active, maker, rng, args.anatomy_runs),
        "breakdown": breakdown(engine, active, maker, rng, args.profile_runs),
    }


def where_anatomy(
    store: Any, inner: Any, user_ids: list[str], maker: SentenceMaker, rng: np.random.Generator, runs: int
) -> dict[str, dict[str, float]]:
    """Raw per-user collection top-20 (distances only) under different ``where`` clauses."""
    samples: dict[str, list[float]] = {"no where": [], **{k: [] for k in ANATOMY}}
    for _ in range(runs):
        user_id = str(rng.choice(user_ids))
        collection = store._collection(user_id, create=False)
        vec = np.asarray(inner.embed([maker.unique(MemoryType.USER_QUESTION)]), dtype=np.float32)
        collection.query(query_embeddings=vec, n_results=20, include=["distances"])  # untimed: warm
        for name in samples:
            where = ANATOMY.get(name)
            if name.startswith("user_id"):
                where = {"user_id": user_id}
            elif name.startswith("meta_skey"):
                where = {"meta_skey": search_key(user_id, MemoryType.USER_QUESTION, Status.ACTIVE)}
            samples[name].append(
                timed(collection.query, query_embeddings=vec, n_results=20, where=where, include=["distances"])[0]
            )
    return {k: summarize(v) for k, v in samples.items()}


def breakdown(
    engine: MemoryEngine, user_ids: list[str], maker: SentenceMaker, rng: np.random.Generator, runs: int
) -> dict:
    """Instrumented full searches: where the time of one ``engine.search`` goes."""
    timer = CallTimer()
    timer.wrap(engine.embedder, "embed", "query embedding")
    timer.wrap(
        engine.store, "query", lambda p, *a, **k: "store.query domain" if p == SHARED_USER else "store.query user"
    )
    timer.wrap(store_module, "from_metadata", DECODE)
    timer.wrap(engine.store._client, "get_collection", GET_COLLECTION)
    total = 0.0
    try:
        for _ in range(runs):
            user_id = str(rng.choice(user_ids))
            text = maker.unique(MemoryType.USER_QUESTION)
            total += timed(engine.search, text, user_id, k=1, now=NOW)[0]
    finally:
        timer.restore()
    raw = timer.per_call_ms(runs)
    inside = sum(timer.seconds.get(k, 0.0) for k in ("query embedding", "store.query domain", "store.query user"))
    order = ["query embedding", "store.query user", "store.query domain", DECODE, GET_COLLECTION]
    parts = {k: raw.get(k, {"ms_per_run": 0.0, "calls_per_run": 0}) for k in order}
    parts[REST] = {
        "ms_per_run": round((total - inside) * 1e3 / runs, 3),
        "calls_per_run": 0,
    }
    parts["TOTAL engine.search"] = {"ms_per_run": round(total * 1e3 / runs, 3), "calls_per_run": 1}
    return parts


LABELS = [
    ("a", "(a) engine.search full, k=1"),
    ("a_nc", "(a-nc) same, record cache off"),
    ("b", "(b) BASELINE bare domain top-20, no where"),
    ("b_ids", "    same, include distances only"),
    ("b2", "(b2) domain top-20 + status/type where"),
    ("c", "(c) query embedding alone (ONNX)"),
    ("d", "(d) user store.query + status/type where"),
    ("d2", "(d2) user store.query top-20, no where"),
    ("d3", "(d3) user store.query + selective meta_skey"),
    ("f", "(f) 1st query on a user collection (cold)"),
    ("f2", "(f2) 1st engine.search of a user (cold cache)"),
    ("g", "(g) engine.search, user with 5 user_question"),
]


def report(label: str, result: dict) -> None:
    stats = result["stats"]
    base = stats["b"]
    rows = []
    for key, name in LABELS:
        s = stats[key]
        if not s.get("n"):
            continue
        rows.append(
            [
                name,
                s["n"],
                s["median_ms"],
                s["p95_ms"],
                s["median_ms"] / base["median_ms"],
                s["p95_ms"] / base["p95_ms"],
            ]
        )
    print_table(["measurement", "n", "median ms", "p95 ms", "x base med", "x base p95"], rows)
    ratio = stats["a"]["median_ms"] / base["median_ms"]
    say(f"  full/bare ratio (median): {ratio:.1f}x   p95: {stats['a']['p95_ms'] / base['p95_ms']:.1f}x")
    say(f"  query-embedding cache hits during the run: {result['query_embedding_cache_hits']} (expected 0)")
    rc = result["record_cache"]
    looked_up = max(1, rc["hits"] + rc["misses"])
    say(
        f"  record cache during the (a)-(d3) loop: {rc['hits']:,} hits, {rc['misses']:,} misses "
        f"({rc['hits'] / looked_up:.1%} hits); {rc['held']:,} of {rc['capacity']:,} records held at the end"
    )
    say(f"  where-clause anatomy, raw per-user top-20 (distances only), {label}:")
    print_table(
        ["where on a 90-row user collection", "n", "median ms", "p95 ms"],
        [[k, v["n"], v["median_ms"], v["p95_ms"]] for k, v in result["where_anatomy"].items()],
    )
    say(f"  breakdown of one engine.search ({label}, instrumented):")
    print_table(
        ["part", "ms per search", "calls per search"],
        [[k, v["ms_per_run"], v["calls_per_run"]] for k, v in result["breakdown"].items()],
    )


def run_size(label: str, pool: VectorPool, embedder: Any, maker: SentenceMaker, args: Any) -> dict:
    users, per_user, residual = SIZES[label]
    total = users * per_user + residual
    say(f"\n== {label}: {users:,} users x {per_user} personal + {residual:,} residual = {total:,} memories ==")
    with temp_home(f"search-{label}") as home:
        settings = load_settings(env={"MARK_HOME": str(home), "MARK_EMBEDDER": "onnx"})
        engine = MemoryEngine.open(settings, embedder=embedder)
        try:
            records, vectors, user_ids = build_dataset(pool, users, per_user, residual, seed=11, skew_every=SKEW_EVERY)
            say(f"  bulk loading {len(records):,} records (synthetic vectors, store.put, no audit events)...")
            load_s = bulk_load(engine.store, records, vectors)
            del records, vectors
            engine.store.cache.clear()  # start as a freshly opened store would: nothing cached
            gc.collect()
            footprint = {"disk_mb": dir_mb(home), **rss_mb()}
            say(
                f"  load {load_s:.1f} s ({total / load_s:,.0f} memories/s); disk {footprint['disk_mb']} MiB; "
                f"process RSS {footprint['rss_mb']} MiB (peak {footprint['peak_rss_mb']})"
            )
            result = measure_size(engine, user_ids, maker, args, slow_every=1 if total <= 20_000 else 5)
        finally:
            client = engine.store._client
            engine.close()
            if hasattr(client, "clear_system_cache"):
                client.clear_system_cache()
    result.update({"memories": total, "users": users, "per_user": per_user, "residual": residual})
    result.update({"load_s": round(load_s, 1), "load_per_s": round(total / load_s), "footprint": footprint})
    report(label, result)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10k only, fewer queries (smoke run)")
    parser.add_argument("--queries", type=int, default=None, help="measured queries per size (default 200)")
    parser.add_argument("--sizes", default=None, help="comma list of 10k,100k (default both)")
    parser.add_argument(
        "--active-users", type=int, default=100, help="users whose collections are warmed and queried (default 100)"
    )
    args = parser.parse_args(argv)
    args.queries = args.queries or (60 if args.quick else 200)
    args.profile_runs = 10 if args.quick else 20
    args.anatomy_runs = 10 if args.quick else 20
    args.skew_queries = 10 if args.quick else 40
    sizes = (args.sizes or ("10k" if args.quick else "10k,100k")).split(",")
    started = time.perf_counter()
    machine = machine_info()
    say(f"bench_search: {machine['cores']} cores, {machine['cpu']}, load {machine['loadavg_at_start']}")
    if "100k" in sizes:
        say("note: the 100k store takes 4-8 min to bulk-load on a busy 2-core machine (about 200-500 rows/s)")
    with temp_home("search-embedder") as home:
        settings = load_settings(env={"MARK_HOME": str(home), "MARK_EMBEDDER": "onnx"})
        load_embedder_s, embedder = timed(build_embedder, settings.embedder)
    maker = SentenceMaker(seed=3)
    pool_size = 600 if args.quick else 3_000
    pool_s, pool = timed(VectorPool, embedder.inner.embed, maker, pool_size)
    say(
        f"ONNX MiniLM loaded in {load_embedder_s:.2f} s; "
        f"vector pool of {pool_size:,} sentences embedded in {pool_s:.1f} s"
    )
    results = {label: run_size(label, pool, embedder, maker, args) for label in sizes}
    verdicts = {}
    for label, result in results.items():
        p95 = result["stats"]["a"]["p95_ms"]
        verdicts[label] = {"full_p95_ms": p95, "target_p95_ms": TARGET_P95_MS, "met": p95 <= TARGET_P95_MS}
        if label == "100k":
            say(
                f"\nTARGET full search p95 <= {TARGET_P95_MS} ms at 100k: "
                f"{'MET' if p95 <= TARGET_P95_MS else 'MISSED'} "
                f"(p95 {p95:.1f} ms)"
            )
    payload = {
        "benchmark": "search",
        "machine": machine,
        "params": {
            "queries": args.queries,
            "anatomy_runs": args.anatomy_runs,
            "profile_runs": args.profile_runs,
            "quick": args.quick,
            "pool_size": pool_size,
            "vectors": "synthetic: ONNX pool vectors + gaussian jitter (cos ~0.9)",
            "query_path": "ONNX MiniLM int8 via CachedEmbedder, every query text unique",
        },
        "embedder_load_s": round(load_embedder_s, 2),
        "sizes": results,
        "verdicts": verdicts,
        "wall_s": round(time.perf_counter() - started, 1),
    }
    name = "search" if sizes == ["10k", "100k"] else "search_" + "-".join(sizes)
    say(f"results: {write_results(name, payload)}  (wall {payload['wall_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
