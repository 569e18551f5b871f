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
Conversations truth-001..truth-020 are the ``dev`` split (for tuning), the rest of truth-001..truth-072
``test`` (reported); truth-073..truth-107 are the ``fresh`` split, written after the gate rules were tuned
and never used to tune them. Truth-108..truth-142 are the ``fresh2`` split, written after the gate changes of
session 6 and never used to tune anything. Truth-143..truth-177 are the ``fresh3`` split, written after the
session-6 gate changes (when truth-073..107 and 108..142 had already been read) and used once.
Truth-178..truth-212 are the ``fresh4`` split, written after the session-7 gate change and used once (then
read while writing the rejected-answer-copy rule).
Truth-213..truth-247 are the ``fresh5`` split, written after the session-7 rejected-answer-copy rule and
used once (then read while writing the session-8 rules). Truth-248..truth-282 are the ``fresh6`` split,
written after the session-8 letter-verdict and opening "Y, not X" rules and used once (then read while
writing the says-nothing rule). Truth-283..truth-317 are the ``fresh7`` split, written after that rule and
used once (then read while writing the session-9 option-word and closing-pick rules). Truth-318..truth-352
are the ``fresh8`` split, written after those rules and used once (then read while writing the session-9
stage-letter, should've-been and rejected-answer-in-other-words rules). Truth-353..truth-387 are the
``fresh9`` split, written after those rules and used once (then read while writing the stricter option-word
match and the whole-sentence copy rule). Truth-388..truth-422 are the ``fresh10`` split, written after those
and used once (then read while writing the negative-question rule). Truth-423..truth-457 are the ``fresh11``
split, written after that rule and used once (then read while writing the session-10 rules: a denial of the
expert's assertion, a swapped subject, a misreported question or agreement). Truth-458..truth-492 are the
``fresh12`` split, written after those rules and used once (then read while writing the pronoun,
chatbot-words, pieced-claim, answer-without-case and quiz-statement rules); unlike the earlier splits, its
author listed every statement the expert made as an asserted fact, not only the main ones.
Truth-493..truth-527 are the ``fresh13`` split, written the same way after those rules and used once (then
read while writing the mixed-subjects rule and, with a replay over every earlier split, the one-sentence
pieced-claim rule). Truth-528..truth-562 are the ``fresh14`` split, written the same way after those rules
and used once (then read while writing the two-letter option, chatbot's-pick, user-report, chatbot-copy and
renamed-subject rules). Truth-563..truth-597 are the ``fresh15`` split, written the same way after those
rules (its author was asked for varied letter forms, short forms of the key and a chatbot asking "why not
X?", and to key the main fact to the question's words) and used once (then read while writing the letter
forms "D, mate", "it's the B one", "the third one"). Truth-598..truth-632 are the ``fresh16`` split, written
the same way after those and used once (then read while writing the long-question cut and the shorthand
rules). Truth-633..truth-667 are the ``fresh17`` split, written the same way after those and used once
(then read while writing the swapped-subject, quoted-question, letter-form and cut-off rules).
Truth-668..truth-702 are the ``fresh18`` split, written the same way after those and used once (then read
while writing the session-13 rules: a bare "not right", negative questions, letters left in a memory).
Truth-703..truth-737 are the ``fresh19`` split, written the same way after those and used once (then read
while writing the initialism, dash, lower-case letter, option-place and dropped-qualifier rules).
Truth-738..truth-772 are the ``fresh20`` split, written the same way after those (its author was asked for
abbreviated option names, dashes, qualifiers such as "in women", places such as "(2)" and negative
questions) and used once (then read while writing the session-14 rules: a short answer introduced by its
question, "rectum" naming "Rectal"). Truth-773..truth-807 are the ``fresh21`` split, written the same way
after those and used once (then read while writing the letter verdict "no — d" and the drawn-premise rule; its
keywords were made consistent with the scorer's tests after its run, which was then re-scored).
Truth-808..truth-842 are the ``fresh22`` split, written the same way after those and used once (then read
while writing the temperature-letter, capital-A and degree-word rules). Truth-843..truth-856 are the
``fresh23`` split, 14 conversations (two per style) written the same way after those, away from the
held-out scenario's rows too, and used once (then read while writing session 15's rule on personal
memories). Truth-857..truth-891 are the ``fresh24`` split, written the same way after those and used
once (then read while writing the swapped-option, splice and asked-denial rules). Truth-892..truth-926 are
the ``fresh25`` split, written the same way after those and used once (then read while writing the
set-aside option and answer-form rules). Truth-927..truth-940 are the ``fresh26`` split, 14 conversations
(two per style) written the same way after those and used once (the final gate's unseen run).
Truth-941..truth-975 are the ``fresh27`` split, written the same way after those and used once (then
read while writing session 17's rules). Truth-976..truth-1010 are the ``fresh28`` split, written the same
way after fresh27's run started, used once to measure session 16's dash rule (then read while writing
session 17's rules). Truth-1011..truth-1045 are the ``fresh29`` split, written the same way after session
17's rules and used once. Truth-1046..truth-1080 are the ``fresh30`` split, written the same way after
session 18's rules and used once. Truth-1081..truth-1115 are the ``fresh31`` split, written the same way after
session 19's rules and used once. Truth-1116..truth-1150 are the ``fresh32`` split,
written the same way after session 20's rules were begun (by a writer told to avoid every row of this file
and of the bundled scenarios, whose brief named example letter-only forms, among them those session 20's
letter rule was written for) and used once (then read while writing session 21's rules). Truth-1151..truth-1185
are the ``fresh33`` split, written blind after session 21's rules by a writer told to avoid every row of
this file and of the bundled scenarios and given no example wording for any style, and used once (then read
while writing the rules of 1788331). Truth-1186..truth-1220 are the ``fresh34`` split, written blind the same
way after those rules.

Each conversation is built with ``agents.team.build_memories`` (SME source, domain medicine) into a
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
import json
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import ROOT, machine_info, print_table, say, temp_home, write_results
from _truth_score import (  # noqa: F401  (re-exported for the tests)
    COMMITTED,
    PENDING,
    QUESTION_TYPE,
    SHARED_TYPE,
    SPLITS,
    about_question,
    asserts,
    fact_keywords,
    fold,
    matches,
    score_conversation,
    score_memory,
    stem_words,
    summarise,
    summarise_splits,
    supports,
)

DATA = ROOT / "benchmarks" / "data" / "truth_conversations.jsonl"
USER_ID = "sme-1"
DOMAIN = "medicine"


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
    from agents.team import build_memories
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
    report = state.report().as_json()
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
    parser.add_argument(
        "--split",
        choices=[*SPLITS, "all"],
        default="dev",
        help="conversations to build",
    )
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
