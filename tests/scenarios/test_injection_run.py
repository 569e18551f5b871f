"""Stage 3's harm, gain and tokens, and the dev / test columns, on a scripted run (no model files)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from autogen_core.models import LLMMessage, UserMessage
from pydantic import BaseModel

from agents.fakes import FunctionChatClient
from memory.config import Settings, load_settings
from scenarios.results import CorrectionsResult
from scenarios.runner import run_lifecycle
from scenarios.schema import load_scenario
from tests.scenarios import fake_society

SCENARIO = """\
name: effects
users:
  - {id: sme-1, role: sme}
  - {id: u-ravi}
  - {id: u-mei}
stages: [1, 2, 3, 4]
records:
  - id: keep-dev
    split: dev
    question: "Which nerve supplies the deltoid muscle?"
    options: {A: "Radial nerve", B: "Ulnar nerve", C: "Median nerve", D: "Axillary nerve"}
    key: D
  - id: fix-dev
    split: dev
    question: "Concentration of tropicamide eye drops:"
    options: {A: "0.01", B: "0.02", C: "0.03", D: "0.04"}
    key: A
    paraphrases:
      - {text: "As a decimal fraction, what strength of tropicamide eye drops is used?", order: BADC}
    correction:
      user: sme-1
      script:
        - "Not quite: tropicamide eye drops are used at 0.5% to 1%."
        - "The correct answer is A) 0.01."
        - ACCEPT
  - id: keep-test
    split: test
    question: "Which vitamin deficiency causes scurvy?"
    options: {A: "Vitamin A", B: "Vitamin D", C: "Vitamin K", D: "Vitamin C"}
    key: D
  - id: fix-test
    split: test
    question: "Black deposits on the conjunctiva of a glaucoma patient are seen with the use of:"
    options: {A: "Prostaglandins", B: "Carbonic anhydrase inhibitors", C: "Epinephrine", D: "Beta blocker"}
    key: C
    paraphrases:
      - {text: "Which eye drop leaves black deposits on the conjunctiva of a glaucoma patient?", order: CDAB}
    correction:
      user: sme-1
      script:
        - "Wrong: black deposits on the conjunctiva of a glaucoma patient come from epinephrine eye drops."
        - "The correct answer is C) Epinephrine."
        - ACCEPT
sessions:
  - id: mei-1
    user: u-mei
    steps:
      - {ask: fix-test, paraphrase: 0}
      - {ask: fix-dev, paraphrase: 0}
"""


class Society:
    """The scripted society, except that from stage 3 on it answers the deltoid question wrongly."""

    def __init__(self) -> None:
        self.stage3 = False
        self.client = FunctionChatClient(self.reply)

    def progress(self, label: str, done: int, total: int) -> None:
        self.stage3 = self.stage3 or label.startswith("stage 3")

    def reply(self, messages: Sequence[LLMMessage], model: type[BaseModel] | None) -> str:
        question = next((str(m.content) for m in reversed(messages) if isinstance(m, UserMessage)), "")
        if self.stage3 and model is None and "deltoid" in question:
            return "Answer: A. The radial nerve, I think."
        return fake_society.reply(messages, model)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Retrieval quality matters here: use the real offline MiniLM embedder."""
    return load_settings(env={"MARK_HOME": str(tmp_path / "home"), "MARK_EMBEDDER": "onnx"})


async def test_harm_gain_tokens_overall_and_per_split(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "effects.yaml"
    path.write_text(SCENARIO, encoding="utf-8")
    society = Society()
    out = tmp_path / "run"
    report = await run_lifecycle(load_scenario(path), settings, out, client=society.client, progress=society.progress)
    s1, s2, s3, s4 = report.stage1, report.stage2, report.stage3, report.stage4
    assert s1 is not None and isinstance(s2, CorrectionsResult) and s3 is not None and s4 is not None
    # the fake answers the last option without memory: keep-* (key D) right, fix-* wrong
    assert {r.id: r.correct for r in s1.records} == {
        "keep-dev": True,
        "fix-dev": False,
        "keep-test": True,
        "fix-test": False,
    }
    assert s1.splits["dev"].accuracy == 0.5 and s1.splits["test"].accuracy == 0.5
    # harm: keep-dev went right -> wrong; 1 of the 2 records right in stage 1, all in dev
    assert s3.harm.as_json() == {
        "n": 1,
        "share": 0.5,
        "right_before": 2,
        "ids": ["keep-dev"],
        "helped": 2,
        "compared": 4,
    }
    assert s3.splits["dev"].harm.ids == ["keep-dev"] and s3.splits["dev"].harm.share == 1.0
    assert s3.splits["test"].harm.n == 0 and s3.splits["test"].harm.share == 0.0
    # gain: u-ravi (not the corrector) answers both re-lettered paraphrases from the shared memory's content
    shown = {r.id: (r.user, r.key, r.letter, r.option) for r in s3.paraphrase_records}
    assert shown == {"fix-dev": ("u-ravi", "B", "B", "A"), "fix-test": ("u-ravi", "A", "A", "C")}
    assert s3.gain.as_json() == {"accuracy": 1.0, "n": 2, "user": "u-ravi", "plain": {"accuracy": None, "n": 0}}
    assert s3.splits["dev"].gain.n == 1 and s3.splits["test"].gain.accuracy == 1.0
    # tokens: the client's own counts, per answer; the memory block makes stage-3 prompts longer
    tokens = s3.tokens
    assert tokens.stage1.n == 4 and tokens.stage3.n == 4 and tokens.stage3_paraphrases.n == 2
    assert (tokens.stage1.completion or 0) > 0 and (tokens.stage3.prompt or 0) > (tokens.stage1.prompt or 0)
    assert all(r.completion_tokens and r.prompt_tokens for r in s1.records)
    # stage 2 and stage 4 per split; stage-4 asks of paraphrases are scored on the re-lettered key
    assert s2.splits["dev"].conversations == 1 == s2.splits["test"].conversations
    assert s4.accuracy == 1.0 and s4.splits["dev"].asks == 1 and s4.splits["test"].persistence_rate == 1.0
    markdown = (out / "report.md").read_text(encoding="utf-8")
    assert "## Injection effects: harm, gain, tokens per answer" in markdown
    assert "| Metric | Overall | dev | test |" in markdown and "**Per split (dev / test)**" in markdown
    assert "| Harm: right without memory, wrong with it | 1 | 1 | 0 |" in markdown
    assert "Harmed records (dev): keep-dev" in markdown and "Harmed records (test): none" in markdown
    assert "| Gain: corrected records right on re-lettered paraphrases | 1.000 | 1.000 | 1.000 |" in markdown


async def test_stage3_alone_reads_the_baseline_of_an_earlier_run(settings: Settings, tmp_path: Path) -> None:
    path = tmp_path / "effects.yaml"
    path.write_text(SCENARIO, encoding="utf-8")
    scenario, out = load_scenario(path), tmp_path / "run"
    society = Society()
    await run_lifecycle(scenario, settings, out, [1, 2], client=society.client, progress=society.progress)
    later = await run_lifecycle(scenario, settings, out, [3], client=society.client, progress=society.progress)
    assert later.stage3 is not None
    assert later.stage3.harm.compared == 4 and later.stage3.harm.ids == ["keep-dev"]
