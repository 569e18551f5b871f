"""Conflict-candidate quality on the Letta core-memory update pairs (no LLM needed).

Run:  nice -n 10 .venv/bin/python benchmarks/bench_conflicts.py [--quick] [--data PATH] [--no-add-check]

Data: ``update_pairs_dev.jsonl`` (546 rows) from ``$MARK_SHARED_DATA`` or ``../shared/data`` beside the
repository (``/work/shared/data``); skipped with a message when absent. Each row has 10 ``facts``, a
``contradicting_fact`` and ``supporting_fact_indices``: the fact(s) the contradiction overrides.

For each row: a fresh user partition holds the 10 facts as that user's ``user_question`` memories
(written with ``memory.portability.restore_records``: audit events + upsert, embedded by the ONNX MiniLM). The
contradicting fact is embedded and its candidates found the way ``engine.add`` does: ``store.query`` of
the same partition (top-20, searchable statuses), the same type/user filter, sorted by similarity, then
``conflicts.flag_candidates`` (similarity >= ``candidate_threshold``, at most ``max_candidates``).
Reported: share of rows whose overridden fact is the top candidate (any / all of several), within the
top 3, above the threshold, among the flagged candidates, the similarity distributions, and how often
the model-free judge would MERGE the contradiction (similarity >= ``duplicate_threshold``). Finally the
real ``engine.add`` is run on every contradicting fact and its judged candidates are checked against the
replicated lookup.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
from _common import NOW, ROOT, machine_info, print_table, say, temp_home, timed, write_results

from memory import conflicts
from memory.config import load_settings
from memory.engine import MemoryEngine
from memory.models import SEARCHABLE, MemoryRecord, MemoryType, Source
from memory.portability import restore_records

STATUS_WHERE = {"status": {"$in": sorted(s.value for s in SEARCHABLE)}}
TARGET_TOP1 = 0.95
DATA_NAME = Path("letta_core_memory") / "update_pairs_dev.jsonl"
BINS = [round(x, 2) for x in np.arange(0.0, 1.0001, 0.1)]


def data_path(given: str | None) -> Path:
    """Where the data file should be: --data, $MARK_SHARED_DATA, or ../shared/data beside the clone."""
    if given:
        return Path(given)
    base = Path(os.environ.get("MARK_SHARED_DATA", ROOT.parent / "shared" / "data"))
    return base / DATA_NAME


def fact_records(rows: list[dict[str, Any]]) -> tuple[list[MemoryRecord], list[list[str]]]:
    """The 10 facts of every row as its own user's user_question memories; ids per row."""
    records: list[MemoryRecord] = []
    ids: list[list[str]] = []
    for i, row in enumerate(rows):
        row_ids = []
        for j, fact in enumerate(row["facts"]):
            at = NOW - timedelta(minutes=10 - j)
            record = MemoryRecord(
                text=fact,
                type=MemoryType.USER_QUESTION,
                user_id=f"letta-{i:04d}",
                source=Source.USER,
                created_at=at,
                updated_at=at,
            )
            records.append(record)
            row_ids.append(record.id)
        ids.append(row_ids)
    return records, ids


def candidates(engine: MemoryEngine, user_id: str, text: str) -> list[tuple[MemoryRecord, float]]:
    """``engine.add``'s neighbour lookup for a new user_question memory, sorted by similarity."""
    lookup = getattr(engine, "neighbours", None)
    if lookup is not None:
        neighbours = lookup(text, MemoryType.USER_QUESTION, user_id)
    else:  # engines before commit b249c7e
        vector = engine.embedder.embed([text])[0]
        neighbours = engine.store.query(user_id, vector, 20, STATUS_WHERE)
        neighbours = [(r, s) for r, s in neighbours if r.type is MemoryType.USER_QUESTION and r.user_id == user_id]
    return sorted(neighbours, key=lambda pair: pair[1], reverse=True)


