"""The four-stage lifecycle on the bundled scenarios with a scripted society (no model files)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory.config import Settings, load_settings
from memory.maintenance import last_run
from scenarios.checkpoint import CheckpointError
from scenarios.results import CorrectionsResult, EarlierCorrections, LifecycleReport
from scenarios.rows import RememberStep
from scenarios.runner import parse_stages, run_lifecycle
from scenarios.schema import ScenarioError, bundled, load_scenario, with_knowledge
from tests.scenarios.fake_society import society


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Retrieval quality matters here: use the real offline MiniLM embedder."""
    return load_settings(env={"MARK_HOME": str(tmp_path / "home"), "MARK_EMBEDDER": "onnx"})


async def test_tropicamide_all_stages(settings: Settings, tmp_path: Path) -> None:
    scenario = load_scenario(bundled()["tropicamide"])
    client = society()
    report = await run_lifecycle(scenario, settings, tmp_path / "run", client=client)
    s1, s2, s3, s4 = report.stage1, report.stage2, report.stage3, report.stage4
    assert s1 is not None and isinstance(s2, CorrectionsResult) and s3 is not None and s4 is not None
    wrong = [r.id for r in s1.records if not r.correct]
    assert wrong and s1.accuracy is not None and s1.accuracy < 1.0
    assert [c.record for c in s2.conversations] == wrong
    assert all(c.accepted and c.rounds >= 1 for c in s2.conversations)
    assert s2.table5.conversations == len(wrong) and (s2.table5.llm_response or 0) >= 1
    assert s3.corrected.accuracy == 1.0 and s3.corrected.n == len(wrong)
    assert s3.accuracy == 1.0 and s3.harm.n == 0 and s3.harm.helped == len(wrong)
    # paraphrases are asked by alice (the first non-SME user), who sees only shared residual memories
    asked = s3.paraphrase_records
    assert {r.user for r in asked} == {"alice"} and s3.gain.user == "alice"
    # every paraphrase of the bundled demo re-letters its options
    assert all(r.relettered for r in asked)
    assert s3.gain.n == len([r for r in asked if r.id in wrong]) and s3.gain.plain.n == 0
    assert all(r.correct for r in asked if r.id in {"tropicamide", "adrenochrome"})
    # the fake residual of dilator-agonist ("No: ...") is superseded by pilocarpine-test's ("That is not
    # right: ...", negation differs, mid-band similarity), so alice may miss that one paraphrase
    assert (s3.paraphrases.accuracy or 0) >= 0.8
    tokens = s3.tokens
    assert (tokens.stage3.prompt or 0) > (tokens.stage1.prompt or 0)  # the injected memory block
    assert s4.persistence_rate == 1.0 and s4.expectations.failed == 0
    for name in ("report.json", "report.md"):
        assert (tmp_path / "run" / name).is_file()
    # report.json holds the typed report's JSON form; the returned report adds the files written
    written = json.loads((tmp_path / "run" / "report.json").read_text())
    assert written == {k: v for k, v in json.loads(json.dumps(report.as_json())).items() if k != "files"}
    assert report.files is not None and report.files["json"] == str(tmp_path / "run" / "report.json")
    assert LifecycleReport.model_validate(written).as_json() == written  # report.json reads back as the model
    assert s2.table4.turns.count == len(wrong) and (s2.table4.turns.min or 0) >= 1
    markdown = (tmp_path / "run" / "report.md").read_text()
    assert "Table 4" in markdown and "| Number of turns | —" not in markdown


async def test_multi_user_domain_helps_b_but_personal_stays_with_a(settings: Settings, tmp_path: Path) -> None:
    scenario = load_scenario(bundled()["multi-user"])
    report = await run_lifecycle(scenario, settings, tmp_path / "run", client=society())
    assert report.stage4 is not None
    checks = report.stage4.expectations
    assert checks.failed == 0 and checks.passed >= 2, checks.details
    forbid = [c for c in checks.details if c.forbid is not None]
    assert forbid and all(c.passed for c in forbid)
    # in report.json a check names only what it tests: "expect" or "forbid"
    details = report.as_json()["stage4"]["expectations"]["details"]
    assert all(("forbid" in c) != ("expect" in c) for c in details)


