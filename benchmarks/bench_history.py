"""Episodic history on LongMemEval knowledge-update: ingest speed, evidence recall, search latency, pruning.

Run:  nice -n 10 .venv/bin/python benchmarks/bench_history.py [--part ingest|recall|latency|pruning|all]
      [--limit N] [--qa N] [--baseline-every K] [--fill N] [--rounds R] [--embed-threads T]

Data: ``longmemeval/longmemeval_s_knowledge_update.json`` from ``$MARK_SHARED_DATA`` or ``../shared/data``
(``--data``); skipped with a message when absent. 78 questions, each with a ~48-session haystack (~490
turns); ``has_answer`` marks the evidence turns. Split: the questions sorted by the sha256 (hex) of
``question_id``, ascending; the first 39 are ``dev``, the other 39 ``test``. Parameters may be tuned on
dev only; every number is printed for both, and **test is the reported split**. ``--limit N`` keeps
the first N questions of each split. The 6 ``_abs`` items carry no ``has_answer`` turn in this file:
they are searched and timed, but add no evidence to recall (the "with evidence" column counts the rest).

Every haystack is read with ``read_history`` (one record file per question) and ingested as its own
user (user id = question_id) into ONE fresh store through ``engine.episodes.ingest`` (the production
path: events embedded with the 128-word-piece view of the MiniLM, int8 arithmetic unless
``MARK_HISTORY_EMBED_INT8=false``; fusion-ART episodes, SQLite + FTS5 rows,
one Chroma collection of vectors per user), ingested at a fixed ``now``; no search touches an event.

ingest:  turns/s over all haystacks (sum of turns / sum of ``ingest`` seconds) and the median of the
    per-haystack rates; the embedding share is the time inside the events' embedder
    (``engine.episodes.embedder.embed``, instrumented during the same ingest, i.e. embed alone on the
    same texts). BASELINE, same run, every K-th haystack (``--baseline-every``, default 1 = all): what
    a naive Chroma user does, in a second fresh store: the default 256-word-piece MiniLM
    (``engine.embedder.inner``, uncached) on the turn texts, then ``collection.upsert(ids, embeddings,
    documents)`` in batches of 512 into one plain collection per haystack made through the project's
    store client. Ratio = ingest rate / baseline rate on the same haystacks. Then the same ingest again
    (idempotent: must add 0) and its time.
recall:  per question, ``engine.episodes.search(user, question, now=question_date, k=10, touch=False)``;
    a hit is evidence when its (session_id, turn) is a ``has_answer`` turn. Micro recall@5/@10 = evidence
    turns found / evidence turns, over the split; "all found" = share of questions (with evidence) whose
    every evidence turn is in the top 10. Rows: all parts; vector only; lexical only; vector+lexical;
    all minus time; all minus episodes.
latency: per question, interleaved, ``--rounds`` times after one untimed warm-up search each: the full
    search (all parts, k=10), the query embedding alone (the events' embedder, uncached), and the
    BASELINE bare ``store.vector_search(user, precomputed vector, 10)``; on the store of part 1, then
    again after synthetic users bring it to ``--fill`` events (default 100,000): copies of the real
    haystacks, vectors read with ``store.vectors`` and jittered (cosine ~0.995), written by
    ``HistoryStore.add`` (no embedding, no episodes).
pruning: per question, the user's active events (copies) and budgets 100/50/25/10 % of them under
    ``memory.eviction.to_evict``: none; lru (nothing was ever accessed, so LRU order is ingestion /
    history order: the oldest go first); seed 004's relevance with aggregate "max" (the seed) and
    "mean", no prior; and ``relevance``, mark's default: the settings' aggregate (mean) plus the
    salience prior (``MARK_HISTORY_RELEVANCE_USER_BONUS`` 1.0, ``..._DISCLOSURE`` 0.2, chosen on the dev
    split by the share of evidence kept at 25 %). Queries = the stored vectors of the user's last
    ``--window`` (20) user turns, as ``history_retention`` does.
    The kept events are written, with their stored vectors and the user's episode state, as a new user
    of a fresh store, which is then searched exactly as in recall (one untimed warm-up, one timed
    search): the production fusion over the kept set (BM25 statistics are the whole FTS table's, as
    in production). Reported: recall, share of evidence kept, kept events, kept text bytes, search
    latency; the SQLite+Chroma folder size with every user at 100 %; a plot of test recall@10 against
    the budget (``results/pruning.png``). Targets (test), judged on ``relevance`` and printed for
    relevance-max too: no pruning recall@10 >= 0.90; at 25 % it keeps >= 90 % of it and beats LRU.
qa (``--qa N``, default 0: no model): the first N non-``_abs`` test questions answered by
    ``agents.providers.build_client(load_settings())`` (``MARK_MODEL_PATH`` names a GGUF) from the top-10
    events (quoted, oldest first, dated; the prompt says the newest statement of a value wins); correct
    when the normalised gold answer appears, as whole words, in the normalised reply.

Results: ``benchmarks/results/history.json`` (full run), else ``history_<parts>[_limitN].json``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import _history_data as hd
from _common import (
    NOW,
    RESULTS_DIR,
    CallTimer,
    dir_mb,
    machine_info,
    print_table,
    say,
    summarize,
    temp_home,
    timed,
    write_results,
)
from _history_data import SPLITS, Question

from memory.config import load_settings
from memory.engine import MemoryEngine
from memory.episodic import EventHit, SearchParts
from memory.ingest import ParsedHistory

PARTS = ("ingest", "recall", "latency", "pruning")
CONFIGS = {
    "all parts": SearchParts(),
    "vector only": SearchParts(lexical=False, time=False, episodes=False),
    "lexical only": SearchParts(vector=False, time=False, episodes=False),
    "vector+lexical": SearchParts(time=False, episodes=False),
    "all minus time": SearchParts(time=False),
    "all minus episodes": SearchParts(episodes=False),
}
ALL = CONFIGS["all parts"]
Head = tuple[str, ...]
Row = dict[str, Any]
INGEST_HEAD: Head = ("split", "haystacks", "turns", "ingest/s", "median/s", "embed share", "naive n")
INGEST_HEAD += ("naive/s", "naive embed", "x naive", "rerun added", "rerun s")
RECALL_HEAD: Head = ("parts", "split", "questions", "with evidence", "evidence", "R@5", "R@10")
RECALL_HEAD += ("all found@10",)
LATENCY_HEAD: Head = ("store", "split", "n", "full med ms", "full p95", "embed med", "embed share", "bare med")
LATENCY_HEAD += ("bare p95", "x bare med", "x bare p95")
PRUNING_HEAD: Head = ("policy", "budget", "split", "R@5", "R@10", "all found@10", "evidence kept", "events")
PRUNING_HEAD += ("text KiB", "search med ms", "p95 ms")


def search(engine: MemoryEngine, q: Question, parts: SearchParts = ALL, k: int = 10) -> list[EventHit]:
    return engine.episodes.search(q.qid, q.question, now=q.asked, k=k, parts=parts, touch=False)


# -- ingest ------------------------------------------------------------------------------------
def ingest_all(engine: MemoryEngine, questions: Sequence[Question], histories: dict[str, ParsedHistory]) -> Row:
    """Every haystack as its own user through ``engine.episodes.ingest``, the events' embedder instrumented."""
    history, timer = engine.episodes, CallTimer()
    timer.wrap(history.embedder, "embed", "embed")
    rows: dict[str, Row] = {}
    try:
        for n, q in enumerate(questions, start=1):
            before = timer.seconds.get("embed", 0.0)
            seconds, report = timed(history.ingest, q.qid, histories[q.qid], NOW)
            embed_s = timer.seconds.get("embed", 0.0) - before
            rows[q.qid] = {"split": q.split, "turns": report.turns, "added": report.added, "seconds": seconds}
            rows[q.qid].update({"embed_s": embed_s, "episodes": report.episodes})
            if n % 10 == 0 or n == len(questions):
                say(f"  ingested {n}/{len(questions)} haystacks ({hd.totals(rows, None)['turns_per_s']} turns/s)")
    finally:
        timer.restore()
    return rows


