"""Accuracy of the LLM conflict judge (``agents.checks.LLMJudge``) on 300 labelled memory pairs.

Run:  MARK_THREADS=1 nice -n 10 .venv/bin/python benchmarks/bench_judge.py [--limit N] [--model-path GGUF]
      [--threads N] [--baseline] [--rescore results/judge.json] [--offset 100 --no-same]

Pairs (all deterministic; ``--limit N`` keeps the first N of each class):

* 100 ``contradicts``: the first 100 rows of the Letta core-memory update set
  (``update_pairs_dev.jsonl``, Apache-2.0) that have exactly one supporting fact, in file order;
  OLD = ``facts[s]`` with ``s = supporting_fact_indices[0]``, NEW = the row's ``contradicting_fact``.
* 100 ``independent``: the same rows; OLD = ``facts[(s + 5) % 10]`` (a fact of the same story that
  is not the supporting one, usually about the same people), NEW = the same ``contradicting_fact``.
* 100 ``same``: ``benchmarks/data/judge_paraphrases.jsonl``; OLD = a fact of the set, NEW = a
  hand-written paraphrase (same subject, attribute and value). The facts are the k-th fact of the
  k-th distinct ``facts`` list of the set (k = 0..99; the set holds exactly 100 distinct lists).

Labels are by construction: "contradicts" is the dataset's own update (the answer to the row's
question changes), which is not always a strict logical contradiction; "independent" is positional.

The model-free baseline, measured in every run on the same pairs: ``memory.conflicts.SimilarityJudge``
fed the cosine similarity of the ONNX MiniLM embeddings (what the engine uses without a model). It also
shows how many pairs of each class reach the engine's candidate threshold (only those are ever judged).
``--baseline`` runs only the baseline (no model is loaded) and writes ``results/judge_baseline.json``;
otherwise the LLM runs too and the results go to ``results/judge.json``. Target (issue): >= 90% overall.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _common import ROOT, machine_info, print_table, say, summarize, write_results

from memory.config import load_settings
from memory.conflicts import ConflictConfig, SimilarityJudge, Verdict
from memory.embedder import build_embedder, cosine
from memory.verdict_rules import Assessment, combine

DATA = ROOT.parent / "shared" / "data" / "letta_core_memory" / "update_pairs_dev.jsonl"
PARAPHRASES = ROOT / "benchmarks" / "data" / "judge_paraphrases.jsonl"
CLASSES = ("same", "contradicts", "independent")
PREDICTED = (*CLASSES, "unsure")
TARGET = 0.90
PER_CLASS = 100


@dataclass
class Pair:
    expected: str
    old: str
    new: str
    source: str


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def build_pairs(
    rows: Sequence[dict[str, Any]], paraphrases: Sequence[dict[str, Any]], limit: int, offset: int = 0
) -> list[Pair]:
    """``limit`` pairs of each class, in the documented deterministic order.

    ``offset`` skips that many single-fact rows first: ``--offset 100`` gives a second, fresh set of
    contradicting and independent pairs for checking a rule that was tuned on the first.
    """
    single = [(n, r) for n, r in enumerate(rows) if len(r["supporting_fact_indices"]) == 1]
    single = single[offset : offset + PER_CLASS]
    contradicts, independent = [], []
    for n, row in single:
        s = row["supporting_fact_indices"][0]
        other = (s + 5) % len(row["facts"])
        contradicts.append(Pair("contradicts", row["facts"][s], row["contradicting_fact"], f"row {n} fact {s}"))
        independent.append(Pair("independent", row["facts"][other], row["contradicting_fact"], f"row {n} fact {other}"))
    same = [Pair("same", p["fact"], p["paraphrase"], f"paraphrase {k}") for k, p in enumerate(paraphrases[:PER_CLASS])]
    return same[:limit] + contradicts[:limit] + independent[:limit]


def score(pairs: Sequence[Pair], predicted: Sequence[str]) -> dict[str, Any]:
    """Accuracy per class and overall, and the confusion matrix (expected -> predicted -> count)."""
    matrix = {e: dict.fromkeys(PREDICTED, 0) for e in CLASSES}
    for pair, verdict in zip(pairs, predicted, strict=True):
        matrix[pair.expected][verdict] += 1
    per_class = {e: round(matrix[e][e] / max(1, sum(matrix[e].values())), 4) for e in CLASSES}
    correct = sum(matrix[e][e] for e in CLASSES)
    return {"accuracy": round(correct / max(1, len(pairs)), 4), "per_class": per_class, "confusion": matrix}


def report(title: str, result: dict[str, Any]) -> None:
    say(f"\n== {title} ==")
    say(f"  overall accuracy: {result['accuracy']:.1%}   (target >= {TARGET:.0%})")
    print_table(["class", "accuracy"], [[c, f"{result['per_class'][c]:.1%}"] for c in CLASSES])
    say("  confusion (rows: expected, columns: predicted):")
    print_table(["expected", *PREDICTED], [[e, *(result["confusion"][e][p] for p in PREDICTED)] for e in CLASSES])


def run_baseline(pairs: Sequence[Pair], settings: Any) -> dict[str, Any]:
    """SimilarityJudge on the ONNX cosine similarity of each pair."""
    cfg = ConflictConfig()
    embedder = build_embedder(settings.embedder)
    embedder.embed(["warm-up"])
    start = time.perf_counter()
    vectors = embedder.embed([t for p in pairs for t in (p.old, p.new)])
    sims = [cosine(vectors[2 * i], vectors[2 * i + 1]) for i in range(len(pairs))]
    judge = SimilarityJudge(cfg.duplicate_threshold)
    verdicts = [judge.judge(p.new, p.old, s).value for p, s in zip(pairs, sims, strict=True)]
    seconds = time.perf_counter() - start
    result = score(pairs, verdicts)
    result["mean_s_per_judgement"] = round(seconds / max(1, len(pairs)), 5)
    result["similarity"] = {}
    for c in CLASSES:
        values = sorted(s for p, s in zip(pairs, sims, strict=True) if p.expected == c)
        if values:
            result["similarity"][c] = {
                "mean": round(sum(values) / len(values), 3),
                "min": round(values[0], 3),
                "median": round(values[len(values) // 2], 3),
                "max": round(values[-1], 3),
                "flagged_for_judge": sum(v >= cfg.candidate_threshold for v in values),
                "n": len(values),
            }
    result["thresholds"] = {"candidate": cfg.candidate_threshold, "duplicate": cfg.duplicate_threshold}
    result["similarities"] = [round(s, 4) for s in sims]
    return result


def report_variants(found: dict[str, Any]) -> None:
    for name, result in found.items():
        if "accuracy" in result:
            report(name.replace("_", " ").upper(), result)
        else:
            say(f"  {name}: {result}")


def report_similarity(result: dict[str, Any]) -> None:
    t = result["thresholds"]
    say(f"  ONNX cosine per class (engine flags pairs >= {t['candidate']} for the judge, SAME >= {t['duplicate']}):")
    rows = [
        [c, s["mean"], s["min"], s["median"], s["max"], f"{s['flagged_for_judge']}/{s['n']}"]
        for c, s in result["similarity"].items()
    ]
    print_table(["class", "mean", "min", "median", "max", "flagged"], rows)


async def judge_all(
    pairs: Sequence[Pair], client: Any, sims: Sequence[float]
) -> tuple[list[str], list[float], Any, list[str], list[Any]]:
    """Ask the model once per pair; the verdict is the engine's hybrid (model answer + similarity)."""
    from agents.checks import LLMJudge
    from agents.structured import UsageLog

    warm = time.perf_counter()
    await LLMJudge(client, UsageLog()).assess("The clinic opens at 9 am.", "The clinic opens at nine in the morning.")
    say(f"  warm-up judgement (not counted): {time.perf_counter() - warm:.1f} s")
    usage = UsageLog()
    judge = LLMJudge(client, usage)
    verdicts: list[str] = []
    seconds: list[float] = []
    replies: list[Any] = []
    start = time.perf_counter()
    for n, (pair, sim) in enumerate(zip(pairs, sims, strict=True), start=1):
        t0 = time.perf_counter()
        reply = await judge.assess(pair.new, pair.old)
        seconds.append(time.perf_counter() - t0)
        replies.append(None if reply is None else reply.model_dump())
        verdict: Verdict = combine(_assessment(replies[-1]), sim, ConflictConfig(), pair.new, pair.old)
        verdicts.append(verdict.value)
        if n % 10 == 0 or n == len(pairs):
            done = sum(v == p.expected for v, p in zip(verdicts, pairs, strict=False))
            say(f"  {n}/{len(pairs)} judged, {done} correct, {time.perf_counter() - start:.0f} s")
    return verdicts, seconds, usage, judge.failures, replies


