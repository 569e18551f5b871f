"""The bundled scenario files validate and are internally consistent; schema errors name file and line."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from scenarios.schema import Role, Scenario, ScenarioError, bundled, load_scenario

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "make_medmcqa_scenario.py"
MEDMCQA = ROOT.parent / "shared" / "data" / "medmcqa" / "medmcqa_dev_single_choice.jsonl"
SCENARIOS = bundled()


def _load(name: str) -> Scenario:
    return load_scenario(SCENARIOS[name])


def _script_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_medmcqa_scenario", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_expected_scenarios_are_bundled() -> None:
    assert {"tropicamide", "preference-change", "multi-user", "medmcqa-sme", "medmcqa-holdout"} <= set(SCENARIOS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_bundled_scenario_validates(name: str) -> None:
    scenario = _load(name)
    assert scenario.name == name
    assert scenario.users


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_correction_scripts_end_with_accept_and_name_the_key(name: str) -> None:
    scenario = _load(name)
    for record in scenario.records:
        if 2 in scenario.stages:
            assert record.correction is not None, f"{name}/{record.id}: stage 2 needs a correction script"
        if record.correction is None:
            continue
        lines = record.correction.script
        assert lines[-1].strip() == "ACCEPT", f"{name}/{record.id}: the script must end with ACCEPT"
        assert any(f"{record.key})" in line for line in lines[:-1]), f"{name}/{record.id}: key letter not named"
        assert scenario.user(record.correction.user).role is Role.SME, f"{name}/{record.id}: corrector is no SME"


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_session_paraphrases_and_records_exist(name: str) -> None:
    scenario = _load(name)
    for session in scenario.sessions:
        for step in session.steps:
            if step.ask is None:
                assert step.paraphrase is None and step.expect_memory is None and step.forbid_memory is None
                continue
            record = scenario.record(step.ask)
            if step.paraphrase is not None:
                assert step.paraphrase < len(record.paraphrases), f"{name}/{session.id}: no paraphrase"
                assert record.prompt(step.paraphrase).startswith(record.paraphrases[step.paraphrase].text)


def test_tropicamide_is_the_papers_example() -> None:
    scenario = _load("tropicamide")
    record = scenario.record("tropicamide")
    assert record.question == "Concentration of tropicamide:"
    assert record.options == {"A": "0.01", "B": "0.02", "C": "0.03", "D": "0.04"}
    assert record.key == "A"
    assert len(record.paraphrases) == 2
    assert {u.id: u.role for u in scenario.users} == {"sme-1": Role.SME, "alice": Role.USER, "bob": Role.USER}
    assert scenario.stages == [1, 2, 3, 4]


def test_preference_change_checks_the_newer_preference() -> None:
    scenario = _load("preference-change")
    remembered = [s.remember for session in scenario.sessions for s in session.steps if s.remember]
    assert "milligrams" in remembered[0] and "micrograms" in remembered[-1]
    assert "milligrams" not in remembered[-1], "the newer preference must not contain the forbidden word"
    last = [s for s in scenario.sessions[-1].steps if s.ask]
    assert last and all(s.expect_memory == "micrograms" and s.forbid_memory == "milligrams" for s in last)


def test_multi_user_shares_domain_memory_but_not_personal_facts() -> None:
    scenario = _load("multi-user")
    ana = next(s for s in scenario.sessions if s.user == "dr-ana")
    ben = next(s for s in scenario.sessions if s.user == "ben")
    assert scenario.sessions.index(ana) < scenario.sessions.index(ben)
    assert any(s.remember == "I am allergic to latex gloves" for s in ana.steps)
    asks = [s for s in ben.steps if s.ask]
    expected = next(s for s in asks if s.expect_memory)
    correction = scenario.record(expected.ask).correction
    assert correction is not None and correction.user == "dr-ana"
    assert any(expected.expect_memory in line for line in correction.script)
    assert any(s.forbid_memory == "latex" for s in asks)


def test_medmcqa_scenario_size_and_credit() -> None:
    scenario = _load("medmcqa-sme")
    assert len(scenario.records) >= 40
    assert "MedMCQA" in scenario.source and "MIT" in scenario.source
    assert "medagents-benchmark" in scenario.source
    assert {u.id for u in scenario.users} == {"sme-1", "u-ravi", "u-mei"}
    assert {s.user for s in scenario.sessions} == {"u-ravi", "u-mei"}
    header = SCENARIOS["medmcqa-sme"].read_text(encoding="utf-8").splitlines()[0:5]
    assert any("MedMCQA" in line and "MIT" in line for line in header)
    for record in scenario.records:
        assert len(record.question) < 200 and record.paraphrases
        # every paraphrase re-letters the options so that the key's letter moves
        assert all(p.order is not None for p in record.paraphrases)
        assert all(record.key_for(i) != record.key for i in range(len(record.paraphrases)))


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "scenario.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_invalid_yaml_names_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "name: x\nusers:\n  - id: a\n    role: [unclosed\n")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert f"{path}:" in str(caught.value) and "invalid YAML" in str(caught.value)
    assert str(caught.value).split(f"{path}:")[1].split(":")[0].isdigit()


_MISSING_USER = """\
name: x
users:
  - id: a