def part_ingest(engine: MemoryEngine, questions: Sequence[Question], histories: Row, rows: Row, args: Any) -> Row:
    say(f"  naive baseline on every {args.baseline_every}. haystack (256-piece MiniLM + plain upsert)...")
    naive = hd.naive_baseline(engine, questions, histories, args)
    say("  ingesting every haystack again (must add 0)...")
    again: dict[str, Row] = {q.qid: {"split": q.split} for q in questions}
    for q in questions:
        seconds, report = timed(engine.episodes.ingest, q.qid, histories[q.qid], NOW)
        again[q.qid].update({"seconds": seconds, "added": report.added})
    same = {k: v for k, v in rows.items() if k in naive}
    table: list[list[Any]] = []
    out: Row = {"per_haystack": rows, "naive_per_haystack": naive, "rerun_per_haystack": again}
    for split in (*SPLITS, None):
        ing, ing_same, base = hd.totals(rows, split), hd.totals(same, split), hd.totals(naive, split)
        mine = [r for r in again.values() if split is None or r["split"] == split]
        rerun = {"added": sum(r["added"] for r in mine), "seconds": round(sum(r["seconds"] for r in mine), 2)}
        ratio = round(ing_same["turns_per_s"] / base["turns_per_s"], 2) if base["turns_per_s"] else 0.0
        out[split or "all"] = {"ingest": ing, "ingest_on_naive_haystacks": ing_same, "naive": base, "ratio": ratio}
        out[split or "all"]["rerun"] = rerun
        table.append([split or "all", ing["haystacks"], ing["turns"], ing["turns_per_s"], ing["median_haystack_per_s"]])
        table[-1] += [ing["embed_share"], base["haystacks"], base["turns_per_s"], base["embed_share"], ratio]
        table[-1] += [rerun["added"], rerun["seconds"]]
    print_table(INGEST_HEAD, table)
    say("  x naive = ingest turns/s / naive turns/s on the same haystacks")
    return out