async def test_preference_change_newer_wins(settings: Settings, tmp_path: Path) -> None:
    scenario = load_scenario(bundled()["preference-change"])
    report = await run_lifecycle(scenario, settings, tmp_path / "run", client=society())
    assert report.stage4 is not None
    checks = report.stage4.expectations
    assert checks.failed == 0 and checks.passed >= 1, checks.details
    remembers = [s for sess in report.stage4.sessions for s in sess.steps if isinstance(s, RememberStep)]
    assert any(s.action == "superseded" for s in remembers)


class Interrupt(RuntimeError):
    pass


async def test_interrupted_run_resumes_without_redoing_work(settings: Settings, tmp_path: Path) -> None:
    scenario = load_scenario(bundled()["tropicamide"])
    out = tmp_path / "run"
    seen: list[tuple[str, int]] = []

    def stop_in_stage3(label: str, done: int, total: int) -> None:
        seen.append((label, done))
        if label.startswith("stage 3") and done == 2:
            raise Interrupt("ctrl-c")

    first = society()
    with pytest.raises(Interrupt):
        await run_lifecycle(scenario, settings, out, client=first, progress=stop_in_stage3)
    calls_before = len(first.calls)
    progress_lines = (out / "progress.jsonl").read_text().splitlines()
    second = society()
    report = await run_lifecycle(scenario, settings, out, client=second)
    stage3_calls = [c for c in second.calls if c[1] is None]
    assert calls_before > len(second.calls)  # stages 1-2 and the first stage-3 answers were not redone
    assert len((out / "progress.jsonl").read_text().splitlines()) > len(progress_lines)
    assert report.stage3 is not None and report.stage3.corrected.accuracy == 1.0
    assert stage3_calls  # the rest of stage 3 did run


async def test_run_folder_of_another_scenario_is_refused(settings: Settings, tmp_path: Path) -> None:
    out = tmp_path / "run"
    await run_lifecycle(load_scenario(bundled()["preference-change"]), settings, out, client=society())
    with pytest.raises(CheckpointError, match="another scenario"):
        await run_lifecycle(load_scenario(bundled()["tropicamide"]), settings, out, [1], client=society())


def test_parse_stages() -> None:
    assert parse_stages("3,1") == [1, 3]
    with pytest.raises(ScenarioError, match="unknown stage"):
        parse_stages("1,7")
    with pytest.raises(ScenarioError, match="comma-separated"):
        parse_stages("one")


async def test_later_stages_report_corrections_of_an_earlier_run(settings: Settings, tmp_path: Path) -> None:
    scenario = load_scenario(bundled()["tropicamide"])
    out = tmp_path / "run"
    first = await run_lifecycle(scenario, settings, out, [1, 2], client=society())
    ran_at = last_run(out / "store" / "maintenance.json")  # each run starts with maintenance when due
    assert ran_at is not None
    later = await run_lifecycle(scenario, settings, out, [3], client=society())
    assert last_run(out / "store" / "maintenance.json") == ran_at  # not due again within 24 hours
    assert isinstance(later.stage2, EarlierCorrections) and later.stage2.partial is True
    assert first.stage2 is not None and later.stage3 is not None
    assert later.stage2.table5.conversations == first.stage2.table5.conversations
    assert later.stage3.corrected.n == first.stage2.table5.conversations
    assert later.stage1 is None and "stage1" not in later.as_json()  # a stage not run is absent, not null


