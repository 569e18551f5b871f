"""Replay the truth gate over every memory candidate recorded in ``docs/runs/truth-fresh*.txt`` (no model).

Run:  .venv/bin/python benchmarks/replay_gate.py [--runs GLOB] [--out FILE] [--against FILE]
      .venv/bin/python benchmarks/replay_gate.py --lifecycle RUN_DIR --scenario FILE [--out FILE] [--against FILE]

Each recorded run of ``bench_truth.py`` lists, per conversation, every committed memory and every refused
candidate with its type. The replay gives each of those texts to the gate as it is now
(:func:`agents.truth.judge`, the same pure function the memory-building team calls) with the conversation
from ``data/truth_conversations.jsonl``, and writes one verdict per candidate to ``--out`` (JSON lines).
With ``--against`` (the output of an earlier replay, e.g. made on another commit with
``PYTHONPATH=<other checkout>``) it prints every candidate whose verdict changed, or whose conversation's
accepted and rejected options did (they decide what the spelt-out fallback writes), so a gate change is
checked against everything the model has ever proposed before it is measured on an unseen split.

With ``--lifecycle RUN_DIR --scenario FILE`` it replays a ``mark lifecycle run`` instead: every candidate
the gate judged in stage 2 (its audit log: refused ones with their reason, committed ones with their
text), each with that record's correction transcript (``progress.jsonl``) and reference answer, so a gate
changed after the run can be checked against what the run stored.

The replay is an approximation of the run, good for comparing two gates, not for scoring one: the run's
texts are recorded after the gate's rewriting (letters spelt out, a short answer introduced by its
question), the extractor's category is not recorded (every candidate is given ``preference``, so whether
a user-question memory is about the user is decided from its words), and a candidate counts as worded
as a mistake when its words say so.
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from _common import ROOT

DATA = Path(__file__).resolve().parent / "data" / "truth_conversations.jsonl"
RUNS = "docs/runs/truth-fresh*.txt"
_HEADER = re.compile(r"^  (truth-\d+) \(")
_LINE = re.compile(r"^    (\S+)\s*\| (\w+)\s*\| (\S+)\s*\| (.*)$")
_MISTAKE_WORDING = re.compile(r"\b(?:avoid|mistake)\b", re.IGNORECASE)


def recorded(paths: list[Path]) -> list[dict[str, str]]:
    """Every memory line of the recorded runs: conversation id, run file, recorded verdict, type, text."""
    rows: list[dict[str, str]] = []
    for path in paths:
        conv = ""
        for line in path.read_text(encoding="utf-8").splitlines():
            head = _HEADER.match(line)
            if head:
                conv = head.group(1)
                continue
            row = _LINE.match(line)
            if conv and row and row.group(2) in {"residual", "user_question", "llm_response"}:
                verdict, kind, status, text = row.groups()
                rows.append(
                    {
                        "id": conv,
                        "run": path.name,
                        "recorded": verdict,
                        "status": status,
                        "type": kind,
                        "text": text.strip(),
                    }
                )
    return rows


def lifecycle(run_dir: Path, scenario_file: Path) -> tuple[list[dict[str, str]], dict[str, dict[str, Any]]]:
    """The candidates a lifecycle run's stage 2 gave the gate, and each correction's turns and reference."""
    from memory.audit_events import EventKind, read_event
    from memory.crypto import TextCipher
    from scenarios.schema import load_scenario

    scenario = load_scenario(scenario_file)
    conversations: dict[str, dict[str, Any]] = {}
    for line in (run_dir / "progress.jsonl").read_text(encoding="utf-8").splitlines():
        done = json.loads(line)
        if done.get("stage") == 2 and "transcript" in done.get("result", {}):
            record = scenario.record(done["unit"])
            conversations[f"{scenario.name}:{record.id}"] = {
                "turns": done["result"]["transcript"],
                "reference": record.reference(),
            }
    audit = run_dir / "store" / "audit.sqlite3"
    db = sqlite3.connect(f"file:{audit}?mode=ro", uri=True)  # read-only: the run may still be writing
    query = "SELECT seq, memory_id, kind, at, rev, actor, detail, committed FROM events WHERE committed = 1"
    rows: list[dict[str, str]] = []
    for row in db.execute(query + " ORDER BY seq"):
        event = read_event(row, TextCipher(), str(audit))
        if event.kind is EventKind.REJECT and event.actor == "truth-gate":
            said = event.detail
            verdict, status = said["reason"].split(":")[0], "refused"
        elif event.kind is EventKind.CREATE and "gate" in event.detail:
            said, verdict = event.detail["record"], "ok"
            said = {**said, "conversation_id": said["provenance"]["conversation_id"]}
            status = said["status"]
        else:
            continue
        if said["conversation_id"] in conversations:
            rows.append(
                {
                    "id": said["conversation_id"],
                    "run": run_dir.name,
                    "recorded": verdict,
                    "status": status,
                    "type": said["type"],
                    "text": said["text"],
                }
            )
    db.close()
    return rows, conversations


def replay(rows: list[dict[str, str]], conversations: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The gate's verdict now on each recorded candidate."""
    from agents.building import BuildState, Candidate, Turn
    from agents.truth import evidence, judge
    from memory.models import Category, MemoryType, Source
    from memory.option_gate import known_answers

    facts_of: dict[str, Any] = {}
    out: list[dict[str, Any]] = []
    for row in rows:
        conv = conversations.get(row["id"])
        if conv is None:
            continue
        if row["id"] not in facts_of:
            turns = [Turn(role=t["role"], content=t["content"]) for t in conv["turns"]]
            state = BuildState(turns, "sme-1", source=Source.SME, domain="medicine", evidence=conv.get("reference", ""))
            facts_of[row["id"]] = evidence(state)
        candidate = Candidate(
            type=MemoryType(row["type"]),
            text=row["text"],
            category=Category.PREFERENCE,
            mistake=bool(_MISTAKE_WORDING.search(row["text"])),
        )
        verdict = judge(Source.SME, facts_of[row["id"]], candidate)
        known = known_answers(facts_of[row["id"]])  # what the spelt-out fallback writes depends on it
        out.append(
            {
                **row,
                "ok": verdict.ok,
                "reason": verdict.reason.value,
                "detail": verdict.detail,
                "accepted": sorted(known.accepted),
                "rejected": sorted(known.rejected),
            }
        )
    return out