# -- recall ------------------------------------------------------------------------------------
def evidence_detail(engine: MemoryEngine, q: Question) -> Row:
    """Where each evidence turn ranks in a deeper (k=50) search with all parts, and what found it."""
    hits = search(engine, q, ALL, k=50)
    where = {(h.event.session_id, h.event.turn): (rank, h.found_by) for rank, h in enumerate(hits, start=1)}
    found: list[tuple[int | None, list[str]]] = [where.get(key, (None, [])) for key in sorted(q.evidence)]
    return {"split": q.split, "evidence": len(q.evidence), "ranks_k50": [r for r, _ in found], "found_by": found}


def part_recall(engine: MemoryEngine, questions: Sequence[Question]) -> Row:
    out: Row = {}
    table: list[list[Any]] = []
    for name, parts in CONFIGS.items():
        out[name] = hd.recall_by_split(questions, {q.qid: hd.ranked_keys(search(engine, q, parts)) for q in questions})
        for split in SPLITS:
            r = out[name][split]
            table.append([name, split, r["questions"], r["with_evidence"], r["evidence_turns"]])
            table[-1] += [r["recall@5"], r["recall@10"], r["all_found@10"]]
    print_table(RECALL_HEAD, table)
    out["per_question_all_parts"] = {q.qid: evidence_detail(engine, q) for q in questions}
    return out


# -- latency -----------------------------------------------------------------------------------
def measure_latency(engine: MemoryEngine, questions: Sequence[Question], rounds: int) -> Row:
    """Interleaved per question: full search, query embedding alone, bare vector query (precomputed vector)."""
    history = engine.episodes
    vectors = {q.qid: history.embedder.embed([q.question])[0] for q in questions}
    samples: dict[str, dict[str, list[float]]] = {s: {"full": [], "embed": [], "bare": []} for s in SPLITS}
    for q in questions:  # untimed: the first query on a collection loads it
        search(engine, q)
    for _ in range(rounds):
        for q in questions:
            row = samples[q.split]
            row["full"].append(timed(search, engine, q)[0])
            row["embed"].append(timed(history.embedder.embed, [q.question])[0])
            row["bare"].append(timed(history.store.vector_search, q.qid, vectors[q.qid], 10)[0])
    out = {}
    for split, row in samples.items():
        share = sum(row["embed"]) / sum(row["full"]) if row["full"] else 0.0
        out[split] = {**{k: summarize(v) for k, v in row.items()}, "embed_share": round(share, 3)}
    return out


def latency_rows(label: str, events: int, result: Row) -> list[list[Any]]:
    rows = []
    for split in SPLITS:
        full, emb, bare = result[split]["full"], result[split]["embed"], result[split]["bare"]
        if full.get("n"):
            rows.append([f"{label} ({events:,} events)", split, full["n"], full["median_ms"], full["p95_ms"]])
            rows[-1] += [emb["median_ms"], result[split]["embed_share"], bare["median_ms"], bare["p95_ms"]]
            rows[-1] += [full["median_ms"] / bare["median_ms"], full["p95_ms"] / bare["p95_ms"]]
    return rows


def part_latency(engine: MemoryEngine, questions: Sequence[Question], args: Any) -> Row:
    store = engine.episodes.store
    before_events = store.count()
    before = measure_latency(engine, questions, args.rounds)
    sources = [
        (events, hd.user_vectors(engine.episodes, q.qid, events)) for q in questions for events in [store.events(q.qid)]
    ]
    say(f"  filling the store to {args.fill:,} events with synthetic users (stored vectors, jittered)...")
    fill = hd.fill_synthetic(engine.episodes, sources, args.fill)
    say(f"  wrote {fill['events_written']:,} events, {fill['users']} users, in {fill['seconds']} s ({fill['per_s']}/s)")
    after = measure_latency(engine, questions, args.rounds)
    rows = latency_rows("part 1 store", before_events, before) + latency_rows("filled", fill["events_now"], after)
    print_table(LATENCY_HEAD, rows)
    return {"before": {"events": before_events, **before}, "fill": fill, "after": after}