def _assessment(reply: dict[str, Any] | None) -> Assessment | None:
    return None if reply is None else Assessment(same_attribute=reply["same_attribute"], same_value=reply["same_value"])


def _verdict(pair: Pair, reply: dict[str, Any] | None, sim: float, cfg: ConflictConfig) -> str:
    return combine(_assessment(reply), sim, cfg, pair.new, pair.old).value


def rescore(path: Path) -> dict[str, Any]:
    """Re-derive every verdict from the model replies a finished run saved (no model is loaded).

    The model's replies do not depend on ``combine``; re-scoring shows what a changed rule does to
    the same answers.
    """
    saved = json.loads(path.read_text(encoding="utf-8"))["llm"]
    pairs = [Pair(p["expected"], p["old"], p["new"], p["source"]) for p in saved["per_pair"]]
    replies = [p["reply"] for p in saved["per_pair"]]
    sims = [p["similarity"] for p in saved["per_pair"]]
    result = score(pairs, [_verdict(p, r, s, ConflictConfig()) for p, r, s in zip(pairs, replies, sims, strict=True)])
    result["variants"] = variants(pairs, replies, sims)
    return result


def variants(pairs: Sequence[Pair], replies: Sequence[Any], sims: Sequence[float]) -> dict[str, Any]:
    """Model alone, similarity bands alone, and bands fitted on a dev half, scored on the held-out half."""
    model_only = [
        "unsure"
        if r is None
        else ("independent" if not r["same_attribute"] else "same" if r["same_value"] else "contradicts")
        for r in replies
    ]
    bands_only = [combine(None, s, ConflictConfig()).value for s in sims]
    index = {c: [i for i, p in enumerate(pairs) if p.expected == c] for c in CLASSES}
    dev = sorted(i for c in CLASSES for i in index[c][: len(index[c]) // 2])
    held = sorted(i for c in CLASSES for i in index[c][len(index[c]) // 2 :])
    best = (-1.0, 0.92, 0.63)
    for high in [x / 100 for x in range(85, 99)]:
        for low in [x / 100 for x in range(45, 85)]:
            if low >= high:
                continue
            cfg = ConflictConfig(same_band=high, contradiction_band=low)
            hits = sum(_verdict(pairs[i], replies[i], sims[i], cfg) == pairs[i].expected for i in dev)
            best = max(best, (hits / len(dev), high, low))
    fitted = ConflictConfig(same_band=best[1], contradiction_band=best[2])
    held_pairs = [pairs[i] for i in held]
    return {
        "model_only": score(pairs, model_only),
        "similarity_bands_only": score(pairs, bands_only),
        "fitted_on_dev": {"same_band": best[1], "contradiction_band": best[2], "dev_accuracy": round(best[0], 4)},
        "held_out_fitted": score(held_pairs, [_verdict(pairs[i], replies[i], sims[i], fitted) for i in held]),
        "held_out_default": score(
            held_pairs, [_verdict(pairs[i], replies[i], sims[i], ConflictConfig()) for i in held]
        ),
    }


def run_llm(pairs: Sequence[Pair], settings: Any, sims: Sequence[float]) -> dict[str, Any]:
    from agents.providers import build_client, release_local_models

    t0 = time.perf_counter()
    client = build_client(settings)
    load_s = time.perf_counter() - t0
    say(f"  model client ready in {load_s:.1f} s; judging {len(pairs)} pairs...")
    try:
        verdicts, seconds, usage, failures, replies = asyncio.run(judge_all(pairs, client, sims))
    finally:
        release_local_models()
    result = score(pairs, verdicts)
    totals = usage.totals()
    result.update(
        {
            "model_load_s": round(load_s, 2),
            "mean_s_per_judgement": round(sum(seconds) / max(1, len(seconds)), 3),
            "latency": summarize(seconds),
            "llm_calls": totals.calls,
            "prompt_tokens": totals.prompt_tokens,
            "completion_tokens": totals.completion_tokens,
            "rejected_replies": totals.failures,
            "failure_reasons": failures,
            "variants": variants(pairs, replies, sims),
            "per_pair": [
                {
                    "expected": p.expected,
                    "verdict": v,
                    "reply": r,
                    "similarity": round(sim, 4),
                    "seconds": round(s, 3),
                    "source": p.source,
                    "old": p.old,
                    "new": p.new,
                }
                for p, v, s, r, sim in zip(pairs, verdicts, seconds, replies, sims, strict=True)
            ],
        }
    )
    return result


def as_deployed(pairs: Sequence[Pair], baseline: dict[str, Any], llm: dict[str, Any]) -> dict[str, Any]:
    """What the engine would decide: the LLM verdict for flagged pairs, "independent" for the rest.

    A lone pair is flagged by cosine alone: the engine's lexical rescue (``rescue_threshold``) weighs
    overlaps by IDF over a memory's other neighbours, which a pair taken alone does not have.
    """
    floor = baseline["thresholds"]["candidate"]
    verdicts = [
        p["verdict"] if s >= floor else "independent"
        for p, s in zip(llm["per_pair"], baseline["similarities"], strict=True)
    ]
    return score(pairs, verdicts)


def command_line() -> str:
    """The command as typed, with the MARK_* variables that shape it (keys hidden)."""
    env = [f"{k}={shlex.quote(v)}" for k, v in sorted(os.environ.items()) if k.startswith("MARK_") and "KEY" not in k]
    exe = Path(sys.executable)
    shown = str(exe.relative_to(ROOT)) if exe.is_relative_to(ROOT) else str(exe)
    return " ".join([*env, shown, *map(shlex.quote, sys.argv)])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=PER_CLASS, help="pairs per class (default 100)")
    parser.add_argument("--model-path", help="GGUF to load (else the configured model, MARK_MODEL_PATH)")
    parser.add_argument("--threads", type=int, help="llama.cpp threads (else MARK_THREADS, default 1)")
    parser.add_argument("--baseline", action="store_true", help="only the model-free SimilarityJudge baseline")
    parser.add_argument("--rescore", type=Path, help="a saved results/judge.json: re-derive its verdicts, no model")
    parser.add_argument("--data", type=Path, default=DATA, help="update_pairs_dev.jsonl")
    parser.add_argument("--paraphrases", type=Path, default=PARAPHRASES, help="judge_paraphrases.jsonl")
    parser.add_argument("--offset", type=int, default=0, help="skip this many single-fact rows (a fresh set)")
    parser.add_argument("--no-same", action="store_true", help="leave out the hand-written paraphrase pairs")
    args = parser.parse_args()
    say(f"command: {command_line()}")
    if args.rescore:
        result = rescore(args.rescore)
        report(f"RESCORED with the current rule: {args.rescore}", result)
        report_variants(result["variants"])
        payload = {"command": command_line(), "machine": machine_info(), "rescored": str(args.rescore), **result}
        say(f"\nresults: {write_results('judge_rescored', payload)}")
        return 0
    missing = [p for p in (args.data, args.paraphrases) if not p.is_file()]
    if missing:
        say(f"SKIPPED: data file(s) absent: {', '.join(map(str, missing))}")
        return 0
    model: dict[str, Any] = {}
    if args.model_path:
        model["model_path"] = args.model_path
    if args.threads:
        model["n_threads"] = args.threads
    settings = load_settings(model=model) if model else load_settings()
    pairs = build_pairs(read_jsonl(args.data), read_jsonl(args.paraphrases), max(1, args.limit), max(0, args.offset))
    if args.no_same:
        pairs = [p for p in pairs if p.expected != "same"]
    suffix = f"_offset{args.offset}" if args.offset else ""
    counts = {c: sum(p.expected == c for p in pairs) for c in CLASSES}
    say(f"pairs: {counts} ({len(pairs)} in all)")
    payload: dict[str, Any] = {"command": command_line(), "machine": machine_info(), "pairs": counts}

    baseline = run_baseline(pairs, settings)
    report(f"BASELINE SimilarityJudge on ONNX cosine ({settings.embedder.kind.value} embedder)", baseline)
    say(f"  mean seconds per judgement (embedding included): {baseline['mean_s_per_judgement']:.4f}")
    report_similarity(baseline)
    payload["baseline"] = baseline
    if args.baseline:
        say(f"\nresults: {write_results('judge_baseline' + suffix, payload)}")
        return 0

    cfg = settings.model
    where = cfg.model_path or cfg.base_url or cfg.replay_file or settings.models_dir
    say(f"\nLLM judge: provider={cfg.provider.value} model={cfg.model} ({where}) threads={cfg.n_threads}")
    payload["model"] = {
        "provider": cfg.provider.value,
        "model": cfg.model,
        "where": str(where),
        "threads": cfg.n_threads,
    }
    llm = run_llm(pairs, settings, baseline["similarities"])
    report(f"HYBRID judge: {cfg.provider.value} model answer + similarity (engine defaults)", llm)
    report_variants(llm["variants"])
    median_ms = llm["latency"]["median_ms"]
    say(f"  mean seconds per judgement: {llm['mean_s_per_judgement']:.2f}  (median {median_ms:.0f} ms)")
    say(
        f"  LLM calls: {llm['llm_calls']}  prompt tokens: {llm['prompt_tokens']}  "
        f"completion tokens: {llm['completion_tokens']}  rejected replies: {llm['rejected_replies']}"
    )
    say(f"  vs baseline: {llm['accuracy']:.1%} vs {baseline['accuracy']:.1%} overall")
    deployed = as_deployed(pairs, baseline, llm)
    report("AS DEPLOYED: pairs below the candidate threshold are never judged (kept as independent)", deployed)
    llm["as_deployed"] = deployed
    wrong = [p for p in llm["per_pair"] if p["verdict"] != p["expected"]][:6]
    if wrong:
        say("  some misjudged pairs:")
        for p in wrong:
            say(f"    [{p['expected']} -> {p['verdict']}] OLD: {p['old'][:90]} | NEW: {p['new'][:90]}")
    payload["llm"] = llm
    say(f"\nresults: {write_results('judge' + suffix, payload)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
