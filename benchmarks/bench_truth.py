"""Memory truth: does mark commit what the expert said, and never the answer the expert rejected?

Run:  MARK_THREADS=1 nice -n 10 .venv/bin/python benchmarks/bench_truth.py [--split dev|test|all]
      [--limit N] [--ids truth-001,truth-002] [--threads N] [--model-path GGUF]
      .venv/bin/python benchmarks/bench_truth.py --score benchmarks/results/truth.json   # no model

Data: ``data/truth_conversations.jsonl``, 72 correction conversations written by hand for mark on
MedMCQA dev rows (Pal et al. 2022, MIT; ``realidx`` names the row). Turn 0 is the SME asking the
question with its four options, then the chatbot's wrong answer, then the SME's correction, in seven
styles (letter only, reason without the letter, "not X but Y", two facts at once, two wrong tries,
partial agreement, the chatbot arguing back). Every row lists the facts the SME asserted and the
claims that are false (the rejected answer and any wrong argument), each with keyword groups.
Conversations truth-001..truth-020 are the ``dev`` split (for tuning), the rest ``test`` (reported).

Each conversation is built with ``agents.mbs.build_memories`` (SME source, domain medicine) into a
FRESH temporary store, with the real model loaded once. Then every memory in the store is read back
(``engine.list()``); ``active``, ``probationary`` and ``pending_review`` count as committed
(``pending_review`` is also counted apart). Shared memories are the ``residual`` ones (the domain
partition every user reads).

Scoring is deterministic and independent of mark's code (plain string rules, nothing imported from
``memory`` or ``agents``). Text is compared lower-cased, accents and typographic dashes/quotes folded.

- Keywords: a list of groups; a text matches when every group has at least one alternative in it as
  a substring. An alternative that starts (ends) with a digit must not follow (be followed by)
  another digit, so "10,000" is not found inside "100,000" and "10000" not inside "100000".
- Framing: an occurrence of a keyword counts as negated or framed as a mistake when, within its
  phrase (the text between commas or brackets), one of the 4 words before it is "not", "never",
  "neither", "nor", "cannot", "unlike", "except", a word starting with "avoid" or ending in "n't",
  or the word just before it is "no", or those 4 words contain "rather than", "instead of", "as opposed
  to" or "other than"; or the 3 words after it contain "cannot", a word ending in "n't", a word
  starting with "avoid", or an auxiliary verb (is, are, was, does, can, should, ...) followed by "not"
  or "never"; or its scope holds a word starting with "mistak", "wrong", "incorrect", "error",
  "erroneous", "false", "reject" or "misconcept".
- A memory **supports** an asserted fact when the whole memory matches the fact's keywords and some
  occurrence of the fact's first group (its subject, the right answer) is not framed; the mistake
  scope is the clause (sentences split at . ! ? and new lines, clauses at ";" and at ", and", "but",
  "whereas", "while", "although", "however").
- A memory **asserts a false claim** when one clause of it matches all the claim's keyword groups and
  no occurrence of any of those keywords in that clause is framed; the mistake scope is the whole
  sentence ("..., which was wrong" frames the claim before it).
- A memory is **supported** when it supports an asserted fact, or, for ``user_question`` memories
  only, when it is about what the SME asked: it holds at least two (all, if fewer) of the question
  stem's distinctive words (words of 4+ letters outside a short list of generic exam words).
- A memory is **correct** when it is supported and asserts no false claim. Precision = correct /
  committed memories (micro-averaged over the conversations of a split); "shared" counts residual
  memories only. Recall = share of conversations with a committed memory that is correct and supports
  ``asserted[0]`` (the corrected fact); "recall shared" asks the same of residual memories.

Reported per split (dev, test) and overall: precision shared and all, recall (all, shared),
false-claim memories in total (and shared), pending reviews, refused candidates (``state.report()
["rejected"]``, when the build reports it; scored with the same rules, so "correct" ones are memories
the gate threw away and "false" ones are refusals that did their job), LLM calls per conversation
(mean, max), tokens per
conversation (mean), wall seconds per build (median, p95). Every memory with its verdicts goes to
``results/truth.json`` so each verdict can be audited; ``--score FILE`` re-scores a saved file with the
current rules and data (no model) and writes ``results/truth_rescored.json``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import statistics
import sys
import time
import traceback
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from _common import ROOT, machine_info, print_table, say, temp_home, write_results

DATA = ROOT / "benchmarks" / "data" / "truth_conversations.jsonl"
USER_ID = "sme-1"
DOMAIN = "medicine"
COMMITTED = ("active", "probationary", "pending_review")
PENDING = "pending_review"
SHARED_TYPE = "residual"
QUESTION_TYPE = "user_question"
SPLITS = ("dev", "test")

# -- text rules ----------------------------------------------------------------------------------
_FOLD = str.maketrans("\u2010\u2011\u2012\u2013\u2014\u2212\u2018\u2019\u201c\u201d\u00a0", "------''\"\" ")
_WORD = re.compile(r"[a-z0-9][a-z0-9'+/-]*")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_CLAUSE = re.compile(r";|,\s*and\s|,?\s+but\s|,?\s+whereas\s|,?\s+while\s|,?\s+although\s|,?\s+however\b")
_PHRASE = re.compile(r"[,()\[\]]")
NEGATIONS = frozenset({"not", "never", "neither", "nor", "cannot", "unlike", "except"})
NEGATION_PHRASES = ("rather than", "instead of", "as opposed to", "other than")
AUXILIARIES = frozenset(
    re.findall(r"[a-z]+", "is are was were be been does do did can could will would should may might must has have had")
)
MISTAKES = ("mistak", "wrong", "incorrect", "error", "erroneous", "false", "reject", "misconcept")
WINDOW_BEFORE, WINDOW_AFTER = 4, 3
STEM_STOPWORDS = frozenset(
    re.findall(
        r"[a-z]+",
        """which following most common commonly seen used true false best these this that with from into what
    will there their they does have least type types cause caused causes patient patients characteristic
    characterised characterized feature features given found done occurs occur shows show associated
    mediated involving called known name about than other more less also only after before during
    between under over case cases condition conditions""",
    )
)


def fold(text: str) -> str:
    """Lower-case, accents and typographic dashes/quotes folded, spaces collapsed."""
    text = unicodedata.normalize("NFKD", text.translate(_FOLD))
    text = "".join(c for c in text if not unicodedata.combining(c))
    return re.sub(r"\s+", " ", text).strip().lower()


def find(text: str, alternative: str) -> list[tuple[int, int]]:
    """Spans of ``alternative`` in folded ``text`` (numbers are not matched inside longer numbers)."""
    alt = fold(alternative)
    spans: list[tuple[int, int]] = []
    start = text.find(alt)
    while alt and start >= 0:
        end = start + len(alt)
        clash_left = alt[0].isdigit() and start > 0 and text[start - 1].isdigit()
        clash_right = alt[-1].isdigit() and end < len(text) and text[end].isdigit()
        if not (clash_left or clash_right):
            spans.append((start, end))
        start = text.find(alt, start + 1)
    return spans


def matches(text: str, groups: Sequence[Sequence[str]]) -> bool:
    """Every group has at least one alternative in ``text`` (already folded)."""
    return bool(groups) and all(any(find(text, alt) for alt in group) for group in groups)


def sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE.split(text) if s.strip()]


def clauses(sentence: str) -> list[str]:
    return [c for c in _CLAUSE.split(sentence) if c.strip()]


def _phrase_around(text: str, start: int, end: int) -> tuple[str, str]:
    """The text of the phrase before and after the span (phrases end at commas and brackets)."""
    left = max((m.end() for m in _PHRASE.finditer(text, 0, start)), default=0)
    right = next((m.start() for m in _PHRASE.finditer(text, end)), len(text))
    return text[left:start], text[end:right]


def _negated_before(words: list[str]) -> bool:
    window = words[-WINDOW_BEFORE:]
    if words and words[-1] == "no":
        return True
    if any(w in NEGATIONS or w.startswith("avoid") or w.endswith("n't") for w in window):
        return True
    joined = " ".join(window)
    return any(p in joined for p in NEGATION_PHRASES)


def _negated_after(words: list[str]) -> bool:
    window = words[:WINDOW_AFTER]
    if any(w == "cannot" or w.endswith("n't") or w.startswith("avoid") for w in window):
        return True
    return any(a in AUXILIARIES and b in {"not", "never"} for a, b in itertools.pairwise(window))


def has_mistake_word(text: str) -> bool:
    return any(w.startswith(MISTAKES) for w in _WORD.findall(text))


def framed(scope: str, start: int, end: int, mistake_scope: str) -> bool:
    """The occurrence ``scope[start:end]`` is negated, or its ``mistake_scope`` calls it a mistake."""
    before, after = _phrase_around(scope, start, end)
    return (
        _negated_before(_WORD.findall(before))
        or _negated_after(_WORD.findall(after))
        or has_mistake_word(mistake_scope)
    )


def supports(memory: str, groups: Sequence[Sequence[str]]) -> bool:
    """The memory states the fact: all groups match and its subject (group 0) occurs unframed."""
    text = fold(memory)
    if not matches(text, groups):
        return False
    for sentence in sentences(text):
        for clause in clauses(sentence):
            for alt in groups[0]:
                if any(not framed(clause, s, e, clause) for s, e in find(clause, alt)):
                    return True
    return False


def asserts(memory: str, groups: Sequence[Sequence[str]]) -> bool:
    """The memory states the false claim: one clause matches every group and none of it is framed."""
    text = fold(memory)
    for sentence in sentences(text):
        for clause in clauses(sentence):
            if not matches(clause, groups):
                continue
            spans = [span for group in groups for alt in group for span in find(clause, alt)]
            if not any(framed(clause, s, e, sentence) for s, e in spans):
                return True
    return False


def stem_words(question: str) -> list[str]:
    """Distinctive words of the question stem (the text before " A) ")."""
    stem = fold(question).split(" a) ", 1)[0]
    words = [w.strip("'-+/") for w in re.findall(r"[a-z][a-z'-]+", stem)]
    return sorted({w for w in words if len(w) >= 4 and w not in STEM_STOPWORDS})


def about_question(memory: str, words: Sequence[str]) -> bool:
    """At least two (all, if fewer) of the stem's distinctive words occur in the memory."""
    if not words:
        return False
    text = fold(memory)
    return sum(w in text for w in words) >= min(2, len(words))