def _with_knowledge(tmp_path: Path, *files: str) -> Path:
    """The tropicamide scenario naming knowledge files (resolved beside it, else among the bundled ones)."""
    text = bundled()["tropicamide"].read_text(encoding="utf-8")
    path = tmp_path / "tropicamide-knowledge.yaml"
    path.write_text(text + "knowledge:\n" + "".join(f"  - {f}\n" for f in files), encoding="utf-8")
    return path


async def test_knowledge_only_baseline_then_knowledge_and_memory(settings: Settings, tmp_path: Path) -> None:
    scenario = load_scenario(_with_knowledge(tmp_path, "ophthalmic-pharmacology.md"))
    client = society()
    report = await run_lifecycle(scenario, settings, tmp_path / "run", client=client, stages=[1, 2, 3])
    assert [(k.source, k.action) for k in report.knowledge] == [("ophthalmic-pharmacology.md", "added")]
    s1, s3 = report.stage1, report.stage3
    assert s1 is not None and s3 is not None
    # stage 1 is given knowledge (cited per answer) and no memory; stage 3 both
    assert all(r.cited and not r.injected for r in s1.records)
    assert all(r.cited for r in s3.records) and any(r.injected for r in s3.records)
    assert all(c.startswith("[K1] ophthalmic-pharmacology.md, ") for r in s1.records for c in r.cited[:1])
    prompts = ["\n".join(str(m.content) for m in messages) for messages, _ in client.calls]
    answers = [p for p in prompts if "Answer from established domain" in p]
    assert answers and all("<knowledge>" in p for p in answers)
    assert any("<refined_memories>" in p and "a passage disagree" in p for p in answers)
    # stage 2 records what the veracity checker had: passages found for the candidates, summed over the chats
    s2 = report.stage2
    assert s2 is not None and s2.evidence is not None
    per_chat = [c.evidence for c in s2.conversations]
    assert all(e is not None for e in per_chat)
    assert s2.evidence.candidates == sum(e.candidates for e in per_chat if e) > 0
    assert 0 < s2.evidence.with_passages == sum(e.with_passages for e in per_chat if e) <= s2.evidence.candidates
    assert sum(s2.evidence.fact_checks.values()) == s2.evidence.candidates
    markdown = (tmp_path / "run" / "report.md").read_text()
    assert "Evidence for the veracity checker" in markdown
    assert f"| ... with at least one knowledge passage | {s2.evidence.with_passages} |" in markdown
    assert "## Knowledge base" in markdown and "Stage 1 (knowledge only)" in markdown
    assert "Stage 3 (knowledge + memory)" in markdown
    # a re-run finds the knowledge already in the run's store: nothing is added twice
    again = await run_lifecycle(scenario, settings, tmp_path / "run", client=society(), stages=[1])
    assert [k.action for k in again.knowledge] == ["unchanged"]


def test_a_missing_knowledge_file_is_named_with_its_line(tmp_path: Path) -> None:
    path = _with_knowledge(tmp_path, "ophthalmic-pharmacology.md", "no-such-guide.md")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    line = path.read_text().splitlines().index("knowledge:") + 1  # the field's line (list items carry none)
    assert str(caught.value) == (
        f"{path}:{line}: knowledge.1: no file 'no-such-guide.md' beside the scenario or among the bundled"
        " knowledge files"
    )


def test_knowledge_given_on_the_command_line(tmp_path: Path) -> None:
    scenario = load_scenario(bundled()["tropicamide"])
    extended = with_knowledge(scenario, ["ophthalmic-pharmacology.md"])
    assert extended.knowledge == ["ophthalmic-pharmacology.md"] and extended.knowledge_files()[0].is_file()
    local = tmp_path / "mine.md"
    local.write_text("# Drops\n\nTropicamide drops are 0.5% or 1%.\n", encoding="utf-8")
    assert with_knowledge(scenario, [str(local)]).knowledge_files() == [local.resolve()]
    assert with_knowledge(scenario, []) is scenario
    with pytest.raises(ScenarioError, match=r"--knowledge nope\.md: no such file"):
        with_knowledge(scenario, ["nope.md"])