def judge_row(engine: MemoryEngine, row: dict[str, Any], row_ids: list[str], user_id: str) -> dict[str, Any]:
    """Ranks and similarities of the overridden fact(s) among the contradicting fact's candidates."""
    ranked = candidates(engine, user_id, row["contradicting_fact"])
    sims = {r.id: s for r, s in ranked}
    targets = [row_ids[k] for k in row["supporting_fact_indices"]]
    flagged = [r.id for r, _ in conflicts.flag_candidates(ranked, engine.config.conflicts, row["contradicting_fact"])]
    # the engine's order: flagged candidates as the engine ranks them (cosine + keyword overlap), then the rest
    order = flagged + [r.id for r, _ in ranked if r.id not in flagged]
    ranks = [order.index(t) + 1 if t in order else len(order) + 1 for t in targets]
    cosine_order = [r.id for r, _ in ranked]
    cosine_ranks = [cosine_order.index(t) + 1 if t in cosine_order else len(cosine_order) + 1 for t in targets]
    threshold = engine.config.conflicts.candidate_threshold
    n = len(targets)
    others = [s for r, s in ranked if r.id not in targets]
    target_sims = [sims.get(t, -1.0) for t in targets]
    return {
        "n_targets": n,
        "ranks": ranks,
        "cosine_top1_any": min(cosine_ranks) == 1,
        "target_sims": [round(s, 4) for s in target_sims],
        "best_other_sim": round(max(others), 4) if others else None,
        "top1_any": min(ranks) == 1,
        "top1_all": max(ranks) <= n,
        "top3_any": min(ranks) <= 3,
        "top3_all": max(ranks) <= max(3, n),
        "above_any": max(target_sims) >= threshold,
        "above_all": min(target_sims) >= threshold,
        "flagged_any": any(t in flagged for t in targets),
        "flagged_all": all(t in flagged for t in targets),
        "n_flagged": len(flagged),
        "flagged": flagged,
        "target_dup": max(target_sims) >= engine.config.conflicts.duplicate_threshold,
    }


def add_check(engine: MemoryEngine, row: dict[str, Any], user_id: str, result: dict[str, Any]) -> dict[str, Any]:
    """Run the real ``engine.add`` and compare its judged candidates with the replicated lookup."""
    added = engine.add(row["contradicting_fact"], MemoryType.USER_QUESTION, user_id, source=Source.USER, now=NOW)
    judged = [j.existing_id for j in added.judgements]
    flagged = result["flagged"]
    stopped_early = bool(added.judgements) and added.judgements[-1].verdict is conflicts.Verdict.SAME
    agrees = judged == flagged or (stopped_early and judged == flagged[: len(judged)])
    return {"action": added.action, "agrees": agrees}


def distribution(values: list[float]) -> dict[str, Any]:
    """Percentiles and a 0.1-wide histogram of similarities."""
    arr = np.asarray(values, dtype=np.float64)
    if arr.size == 0:
        return {"n": 0}
    pct = {f"p{p}": round(float(np.percentile(arr, p)), 3) for p in (0, 5, 25, 50, 75, 95, 100)}
    counts, _ = np.histogram(np.clip(arr, 0.0, 1.0), bins=BINS)
    hist = {f"{lo:.1f}-{hi:.1f}": int(c) for lo, hi, c in zip(BINS[:-1], BINS[1:], counts, strict=True)}
    return {"n": int(arr.size), **pct, "histogram": hist}


def band_shares(results: list[dict[str, Any]], cfg: dict[str, Any]) -> dict[str, Any]:
    """Where the similarities fall relative to the judge bands in ``ConflictConfig`` (when it has them).

    Without a model answer, ``verdict_rules.combine`` calls a pair SAME at or above ``same_band``, UNSURE in
    ``[contradiction_band, same_band)`` and INDEPENDENT below; ``SimilarityJudge`` calls SAME at or above
    ``duplicate_threshold``.
    """
    n = len(results)
    best = [max(r["target_sims"]) for r in results]
    other = [r["best_other_sim"] if r["best_other_sim"] is not None else -1.0 for r in results]
    out: dict[str, Any] = {}
    for key in ("duplicate_threshold", "same_band", "contradiction_band", "candidate_threshold"):
        if key in cfg:
            cut = float(cfg[key])
            out[key] = {
                "value": cut,
                "share_rows_overridden_fact_at_or_above": round(sum(b >= cut for b in best) / n, 4),
                "share_rows_other_fact_at_or_above": round(sum(o >= cut for o in other) / n, 4),
            }
    return out