# -- scoring ----------------------------------------------------------------------------------------
def score_memory(memory: dict[str, Any], conv: dict[str, Any]) -> dict[str, Any]:
    """Verdicts for one stored memory against one conversation's facts and false claims."""
    text = memory["text"]
    supported_by = [i for i, f in enumerate(conv["asserted"]) if supports(text, f["keywords"])]
    false_by = [i for i, f in enumerate(conv["false_claims"]) if asserts(text, f["keywords"])]
    on_question = memory["type"] == QUESTION_TYPE and about_question(text, stem_words(conv["question"]))
    supported = bool(supported_by) or on_question
    return {
        **memory,
        "committed": memory["status"] in COMMITTED,
        "shared": memory["type"] == SHARED_TYPE,
        "supported_by": supported_by,
        "about_question": on_question,
        "supported": supported,
        "false_by": false_by,
        "false": bool(false_by),
        "correct": supported and not false_by,
    }


def score_conversation(
    conv: dict[str, Any], memories: Iterable[dict[str, Any]], refused: Iterable[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """Per-memory verdicts and the conversation's counts (committed memories only).

    ``refused`` are the candidates the build refused (``state.report()["rejected"]``): scored with the
    same rules, to count the refusals that threw away a correct memory or stopped a false one.
    """
    verdicts = [score_memory(m, conv) for m in memories]
    refusals = [score_memory({**r, "status": "refused"}, conv) for r in refused or []]
    committed = [v for v in verdicts if v["committed"]]
    shared = [v for v in committed if v["shared"]]
    recall = [v for v in committed if v["correct"] and 0 in v["supported_by"]]
    return {
        "memories": verdicts,
        "committed": len(committed),
        "committed_shared": len(shared),
        "pending_review": sum(v["status"] == PENDING for v in committed),
        "correct": sum(v["correct"] for v in committed),
        "correct_shared": sum(v["correct"] for v in shared),
        "false": sum(v["false"] for v in committed),
        "false_shared": sum(v["false"] for v in shared),
        "recall": bool(recall),
        "recall_shared": any(v["shared"] for v in recall),
        "refused": refusals,
        "refused_correct": sum(v["correct"] for v in refusals),
        "refused_false": sum(v["false"] for v in refusals),
    }


def _ratio(num: float, den: float) -> float | None:
    return round(num / den, 3) if den else None


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Aggregate scored conversations (each with ``score``, ``usage``, ``wall_s``, ``rejected``)."""
    if not rows:
        return {"conversations": 0}
    scores = [r["score"] for r in rows]
    total = {k: sum(s[k] for s in scores) for k in ("committed", "committed_shared", "correct", "correct_shared")}
    calls = [r["usage"].get("calls", 0) for r in rows]
    tokens = [r["usage"].get("prompt_tokens", 0) + r["usage"].get("completion_tokens", 0) for r in rows]
    walls = [r["wall_s"] for r in rows if r.get("wall_s") is not None]
    rejected = [len(r["rejected"]) for r in rows if r.get("rejected") is not None]
    return {
        "conversations": len(rows),
        "committed": total["committed"],
        "committed_shared": total["committed_shared"],
        "precision_shared": _ratio(total["correct_shared"], total["committed_shared"]),
        "precision_all": _ratio(total["correct"], total["committed"]),
        "recall": _ratio(sum(s["recall"] for s in scores), len(rows)),
        "recall_shared": _ratio(sum(s["recall_shared"] for s in scores), len(rows)),
        "false_claim_memories": sum(s["false"] for s in scores),
        "false_claim_memories_shared": sum(s["false_shared"] for s in scores),
        "pending_review": sum(s["pending_review"] for s in scores),
        "rejected_candidates": sum(rejected) if rejected else None,
        "rejected_correct": sum(s.get("refused_correct", 0) for s in scores) if rejected else None,
        "rejected_false": sum(s.get("refused_false", 0) for s in scores) if rejected else None,
        "calls_mean": round(statistics.fmean(calls), 2),
        "calls_max": max(calls),
        "tokens_mean": round(statistics.fmean(tokens), 1),
        "wall_s_median": round(statistics.median(walls), 2) if walls else None,
        "wall_s_p95": round(float(np.percentile(walls, 95)), 2) if walls else None,
        "errors": sum(len(r.get("errors", [])) for r in rows),
    }


def summarise_splits(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {split: summarise([r for r in rows if r["split"] == split]) for split in SPLITS}
    out["all"] = summarise(rows)
    return out


# -- data -------------------------------------------------------------------------------------------
def load_conversations(path: Path = DATA) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def select(convs: list[dict[str, Any]], split: str, ids: str | None, limit: int | None) -> list[dict[str, Any]]:
    chosen = convs if split == "all" else [c for c in convs if c["split"] == split]
    if ids:
        wanted = {i.strip() for i in ids.split(",") if i.strip()}
        unknown = wanted - {c["id"] for c in convs}
        if unknown:
            raise SystemExit(f"error: unknown conversation id(s): {', '.join(sorted(unknown))}")
        chosen = [c for c in convs if c["id"] in wanted]
    return chosen[:limit] if limit else chosen


# -- building (the model is only imported here) ------------------------------------------------------
def build_one(conv: dict[str, Any], model: dict[str, Any], client: Any, embedder: Any) -> dict[str, Any]:
    """Build one conversation into a fresh store and read back every stored memory."""
    import asyncio

    from agents.building import BuildState, Turn
    from agents.mbs import build_memories
    from memory.config import load_settings
    from memory.engine import MemoryEngine
    from memory.models import Source

    turns = [Turn(role=t["role"], content=t["content"]) for t in conv["turns"]]
    state = BuildState(turns, USER_ID, source=Source.SME, domain=DOMAIN, conversation_id=conv["id"])
    crash = ""
    with temp_home(f"truth-{conv['id']}") as home:
        engine = MemoryEngine.open(load_settings(home=str(home), model=dict(model)), embedder=embedder)
        try:
            start = time.perf_counter()
            try:
                asyncio.run(build_memories(engine, client, state))
            except Exception:  # a benchmark keeps going; the traceback is in the results
                crash = traceback.format_exc(limit=5)
            wall = time.perf_counter() - start
            memories = [
                {
                    "id": r.id,
                    "text": r.text,
                    "type": r.type.value,
                    "status": r.status.value,
                    "user_id": r.user_id,
                    "veracity": round(r.veracity, 3),
                }
                for r in engine.list()
            ]
        finally:
            engine.close()
    report = state.report()
    return {
        "id": conv["id"],
        "split": conv["split"],
        "style": conv["style"],
        "wall_s": round(wall, 2),
        "usage": report["usage"]["total"],
        "usage_agents": report["usage"]["agents"],
        "rejected": report.get("rejected"),
        "errors": [*report["errors"], *([crash] if crash else [])],
        "outcomes": report["outcomes"],
        "stored": memories,
    }


def run_builds(args: argparse.Namespace, convs: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    from bench_tropicamide import start_model

    from agents.providers import release_local_models

    model, client, embedder, info = start_model(args)
    say(f"{len(convs)} conversation(s)")
    runs: list[dict[str, Any]] = []
    try:
        for n, conv in enumerate(convs, 1):
            run = build_one(conv, model, client, embedder)
            run["score"] = score_conversation(conv, run["stored"], run.get("rejected"))
            runs.append(run)
            s = run["score"]
            say(
                f"  [{n}/{len(convs)}] {conv['id']} {conv['style']:<16} committed {s['committed']} "
                f"(shared {s['committed_shared']}), correct {s['correct']}, false {s['false']}, "
                f"recall {'yes' if s['recall'] else 'no'}, {run['usage'].get('calls', 0)} calls, {run['wall_s']} s"
            )
    finally:
        release_local_models()
    return runs, info


def rescore(runs: list[dict[str, Any]], convs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_id = {c["id"]: c for c in convs}
    for run in runs:
        conv = by_id[run["id"]]
        run["split"], run["style"] = conv["split"], conv["style"]
        run["score"] = score_conversation(conv, run["stored"], run.get("rejected"))
    return runs


# -- output -----------------------------------------------------------------------------------------
def _cell(value: Any, pct: bool = False) -> Any:
    if value is None:
        return "-"
    return f"{value * 100:.1f}%" if pct else value


def print_summary(summary: dict[str, dict[str, Any]]) -> None:
    names = [k for k in (*SPLITS, "all") if summary[k].get("conversations")]
    rows_spec = [
        ("conversations", "conversations", False),
        ("committed memories (shared)", None, False),
        ("precision shared", "precision_shared", True),
        ("precision all", "precision_all", True),
        ("recall (any committed)", "recall", True),
        ("recall (shared)", "recall_shared", True),
        ("false-claim memories (shared)", None, False),
        ("pending review", "pending_review", False),
        ("refused candidates (correct / false)", None, False),
        ("LLM calls/conv mean (max)", None, False),
        ("tokens/conv mean", "tokens_mean", False),
        ("wall s/conv median (p95)", None, False),
        ("agent errors (state.errors)", "errors", False),
    ]
    table = []
    for label, key, pct in rows_spec:
        cells: list[Any] = []
        for name in names:
            s = summary[name]
            if key:
                cells.append(_cell(s[key], pct))
            elif label.startswith("committed"):
                cells.append(f"{s['committed']} ({s['committed_shared']})")
            elif label.startswith("false"):
                cells.append(f"{s['false_claim_memories']} ({s['false_claim_memories_shared']})")
            elif label.startswith("refused"):
                refused = s["rejected_candidates"]
                cells.append("-" if refused is None else f"{refused} ({s['rejected_correct']} / {s['rejected_false']})")
            elif label.startswith("LLM"):
                cells.append(f"{s['calls_mean']:g} ({s['calls_max']})")
            else:
                cells.append(f"{_cell(s['wall_s_median'])} ({_cell(s['wall_s_p95'])})")
        table.append([label, *cells])
    print_table(["metric", *names], table)


def print_memories(runs: Sequence[dict[str, Any]]) -> None:
    say("\ncommitted memories (verdict | type | status | text); verdicts: ok, FALSE, unsupported:")
    for run in runs:
        say(f"  {run['id']} ({run['style']}, {run['split']}):")
        committed = [m for m in run["score"]["memories"] if m["committed"]]
        for m in committed:
            verdict = "FALSE" if m["false"] else "ok" if m["supported"] else "unsupported"
            say(f"    {verdict:<11} | {m['type']:<13} | {m['status']:<14} | {m['text']}")
        if not committed:
            say("    (none)")
        for r in run["score"].get("refused", []):
            verdict = "refused/F" if r["false"] else "refused/ok" if r["correct"] else "refused"
            say(f"    {verdict:<11} | {r['type']:<13} | {r.get('reason', '')!s:<14} | {r['text']}")
        for e in run.get("errors", []):
            say(f"    error: {e.strip().splitlines()[-1] if e.strip() else e}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=["dev", "test", "all"], default="dev", help="conversations to build")
    parser.add_argument("--limit", type=int, help="build only the first N selected conversations")
    parser.add_argument("--ids", help="comma-separated conversation ids (overrides --split)")
    parser.add_argument("--threads", type=int, help="llama.cpp threads (else MARK_THREADS, default 1)")
    parser.add_argument("--model-path", help="GGUF to load (else MARK_MODEL_PATH or the packaged model)")
    parser.add_argument("--data", type=Path, default=DATA, help="conversations file (JSONL)")
    parser.add_argument("--score", type=Path, metavar="FILE", help="re-score a saved results file, no model")
    args = parser.parse_args()
    convs = load_conversations(args.data)
    if args.score:
        saved = json.loads(args.score.read_text(encoding="utf-8"))
        runs = rescore(saved["runs"], convs)
        summary = summarise_splits(runs)
        say(f"re-scored {len(runs)} conversation(s) from {args.score}")
        print_summary(summary)
        print_memories(runs)
        payload = {**saved, "rescored_from": str(args.score), "summary": summary, "runs": runs}
        say(f"\nresults: {write_results('truth_rescored', payload)}")
        return 0
    from bench_tropicamide import command_line

    say(f"command: {command_line()}")
    chosen = select(convs, args.split, args.ids, args.limit)
    runs, model_info = run_builds(args, chosen)
    summary = summarise_splits(runs)
    say("\n== memory truth ==")
    print_summary(summary)
    print_memories(runs)
    payload = {
        "command": command_line(),
        "machine": machine_info(),
        "model": model_info,
        "data": str(args.data.relative_to(ROOT) if args.data.is_relative_to(ROOT) else args.data),
        "selection": {"split": args.split, "ids": args.ids, "limit": args.limit},
        "summary": summary,
        "runs": runs,
    }
    say(f"\nresults: {write_results('truth', payload)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
