"""Harm, gain, tokens per answer and the per-split view, with the arithmetic in the comments."""

from __future__ import annotations

from scenarios import effects
from scenarios.rows import AnswerRow, BuildUsage, Conversation


def _row(
    rid: str, correct: bool, *, completion: int | None = 10, prompt: int | None = 100, relettered: bool = False
) -> AnswerRow:
    return AnswerRow(
        id=rid,
        paraphrase=None,
        answer="Answer: A.",
        letter="A",
        correct=correct,
        relettered=relettered,
        completion_tokens=completion,
        prompt_tokens=prompt,
        tokens=9,
        words=2,
        ics=0.5,
        kpcs=0.5,
        aics=0.5,
        injected=[],
    )


def _conversation(record: str, accepted: bool, rounds: int, memories: dict[str, int]) -> Conversation:
    usage = BuildUsage(agents={}, total={})
    return Conversation(
        record=record,
        rounds=rounds,
        tokens=20,
        words=15,
        accepted=accepted,
        memories=memories,
        outcomes={},
        errors=[],
        usage=usage,
        transcript=[],
    )


def test_harm_counts_right_to_wrong_over_the_records_right_without_memory() -> None:
    baseline = [_row("a", True), _row("b", True), _row("c", False), _row("d", True), _row("e", False)]
    memory = [_row("a", True), _row("b", False), _row("c", True), _row("d", False), _row("e", False), _row("x", False)]
    harm = effects.harm(baseline, memory)
    # right before: a, b, d (3); wrong after among them: b, d -> 2 of 3; c moved wrong -> right
    assert harm.as_json() == {"n": 2, "share": 2 / 3, "right_before": 3, "ids": ["b", "d"], "helped": 1, "compared": 5}
    assert effects.harm([], memory).share is None  # no baseline: nothing to compare


def test_gain_is_the_accuracy_on_relettered_paraphrases_of_corrected_records() -> None:
    paraphrased = [
        _row("a", True, relettered=True),
        _row("b", False, relettered=True),
        _row("c", True, relettered=False),
        _row("z", False, relettered=True),  # not corrected: left out
    ]
    gain = effects.gain(paraphrased, {"a", "b", "c"}, "ravi")
    # re-lettered and corrected: a (right), b (wrong) -> 1/2; in listed order: c -> 1/1
    assert gain.as_json() == {"accuracy": 0.5, "n": 2, "user": "ravi", "plain": {"accuracy": 1.0, "n": 1}}


def test_token_means_skip_missing_counts() -> None:
    rows = [_row("a", True, completion=10, prompt=100), _row("b", True, completion=30, prompt=None)]
    # completion (10 + 30) / 2 = 20; prompt only from a: 100
    assert effects.token_means(rows).as_json() == {"n": 2, "completion": 20.0, "prompt": 100.0}
    assert effects.token_means([]).as_json() == {"n": 0, "completion": None, "prompt": None}


def test_injection_compares_completion_tokens_with_the_baseline() -> None:
    baseline = [_row("a", True, completion=40), _row("b", False, completion=20)]  # mean 30
    originals = [_row("a", True, completion=20), _row("b", True, completion=20)]  # mean 20 < 30
    paraphrased = [_row("b", True, completion=16, relettered=True)]
    result = effects.injection(baseline, originals, paraphrased, {"b"}, "ravi")
    assert result.tokens.completion_below_baseline is True
    assert result.tokens.stage1.completion == 30.0 and result.tokens.stage3.completion == 20.0
    assert result.harm.n == 0 and result.harm.helped == 1 and result.gain.accuracy == 1.0


def test_per_split_computes_each_split_and_nothing_without_splits() -> None:
    split_of = {"a": "dev", "b": "test", "c": "test", "d": None}
    rows = [_row("a", True), _row("b", False), _row("c", True), _row("d", True)]
    result = effects.per_split(split_of, lambda s: effects.answer_metrics(effects.only(rows, split_of, s)))
    assert list(result) == ["dev", "test"]
    assert result["dev"].accuracy == 1.0 and result["dev"].n == 1
    assert result["test"].accuracy == 0.5 and result["test"].distribution.as_json() == {"correct": 1, "incorrect": 1}
    assert result["test"].tokens_per_response.mean == 9.0
    assert effects.per_split({"a": None}, lambda s: {}) == {}


def test_correction_metrics_per_split() -> None:
    conversations = [
        _conversation("a", True, 2, {"residual": 1, "llm_response": 2}),
        _conversation("b", False, 4, {"residual": 0, "llm_response": 1}),
        _conversation("c", True, 1, {"residual": 9, "llm_response": 9}),  # in test: left out
    ]
    split_of = {"a": "dev", "b": "dev", "c": "test"}
    result = effects.correction_metrics(effects.only(conversations, split_of, "dev"))
    # rounds (2 + 4) / 2 = 3; residual (1 + 0) / 2 = 0.5; llm_response (2 + 1) / 2 = 1.5
    assert result.as_json() == {
        "conversations": 2,
        "accepted": 1,
        "rounds": 3.0,
        "memories": {"llm_response": 1.5, "residual": 0.5},
    }