# -- pruning -----------------------------------------------------------------------------------
def prune_pass(src: MemoryEngine, dst: MemoryEngine, questions: Sequence[Question], args: Any, full: bool) -> Row:
    """Write each question's kept events as a new user of ``dst`` and search it (``full``: the 100 % copies)."""
    rows: dict[str, Row] = {}
    for q in questions:
        events = src.episodes.store.events(q.qid)
        vectors = hd.user_vectors(src.episodes, q.qid, events)
        by_id = {e.id: v for e, v in zip(events, vectors.tolist(), strict=True)}
        for name, pct, evicted in hd.variants(events, by_id, args.window, src.episodes.config):
            if (pct == 100) != full:
                continue
            keep = [i for i, e in enumerate(events) if e.id not in evicted]
            kept, user = [events[i] for i in keep], f"{q.qid}|{name}|{pct}"
            hd.clone_user(src.episodes, dst.episodes, q.qid, user, kept, vectors[keep])
            probe = Question(**{**q.__dict__, "qid": user})
            search(dst, probe)  # untimed: the first query on the new collection loads it
            seconds, hits = timed(search, dst, probe)
            kept_keys = {(e.session_id, e.turn) for e in kept}
            row = {"qid": q.qid, "split": q.split, "policy": name, "budget": pct, "keys": hd.ranked_keys(hits)}
            row.update({"seconds": seconds, "kept": len(kept), "bytes": sum(len(e.text.encode()) for e in kept)})
            rows[user] = {**row, "evidence_kept": len(q.evidence & kept_keys)}
    return rows


def part_pruning(engine: MemoryEngine, questions: Sequence[Question], args: Any, tag: str) -> Row:
    with temp_home("history-pruning") as home:
        dst = hd.open_engine(home, args, embedder=engine.embedder)
        try:
            rows = prune_pass(engine, dst, questions, args, full=True)
            full_mb, full_events = dir_mb(home), dst.episodes.store.count()
            rows.update(prune_pass(engine, dst, questions, args, full=False))
        finally:
            hd.close_engine(dst)
    summary = hd.summarize_pruning(questions, rows)
    table = []
    for key, r in summary.items():
        name, pct, split = key.split("|")
        lat = r["latency"]
        table.append([name, f"{pct}%", split, r["recall@5"], r["recall@10"], r["all_found@10"], r["evidence_kept"]])
        table[-1] += [r["kept_events"], r["kept_kib"], lat.get("median_ms", 0.0), lat.get("p95_ms", 0.0)]
    print_table(PRUNING_HEAD, table)
    say(f"  folder (SQLite + Chroma) with every user at 100 %: {full_mb} MiB for {full_events:,} events")
    curves = {"none (keeps 100 %)": [(p, summary["none|100|test"]["recall@10"]) for p in hd.BUDGETS]}
    curves.update({name: [(p, summary[f"{name}|{p}|test"]["recall@10"]) for p in hd.BUDGETS] for name in hd.POLICIES})
    title = f"LongMemEval knowledge-update, test split ({sum(q.split == 'test' for q in questions)} questions)"
    say(f"  plot: {hd.plot_pruning(curves, title, RESULTS_DIR / f'pruning{tag}.png')}")
    return {
        "summary": summary,
        "disk_mb_at_100": full_mb,
        "events_at_100": full_events,
        "verdicts": hd.verdicts(summary),
    }