def changed(now: list[dict[str, Any]], before: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Pairs (before, now) of the same recorded candidate whose verdict, or its conversation's known answers, differ.

    A replay written before the known answers were kept compares on the verdict alone.
    """

    def key(r: dict[str, Any]) -> tuple[str, str, str, str]:
        return (r["run"], r["id"], r["type"], r["text"])

    def seen(r: dict[str, Any], answers: bool) -> tuple[Any, ...]:
        return (r["ok"], r["reason"], r.get("accepted"), r.get("rejected")) if answers else (r["ok"], r["reason"])

    earlier = {key(r): r for r in before}
    return [
        (earlier[key(r)], r)
        for r in now
        if key(r) in earlier
        and seen(earlier[key(r)], "accepted" in earlier[key(r)]) != seen(r, "accepted" in earlier[key(r)])
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default=RUNS, help="glob of recorded bench_truth outputs, from the repo root")
    parser.add_argument("--out", type=Path, help="write the verdicts here (JSON lines)")
    parser.add_argument("--against", type=Path, help="an earlier replay's output: print what changed")
    parser.add_argument("--lifecycle", type=Path, help="a lifecycle run's --out folder: replay its stage 2")
    parser.add_argument("--scenario", type=Path, help="with --lifecycle: the scenario file it ran")
    args = parser.parse_args(argv)
    if args.lifecycle:
        if not args.scenario:
            parser.error("--lifecycle needs --scenario (the scenario file the run used)")
        rows, conversations = lifecycle(args.lifecycle, args.scenario)
    else:
        conversations = {c["id"]: c for c in map(json.loads, DATA.read_text(encoding="utf-8").splitlines())}
        rows = recorded(sorted(ROOT.glob(args.runs)))
    results = replay(rows, conversations)
    tally = Counter("ok" if r["ok"] else r["reason"] for r in results)
    print(
        f"{len(results)} recorded candidates from {len({r['run'] for r in results})} runs: "
        + ", ".join(f"{k} {v}" for k, v in tally.most_common())
    )
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in results), encoding="utf-8")
    if args.against:
        before = [json.loads(line) for line in args.against.read_text(encoding="utf-8").splitlines()]
        diffs = changed(results, before)
        print(f"{len(diffs)} verdict(s) changed")
        for old, new in diffs:
            was = "ok" if old["ok"] else old["reason"]
            now = "ok" if new["ok"] else new["reason"]
            if was == now:  # the same verdict: the conversation's known answers moved
                was = f"accepted {old['accepted']} rejected {old['rejected']}"
                now = f"accepted {new['accepted']} rejected {new['rejected']}"
            print(f"  {new['id']} {new['type']}: {was} -> {now} | {new['text'][:160]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