records:
  - id: r1
    question: "What?"
    options: {A: "x", B: "y"}
    key: A
sessions:
  - id: s1
    user: zed
    steps:
      - ask: r1
"""


def test_session_with_missing_user_names_field_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path, _MISSING_USER)
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:11: sessions.0.user: "), message
    assert "session s1" in message and "user 'zed'" in message


def test_unknown_stage_is_rejected(tmp_path: Path) -> None:
    path = _write(tmp_path, "name: x\nusers:\n  - id: a\nstages: [1, 7]\n")
    with pytest.raises(ScenarioError, match=r":4: stages: .*unknown stage\(s\) \[7\]"):
        load_scenario(path)


def test_key_not_among_options_is_rejected(tmp_path: Path) -> None:
    text = 'name: x\nusers:\n  - id: a\nrecords:\n  - id: r1\n    question: "What?"\n    options: {A: "x", B: "y"}\n'
    path = _write(tmp_path, text + "    key: E\n")
    with pytest.raises(ScenarioError, match=r":5: records\.0: .*key 'E' is not one of the options"):
        load_scenario(path)


def _fake_rows(module: ModuleType) -> dict[str, dict[str, object]]:
    rows: dict[str, dict[str, object]] = {}
    for pick in module.load_picks():
        options = {letter: f"other {letter}" for letter in "ABCD"}
        options[pick.key] = pick.option_has
        rows[pick.realidx] = {"question": "Q?", "realidx": pick.realidx, "options": options, "answer_idx": pick.key}
    return rows


def test_script_fails_loudly_when_the_data_key_differs() -> None:
    module = _script_module()
    rows = _fake_rows(module)
    picks = module.load_picks()
    assert len(module.build(rows)["records"]) == len(picks) >= 40
    first = picks[0]
    rows[first.realidx]["answer_idx"] = "D" if first.key != "D" else "C"
    with pytest.raises(module.TableError, match=first.realidx):
        module.build(rows)


@pytest.mark.parametrize("script", [SCRIPT, SCRIPT.with_name("make_medmcqa_holdout.py")], ids=lambda p: p.stem)
def test_script_skips_without_data(script: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.yaml"
    done = subprocess.run(
        [sys.executable, str(script), "--data", str(tmp_path / "absent.jsonl"), "--out", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and "skipped" in done.stderr and not out.exists()


@pytest.mark.skipif(not MEDMCQA.is_file(), reason=f"MedMCQA data not found at {MEDMCQA} (shared/data is absent)")
def test_script_reproduces_the_committed_scenario(tmp_path: Path) -> None:
    out = tmp_path / "medmcqa-sme.yaml"
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert str(out) in done.stdout
    assert out.read_bytes() == SCENARIOS["medmcqa-sme"].read_bytes()
