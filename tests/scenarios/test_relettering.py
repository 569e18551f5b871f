"""Paraphrases that re-letter the options: the prompt, the key's letter, scoring, and validation errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scenarios.context import corrector, fingerprint, paraphrase_asker
from scenarios.schema import Record, Scenario, ScenarioError, Split, load_scenario, moved_order

OPTIONS = {"A": "0.01", "B": "0.02", "C": "0.03", "D": "0.04"}


def _record(*paraphrases: object) -> Record:
    return Record.model_validate(
        {
            "id": "r1",
            "question": "Concentration of tropicamide:",
            "options": OPTIONS,
            "key": "A",
            "paraphrases": paraphrases,
        }
    )


def test_order_shows_the_options_relettered_and_moves_the_key() -> None:
    record = _record("Plain wording?", {"text": "As a decimal, what strength?", "order": "CABD"})
    # order CABD: shown A is listed C (0.03), B is listed A (0.01), C is listed B (0.02), D stays D
    assert record.prompt(1) == "As a decimal, what strength?\nA) 0.03\nB) 0.01\nC) 0.02\nD) 0.04"
    assert record.shown_options(1) == {"A": "0.03", "B": "0.01", "C": "0.02", "D": "0.04"}
    assert record.key_for(1) == "B" and record.key_for(None) == "A" and record.key_for(0) == "A"
    assert record.listed_letter("B", 1) == "A" and record.listed_letter("A", 1) == "C"
    assert record.listed_letter(None, 1) is None and record.listed_letter("B", 0) == "B"
    assert record.reference(1) == "The answer is B) 0.01."
    # a plain paraphrase keeps the listed letters
    assert record.prompt(0) == "Plain wording?\nA) 0.01\nB) 0.02\nC) 0.03\nD) 0.04"


def test_a_plain_paraphrase_still_dumps_as_a_string() -> None:
    record = _record("Plain wording?", {"text": "Re-lettered?", "order": "DCBA"})
    dumped = json.loads(record.model_dump_json())
    assert dumped["paraphrases"] == ["Plain wording?", {"text": "Re-lettered?", "order": "DCBA"}]
    assert Record.model_validate(dumped) == record


def test_moved_order_is_a_permutation_that_always_moves_the_key() -> None:
    for key in "ABCD":
        orders = {moved_order("ABCD", key, f"seed-{n}") for n in range(200)}
        assert len(orders) == 18  # 24 orders, 6 of which keep the key where it was listed
        for order in orders:
            record = Record(
                id="r", question="What?", options=OPTIONS, key=key, paraphrases=[{"text": "Which one?", "order": order}]
            )
            assert sorted(order) == list("ABCD") and record.key_for(0) != key
    assert moved_order("ABCD", "A", "x") == moved_order("ABCD", "A", "x")


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "scenario.yaml"
    path.write_text(text, encoding="utf-8")
    return path


_BAD_ORDER = """\
name: x
users:
  - id: a
records:
  - id: r1
    question: "What?"
    options: {A: "x", B: "y", C: "z"}
    key: A
    paraphrases:
      - "Which one?"
      - text: "Which, then?"
        order: ABD
"""


def test_an_order_that_is_not_a_permutation_names_file_line_field(tmp_path: Path) -> None:
    path = _write(tmp_path, _BAD_ORDER)
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:12: records.0.paraphrases.1.order: "), message
    assert "'ABD' is not a permutation of the option letters 'ABC'" in message


def test_a_repeated_letter_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, _BAD_ORDER.replace("order: ABD", "order: AAB"))
    with pytest.raises(ScenarioError, match=r":12: records\.0\.paraphrases\.1\.order: order 'AAB'"):
        load_scenario(path)


def test_an_unknown_paraphrase_field_or_split_names_the_field(tmp_path: Path) -> None:
    path = _write(tmp_path, _BAD_ORDER.replace("order: ABD", "ordre: CAB"))
    with pytest.raises(ScenarioError, match=r":12: records\.0\.paraphrases\.1\.ordre: Extra inputs"):
        load_scenario(path)
    path = _write(
        tmp_path, _BAD_ORDER.replace("order: ABD", "order: CAB").replace("    key: A\n", "    key: A\n    split: val\n")
    )
    with pytest.raises(ScenarioError, match=r":9: records\.0\.split: "):
        load_scenario(path)


def test_an_unknown_paraphrase_user_is_refused(tmp_path: Path) -> None:
    text = _BAD_ORDER.replace("order: ABD", "order: CAB") + "paraphrase_user: ghost\n"
    path = _write(tmp_path, text)
    with pytest.raises(ScenarioError, match=r":13: paraphrase_user: user 'ghost' is not in users"):
        load_scenario(path)


def test_split_and_order_load(tmp_path: Path) -> None:
    text = _BAD_ORDER.replace("order: ABD", "order: CAB").replace("    key: A\n", "    key: A\n    split: test\n")
    scenario = load_scenario(_write(tmp_path, text))
    record = scenario.records[0]
    assert record.split is Split.TEST and record.key_for(1) == "B" and record.key_for(0) == "A"


def _scenario(users: list[dict[str, str]], **extra: object) -> Scenario:
    record = {
        "id": "r1",
        "question": "What?",
        "options": OPTIONS,
        "key": "A",
        "correction": {"user": "dr", "script": ["A"]},
    }
    return Scenario.model_validate({"name": "s", "users": users, "records": [record], **extra})


def test_paraphrases_are_asked_by_another_user_than_the_corrector() -> None:
    users = [{"id": "dr", "role": "sme"}, {"id": "sme-2", "role": "sme"}, {"id": "ravi"}, {"id": "mei"}]
    scenario = _scenario(users)
    record = scenario.records[0]
    assert corrector(scenario, record) == "dr" and paraphrase_asker(scenario, record) == "ravi"
    assert paraphrase_asker(_scenario(users, paraphrase_user="mei"), record) == "mei"
    only_smes = _scenario([{"id": "dr", "role": "sme"}, {"id": "sme-2", "role": "sme"}])
    assert paraphrase_asker(only_smes, only_smes.records[0]) == "sme-2"
    alone = _scenario([{"id": "dr", "role": "sme"}])
    assert paraphrase_asker(alone, alone.records[0]) == "dr"


def test_fingerprint_tells_orders_apart() -> None:
    users = [{"id": "dr", "role": "sme"}]
    base = {"id": "r1", "question": "What?", "options": OPTIONS, "key": "A"}
    one = Scenario.model_validate(
        {"name": "s", "users": users, "records": [base | {"paraphrases": [{"text": "Which one?", "order": "BACD"}]}]}
    )
    two = Scenario.model_validate(
        {"name": "s", "users": users, "records": [base | {"paraphrases": [{"text": "Which one?", "order": "CABD"}]}]}
    )
    assert fingerprint(one) != fingerprint(two)