def summarize_rows(results: list[dict[str, Any]], threshold: float) -> dict[str, Any]:
    n = len(results)
    share = {k: round(sum(r[k] for r in results) / n, 4) for k in results[0] if k.endswith(("_any", "_all"))}
    single = [r for r in results if r["n_targets"] == 1]
    multi = [r for r in results if r["n_targets"] > 1]
    target_sims = [s for r in results for s in r["target_sims"]]
    best_target = [max(r["target_sims"]) for r in results]
    others = [r["best_other_sim"] for r in results if r["best_other_sim"] is not None]
    margins = [max(r["target_sims"]) - r["best_other_sim"] for r in results if r["best_other_sim"] is not None]
    return {
        "rows": n,
        "rows_single_target": len(single),
        "rows_multi_target": len(multi),
        "share": share,
        "share_single_target_top1": round(sum(r["top1_any"] for r in single) / max(1, len(single)), 4),
        "share_multi_target_top1_any": round(sum(r["top1_any"] for r in multi) / max(1, len(multi)), 4),
        "share_multi_target_top1_all": round(sum(r["top1_all"] for r in multi) / max(1, len(multi)), 4),
        "rank_of_best_target": {str(k): sum(min(r["ranks"]) == k for r in results) for k in range(1, 11)},
        "rows_target_at_or_above_duplicate_threshold": sum(r["target_dup"] for r in results),
        "flagged_per_row_mean": round(float(np.mean([r["n_flagged"] for r in results])), 2),
        "threshold": threshold,
        "similarity": {
            "every_target": distribution(target_sims),
            "best_target_per_row": distribution(best_target),
            "best_non_target_per_row": distribution(others),
            "margin_best_target_minus_best_other": distribution(margins),
        },
    }