# -- qa ----------------------------------------------------------------------------------------
def part_qa(engine: MemoryEngine, questions: Sequence[Question], n: int) -> Row:
    import asyncio

    from autogen_core.models import SystemMessage, UserMessage

    from agents.providers import build_client, release_local_models

    chosen = [q for q in questions if q.split == "test" and not q.abstention][:n]
    load_s, client = timed(build_client, load_settings())
    rows: list[Row] = []
    try:
        for q in chosen:
            prompt = hd.qa_prompt(q, search(engine, q), 800)
            messages = [SystemMessage(content=hd.QA_SYSTEM), UserMessage(content=prompt, source="user")]
            seconds, result = timed(asyncio.run, client.create(messages))
            reply = result.content if isinstance(result.content, str) else str(result.content)
            correct = f" {hd.normalise(q.answer)} " in f" {hd.normalise(reply)} "
            rows.append({"qid": q.qid, "gold": q.answer, "reply": reply, "correct": correct, "seconds": seconds})
    finally:
        release_local_models()
    right = sum(r["correct"] for r in rows)
    accuracy = right / len(rows) if rows else 0.0
    median_s = summarize([r["seconds"] for r in rows]).get("median_ms", 0.0) / 1e3
    say(f"  qa: {right}/{len(rows)} test answers hold the gold answer ({accuracy:.1%}); model load {load_s:.1f} s,")
    say(f"  answer median {median_s:.1f} s")
    return {"accuracy": round(accuracy, 4), "model_load_s": round(load_s, 1), "answers": rows}


# -- main --------------------------------------------------------------------------------------
def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--part", choices=[*PARTS, "all"], default="all", help="what to measure (default all)")
    parser.add_argument("--limit", type=int, default=None, help="first N questions of each split (default all)")
    parser.add_argument("--split", choices=["dev", "test", "both"], default="both", help="tune on dev, report test")
    parser.add_argument("--qa", type=int, default=0, help="answer N test questions with the local model (default 0)")
    parser.add_argument("--data", default=None, help="the LongMemEval s knowledge-update file")
    parser.add_argument("--baseline-every", type=int, default=1, help="naive baseline on every K-th haystack")
    parser.add_argument("--fill", type=int, default=100_000, help="events in the store for the 2nd latency pass")
    parser.add_argument("--rounds", type=int, default=3, help="timed searches per question and store (default 3)")
    parser.add_argument("--window", type=int, default=20, help="recent user turns relevance is measured on")
    parser.add_argument("--embed-threads", type=int, default=1, help="ONNX MiniLM threads (default 1, as shipped)")
    return parser.parse_args(argv)


def run_parts(engine: MemoryEngine, questions: list[Question], args: Any, parts: Sequence[str], tag: str) -> Row:
    home = engine.audit.path.parent
    histories, parse_s = hd.parse_histories(questions, home / "records")
    say(f"read {len(questions)} haystacks with read_history in {parse_s:.1f} s; ingesting (production path)...")
    rows = ingest_all(engine, questions, histories)
    out: Row = {"parse_s": round(parse_s, 2)}
    out["store_after_ingest"] = {"events": engine.episodes.store.count(), "disk_mb": dir_mb(home)}
    say(f"store after ingest: {out['store_after_ingest']} (SQLite + Chroma + audit)")
    steps: list[tuple[str, Callable[[], Row]]] = [
        ("ingest", lambda: part_ingest(engine, questions, histories, rows, args)),
        ("recall", lambda: part_recall(engine, questions)),
        ("qa", lambda: part_qa(engine, questions, args.qa)),
        ("pruning", lambda: part_pruning(engine, questions, args, tag)),
        ("latency", lambda: part_latency(engine, questions, args)),  # last: it fills the store
    ]
    for name, step in steps:
        if name in parts or (name == "qa" and args.qa):
            say(f"\n== {name} ==")
            seconds, out[name] = timed(step)
            say(f"  ({name}: {seconds:.0f} s)")
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    path = hd.data_path(args.data)
    if not path.is_file():
        say(f"SKIPPED: LongMemEval file not found at {path} (set --data or MARK_SHARED_DATA)")
        return 0
    parts = PARTS if args.part == "all" else (args.part,)
    tag = ("" if args.part == "all" else f"_{args.part}") + (f"_limit{args.limit}" if args.limit else "")
    tag += "" if args.split == "both" else f"_{args.split}"
    started, machine = time.perf_counter(), machine_info()
    say(f"bench_history: {machine['cores']} cores, {machine['cpu']}, load {machine['loadavg_at_start']}; data {path}")
    questions = [q for q in hd.load_questions(path, args.limit) if args.split in ("both", q.split)]
    say(f"{len(questions)} questions: " + ", ".join(f"{s} {sum(q.split == s for q in questions)}" for s in SPLITS))
    with temp_home("history") as home:
        engine = hd.open_engine(home, args)
        try:
            results = run_parts(engine, questions, args, parts, tag)
        finally:
            hd.close_engine(engine)
    payload: Row = {"benchmark": "history", "machine": machine, "params": vars(args)}
    payload.update({"split": {q.qid: q.split for q in questions}, **results})
    payload["wall_s"] = round(time.perf_counter() - started, 1)
    say(f"results: {write_results('history' + tag, payload)}  (wall {payload['wall_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
