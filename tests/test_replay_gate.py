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