def report(summary: dict[str, Any], checks: dict[str, Any] | None) -> None:
    share = summary["share"]
    say(
        f"\nrows: {summary['rows']} ({summary['rows_single_target']} with one overridden fact, "
        f"{summary['rows_multi_target']} with several)"
    )
    rows = [
        ["overridden fact is the top candidate", share["top1_any"], share["top1_all"]],
        ["overridden fact within top 3", share["top3_any"], share["top3_all"]],
        [f"similarity >= candidate_threshold {summary['threshold']}", share["above_any"], share["above_all"]],
        ["among flagged (>= threshold, top max_candidates)", share["flagged_any"], share["flagged_all"]],
    ]
    print_table(["share of rows", "any", "all"], [[r[0], f"{r[1]:.1%}", f"{r[2]:.1%}"] for r in rows])
    say(
        f"  single-target rows top-1: {summary['share_single_target_top1']:.1%}; multi-target rows top-1 any "
        f"{summary['share_multi_target_top1_any']:.1%}, all {summary['share_multi_target_top1_all']:.1%}"
    )
    say(f"  rank of the best overridden fact: {summary['rank_of_best_target']}")
    dups = summary["rows_target_at_or_above_duplicate_threshold"]
    say(
        f"  flagged candidates per write (judge calls): {summary['flagged_per_row_mean']}; rows whose overridden fact "
        f"is >= duplicate_threshold (model-free judge would MERGE): {dups}"
    )
    say("  similarity distributions (cosine):")
    print_table(
        ["series", "n", "min", "p5", "p25", "median", "p75", "p95", "max"],
        [
            [name, d["n"], d["p0"], d["p5"], d["p25"], d["p50"], d["p75"], d["p95"], d["p100"]]
            for name, d in summary["similarity"].items()
        ],
    )
    hist = summary["similarity"]["best_target_per_row"]["histogram"]
    say("  histogram of the best overridden fact's similarity: " + ", ".join(f"{k}: {v}" for k, v in hist.items()))
    say("  best overridden fact / best OTHER fact at or above each configured cut:")
    print_table(
        ["cut", "value", "overridden fact", "other fact"],
        [
            [
                k,
                v["value"],
                f"{v['share_rows_overridden_fact_at_or_above']:.1%}",
                f"{v['share_rows_other_fact_at_or_above']:.1%}",
            ]
            for k, v in summary["bands"].items()
        ],
    )
    if checks:
        say(
            f"  engine.add cross-check: judged candidates agree with the replicated lookup in "
            f"{checks['agree']}/{checks['rows']} rows; actions {checks['actions']}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="first 100 rows only")
    parser.add_argument("--data", default=None, help="path of update_pairs_dev.jsonl")
    parser.add_argument("--no-add-check", action="store_true", help="skip the engine.add cross-check")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    machine = machine_info()
    path = data_path(args.data)
    if not path.is_file():
        message = f"SKIPPED: data file not found at {path} (set --data or MARK_SHARED_DATA)"
        say(message)
        write_results("conflicts", {"benchmark": "conflicts", "machine": machine, "skipped": message})
        return 0
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if args.quick:
        rows = rows[:100]
    say(f"bench_conflicts: {len(rows)} rows from {path}; {machine['cores']} cores, load {machine['loadavg_at_start']}")
    with temp_home("conflicts") as home:
        settings = load_settings(env={"MARK_HOME": str(home), "MARK_EMBEDDER": "onnx"})
        engine = MemoryEngine.open(settings)
        try:
            records, ids = fact_records(rows)
            load_s, _ = timed(restore_records, engine, records, now=NOW)
            say(f"stored {len(records):,} facts in {len(rows)} user partitions in {load_s:.1f} s (restore_records)")
            lookup_s, results = timed(
                lambda: [judge_row(engine, row, ids[i], f"letta-{i:04d}") for i, row in enumerate(rows)]
            )
            checks = None
            if not args.no_add_check:
                verdicts = [add_check(engine, row, f"letta-{i:04d}", results[i]) for i, row in enumerate(rows)]
                actions: dict[str, int] = {}
                for v in verdicts:
                    actions[v["action"]] = actions.get(v["action"], 0) + 1
                checks = {"rows": len(rows), "agree": sum(v["agrees"] for v in verdicts), "actions": actions}
        finally:
            engine.close()
    summary = summarize_rows(results, engine.config.conflicts.candidate_threshold)
    summary["bands"] = band_shares(results, engine.config.conflicts.model_dump())
    report(summary, checks)
    top1 = summary["share"]["top1_any"]
    say(
        f"\nTARGET top-1 >= {TARGET_TOP1:.0%}: {'MET' if top1 >= TARGET_TOP1 else 'MISSED'} "
        f"(any {top1:.1%}, all {summary['share']['top1_all']:.1%})"
    )
    misses = [
        {"row": i, "contradicting_fact": rows[i]["contradicting_fact"], "ranks": r["ranks"], "sims": r["target_sims"]}
        for i, r in enumerate(results)
        if not r["top1_any"]
    ]
    payload = {
        "benchmark": "conflicts",
        "machine": machine,
        "data": str(path),
        "params": {"rows": len(rows), "embedder": "onnx", "config": engine.config.conflicts.model_dump()},
        "facts_load_s": round(load_s, 1),
        "lookup_ms_per_row": round(lookup_s * 1e3 / len(rows), 2),
        "summary": summary,
        "engine_add_check": checks,
        "target": {"top1": TARGET_TOP1, "met": top1 >= TARGET_TOP1},
        "top1_misses": misses,
        "wall_s": round(time.perf_counter() - started, 1),
    }
    say(f"results: {write_results('conflicts', payload)}  (wall {payload['wall_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
