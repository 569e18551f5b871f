"""benchmarks/replay_gate.py: recorded candidates are read back and re-judged by the gate as it is now."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from types import ModuleType

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"

RUN = """\
command: bench_truth.py --split freshX
  [1/1] truth-001 letter_only      committed 1 (shared 1), correct 1, false 0, recall yes, 4 calls, 1.0 s
committed memories (verdict | type | status | text); verdicts: ok, FALSE, unsupported:
  truth-001 (letter_only, dev):
    ok          | residual      | active         | Tropicamide eye drops are used at 0.5%-1%.
    refused/F   | residual      | rejected_answer | Tropicamide is used at 0.01%, as the chatbot said | twice.
    refused     | llm_response  | copied_example | For the drug of choice for absence seizures, it is ethosuximide.
  truth-999 (letter_only, dev):
    ok          | residual      | active         | A conversation the data does not hold is skipped.
"""


def replay_module() -> ModuleType:
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    return importlib.import_module("replay_gate")


def test_recorded_lines_are_read_with_their_conversation_type_and_whole_text(tmp_path: Path) -> None:
    run = tmp_path / "truth-freshX.txt"
    run.write_text(RUN, encoding="utf-8")
    rows = replay_module().recorded([run])
    assert [(r["id"], r["recorded"], r["type"], r["status"]) for r in rows] == [
        ("truth-001", "ok", "residual", "active"),
        ("truth-001", "refused/F", "residual", "rejected_answer"),
        ("truth-001", "refused", "llm_response", "copied_example"),
        ("truth-999", "ok", "residual", "active"),
    ]
    assert rows[1]["text"] == "Tropicamide is used at 0.01%, as the chatbot said | twice."  # a bar inside the text


def test_the_gate_judges_each_candidate_and_a_changed_verdict_is_reported(tmp_path: Path) -> None:
    replay = replay_module()
    data = {
        json.loads(line)["id"]: json.loads(line)
        for line in (BENCHMARKS / "data" / "truth_conversations.jsonl").read_text(encoding="utf-8").splitlines()[:1]
    }
    run = tmp_path / "truth-freshX.txt"
    run.write_text(RUN, encoding="utf-8")
    now = replay.replay(replay.recorded([run]), data)
    assert len(now) == 3  # truth-999 is not in the data given
    assert now[2]["ok"] is False and now[2]["reason"] == "copied_example"  # the prompt's example
    before = [{**now[0], "ok": not now[0]["ok"], "reason": "unsaid"}, *now[1:]]
    assert replay.changed(now, before) == [(before[0], now[0])]
    assert replay.changed(now, now) == []
    # the same verdict on a conversation whose accepted option moved is a change too (the fallback writes it)
    assert now[0]["accepted"] and now[0]["rejected"]
    moved = [{**now[0], "accepted": []}, *now[1:]]
    assert replay.changed(now, moved) == [(moved[0], now[0])]
    # an older replay without the known answers compares on the verdict alone
    older = [{k: v for k, v in r.items() if k not in {"accepted", "rejected"}} for r in now]
    assert replay.changed(now, older) == []


def test_a_lifecycle_run_is_replayed_from_its_audit_log_with_each_correction_s_transcript(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from memory.audit import AuditLog
    from memory.audit_events import EventKind

    replay = replay_module()
    scenario = Path(__file__).resolve().parents[1] / "scenarios" / "data" / "tropicamide.yaml"
    transcript = [
        {"role": "user", "content": "Concentration of tropicamide:\nA) 0.01\nB) 0.02\nC) 0.03\nD) 0.04"},
        {"role": "assistant", "content": "B) 0.02, the usual strength."},
        {"role": "user", "content": "No. Tropicamide drops are 0.5% to 1%, so it is A) 0.01."},
        {"role": "assistant", "content": "Understood, A) 0.01."},
    ]
    progress = [
        {"stage": 1, "unit": "tropicamide", "result": {"answer": "B"}},  # no transcript: not a correction
        {"stage": 2, "unit": "tropicamide", "result": {"transcript": transcript}},
    ]
    (tmp_path / "progress.jsonl").write_text("".join(json.dumps(p) + "\n" for p in progress), encoding="utf-8")
    audit = AuditLog(tmp_path / "store" / "audit.sqlite3")
    at, here = datetime(2026, 11, 29, tzinfo=UTC), "tropicamide:tropicamide"
    refused = {"conversation_id": here, "reason": "copied_example: the prompt's example", "type": "llm_response"}
    kept = {"provenance": {"conversation_id": here}, "status": "active", "type": "residual"}
    seqs = [
        audit.append("m1", EventKind.REJECT, at, 0, "truth-gate", {**refused, "text": "Ethosuximide treats absence."}),
        audit.append(
            "m2",
            EventKind.CREATE,
            at,
            1,
            "committer",
            {
                "gate": "supported",
                "record": {
                    **kept,
                    "text": ("Tropicamide eye drops are used at 0.5% to 1%, which is 0.01 as a decimal."),
                },
            },
        ),
        audit.append(
            "m3",
            EventKind.REJECT,
            at,
            0,
            "truth-gate",
            {**refused, "conversation_id": "tropicamide:other", "text": "Not a conversation of this run."},
        ),
    ]
    audit.commit(seqs)
    audit.append("m4", EventKind.REJECT, at, 0, "truth-gate", {**refused, "text": "An uncommitted leftover."})
    audit.close()
    rows, conversations = replay.lifecycle(tmp_path, scenario)
    assert [(r["id"], r["recorded"], r["status"], r["type"]) for r in rows] == [
        (here, "copied_example", "refused", "llm_response"),
        (here, "ok", "active", "residual"),
    ]
    assert conversations[here]["reference"].startswith("The answer is A) 0.01.")
    now = replay.replay(rows, conversations)
    assert [(r["ok"], r["reason"]) for r in now] == [(False, "copied_example"), (True, "supported")]
