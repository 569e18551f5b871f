"""The medmcqa-holdout scenario: size, dev / test split, re-lettered paraphrases, no row shared with tuning."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from scenarios.schema import Role, Scenario, Split, bundled, load_scenario

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "make_medmcqa_holdout.py"
RULES = json.loads((ROOT / "scripts" / "data" / "medmcqa_holdout_rules.json").read_text(encoding="utf-8"))
MEDMCQA = ROOT.parent / "shared" / "data" / "medmcqa" / "medmcqa_dev_single_choice.jsonl"
TRUTH = ROOT / "benchmarks" / "data" / "truth_conversations.jsonl"
HOLDOUT = load_scenario(bundled()["medmcqa-holdout"])
SECOND = load_scenario(bundled()["medmcqa-holdout2"])
BOTH = pytest.mark.parametrize("scenario", [HOLDOUT, SECOND], ids=lambda s: s.name)


def _normal(text: str) -> str:
    return " ".join(text.split()).lower()


def test_size_and_split() -> None:
    splits = [r.split for r in HOLDOUT.records]
    assert len(HOLDOUT.records) >= 150
    assert splits.count(Split.DEV) == RULES["dev"] == 50 and splits.count(Split.TEST) == RULES["test"] == 150
    first_test = splits.index(Split.TEST)
    assert all(s is Split.DEV for s in splits[:first_test]) and all(s is Split.TEST for s in splits[first_test:])
    assert HOLDOUT.stages == [1, 2, 3] and HOLDOUT.paraphrase_user == "u-ravi"
    assert {u.id: u.role for u in HOLDOUT.users} == {"sme-1": Role.SME, "u-ravi": Role.USER, "u-mei": Role.USER}


def test_the_second_test_set_is_test_only_and_comes_after_the_first() -> None:
    assert [r.split for r in SECOND.records] == [Split.TEST] * RULES["second"]["test"] == [Split.TEST] * 150
    assert RULES["second"]["dev"] == 0 and SECOND.stages == [1, 2, 3] and SECOND.paraphrase_user == "u-ravi"
    assert {u.id: u.role for u in SECOND.users} == {u.id: u.role for u in HOLDOUT.users}
    assert [s.id for s in SECOND.sessions] == ["u-mei-test"]
    first = {_normal(r.question) for r in HOLDOUT.records}
    assert not first & {_normal(r.question) for r in SECOND.records}


@BOTH
def test_records_are_corrected_by_content_and_paraphrased_with_a_moved_key(scenario: Scenario) -> None:
    for record in scenario.records:
        answer = record.options[record.key]
        assert record.correction is not None and record.correction.user == "sme-1"
        assert record.correction.script == [
            "That is not right.",
            f"The correct answer is {record.key}) {answer}.",
            "ACCEPT",
        ]
        assert len(record.paraphrases) == 1 and record.paraphrases[0].order is not None
        assert record.key_for(0) != record.key and record.shown_options(0)[record.key_for(0)] == answer
        assert _normal(record.paraphrases[0].text) != _normal(record.question)
        assert 15 <= len(record.question) <= 200 and len(set(map(_normal, record.options.values()))) == 4
        assert not record.explanation  # MedMCQA's file has no explanations


@BOTH
def test_no_row_is_shared_with_the_other_scenarios_or_the_truth_benchmark(scenario: Scenario) -> None:
    others = [load_scenario(path) for name, path in bundled().items() if name != scenario.name]
    questions = {_normal(r.question) for s in others for r in s.records}
    ids = {r.id for s in others for r in s.records}
    assert not questions & {_normal(r.question) for r in scenario.records}
    assert not ids & {r.id for r in scenario.records}
    texts = " ".join(p.read_text(encoding="utf-8").lower() for n, p in bundled().items() if n != scenario.name)
    if TRUTH.is_file():
        rows = [json.loads(line) for line in TRUTH.read_text(encoding="utf-8").splitlines() if line.strip()]
        texts += " ".join(str(row.get("realidx", "")).lower() for row in rows)
        questions |= {_normal(str(row.get("question", ""))) for row in rows}
    prefixes = {r.id.removeprefix("mmcqa-") for r in scenario.records}
    assert not {p for p in prefixes if re.search(rf"\b{p}\b", texts)}
    assert not any(_normal(r.question) in q for r in scenario.records for q in questions)


def test_sessions_ask_paraphrases_of_both_splits() -> None:
    asked = [HOLDOUT.record(step.ask) for s in HOLDOUT.sessions for step in s.steps if step.ask]
    assert {r.split for r in asked} == {Split.DEV, Split.TEST}
    assert {s.user for s in HOLDOUT.sessions} == {"u-mei"}


@pytest.mark.skipif(not MEDMCQA.is_file(), reason=f"MedMCQA data not found at {MEDMCQA} (shared/data is absent)")
def test_script_reproduces_the_committed_scenario(tmp_path: Path) -> None:
    out = tmp_path / "medmcqa-holdout.yaml"
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "(50 dev, 150 test)" in done.stdout
    assert out.read_bytes() == bundled()["medmcqa-holdout"].read_bytes()
    second = tmp_path / "medmcqa-holdout2.yaml"
    argv = [sys.executable, str(SCRIPT), "--second", "--out", str(second)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "(0 dev, 150 test)" in done.stdout
    assert second.read_bytes() == bundled()["medmcqa-holdout2"].read_bytes()


@pytest.mark.skipif(not MEDMCQA.is_file(), reason=f"MedMCQA data not found at {MEDMCQA} (shared/data is absent)")
@BOTH
def test_holdout_rows_match_the_data_and_none_is_used_elsewhere(scenario: Scenario) -> None:
    rows = {}
    for line in MEDMCQA.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        rows[_normal(row["question"])] = row
    used_stems = set()
    for name, path in bundled().items():
        if name != scenario.name:
            used_stems |= {
                _normal(str(r["question"])) for r in yaml.safe_load(path.read_text(encoding="utf-8"))["records"]
            }
    used = {rows[q]["realidx"] for q in used_stems if q in rows}
    for record in scenario.records:
        row = rows[_normal(record.question)]
        assert record.id == f"mmcqa-{row['realidx'][:8]}" and record.key == row["answer_idx"]
        assert row["realidx"] not in used


@pytest.mark.skipif(not MEDMCQA.is_file(), reason=f"MedMCQA data not found at {MEDMCQA} (shared/data is absent)")
def test_the_second_set_is_drawn_after_the_first_in_hash_order() -> None:
    realidx = {}
    for line in MEDMCQA.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        realidx[_normal(row["question"])] = row["realidx"]

    def digests(scenario: Scenario) -> list[str]:
        return [hashlib.sha256(realidx[_normal(r.question)].encode()).hexdigest() for r in scenario.records]

    first, second = digests(HOLDOUT), digests(SECOND)
    assert first == sorted(first) and second == sorted(second) and max(first) < min(second)
