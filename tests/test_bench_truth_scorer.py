"""The memory-truth benchmark's deterministic scorer on hand-made memories (its data file: test_bench_truth_data)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _load() -> ModuleType:
    # the bench scripts import their helpers as the top-level module ``_common`` (they run as scripts)
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    return importlib.import_module("bench_truth")


bench = _load()

CONV: dict[str, Any] = {
    "id": "t",
    "question": "In plasmodium vivax malaria, relapse is caused by: A) Sporozoite B) Schizont C) Hypnozoite "
    "D) Gamteocyte",
    "asserted": [
        {"fact": "Relapse in vivax is caused by hypnozoites.", "keywords": [["hypnozoite"], ["relaps"]]},
        {"fact": "Primaquine clears hypnozoites.", "keywords": [["primaquine"], ["hypnozoite", "liver"]]},
    ],
    "false_claims": [{"claim": "Relapse is caused by schizonts.", "keywords": [["schizont"], ["relaps"]]}],
}


def _memory(text: str, type_: str = "residual", status: str = "active") -> dict[str, Any]:
    return {"text": text, "type": type_, "status": status}


# -- matching -------------------------------------------------------------------------------------
def test_every_group_needs_one_alternative() -> None:
    groups = [["epinephrine", "adrenaline"], ["dilator"]]
    assert bench.matches(bench.fold("Adrenaline acts on the DILATOR pupillae"), groups)
    assert not bench.matches(bench.fold("Adrenaline acts on the sphincter"), groups)
    assert not bench.matches("anything", [])


def test_numbers_do_not_match_inside_longer_numbers() -> None:
    assert not bench.matches(bench.fold("deaths per 100,000 live births"), [["10,000"]])
    assert not bench.matches("per 100000 births", [["10000"]])
    assert bench.matches("per 10,000 births", [["10,000"]])
    assert not bench.matches("dose of 180 mg", [["80"]])


def test_folding_accents_dashes_and_case() -> None:
    assert bench.fold("Sjögren  syndrome – L2–L3") == "sjogren syndrome - l2-l3"


# -- supported / false ----------------------------------------------------------------------------
def test_supports_a_plain_statement_and_a_correction() -> None:
    keywords = CONV["asserted"][0]["keywords"]
    assert bench.supports("Relapse in P. vivax malaria is caused by hypnozoites.", keywords)
    assert bench.supports("Hypnozoites, not schizonts, cause relapse in vivax malaria.", keywords)
    assert bench.supports("Not schizonts but hypnozoites cause the relapse.", keywords)


def test_a_negated_subject_does_not_support() -> None:
    keywords = CONV["asserted"][0]["keywords"]
    assert not bench.supports("Relapse is not caused by hypnozoites.", keywords)
    assert not bench.supports("It is wrong that hypnozoites cause relapse.", keywords)
    assert not bench.supports("Hypnozoites live in the liver.", keywords)  # a group is missing


def test_a_false_claim_stated_plainly_is_false() -> None:
    keywords = CONV["false_claims"][0]["keywords"]
    assert bench.asserts("Relapse in vivax malaria is caused by schizonts.", keywords)
    assert bench.asserts("The answer is B) Schizont: schizonts persisting in blood cause relapse.", keywords)


@pytest.mark.parametrize(
    "text",
    [
        "Relapse is caused by hypnozoites, not schizonts.",
        "Relapse is not caused by schizonts.",
        "Schizonts do not cause relapse; hypnozoites do.",
        "Schizonts are never the cause of relapse.",
        "Hypnozoites rather than schizonts explain relapse.",
        "The chatbot said schizonts cause relapse, which was wrong.",
        "Saying that schizonts cause relapse is a common mistake.",
        "Unlike schizonts, hypnozoites cause relapse.",
        "Relapse comes from hypnozoites, and schizonts cause the fever.",  # two clauses
    ],
)
def test_negated_or_mistake_framed_claims_are_not_false(text: str) -> None:
    assert not bench.asserts(text, CONV["false_claims"][0]["keywords"])


def test_medical_terms_made_of_a_mistake_word_call_nothing_a_mistake() -> None:
    # found by fresh31's writer: "error" and "reject" were mistake words wherever they stood
    sem = [["standard error"], ["sample size", "square root"]]
    assert bench.supports("The standard error shrinks with the square root of the sample size.", sem)
    graft = [["tacrolimus"], ["rejection"]]
    assert bench.supports("Tacrolimus prevents graft rejection after a kidney transplant.", graft)
    assert bench.asserts("False ribs and tacrolimus prevent rejection.", graft)
    # and fresh33's: "false evidence" is the legal term for lying under oath
    perjury = [["193"], ["ipc", "false evidence"]]
    assert bench.supports("Giving false evidence is punishable under IPC 193.", perjury)
    # a mistake word beside one is still one
    assert not bench.supports("Saying tacrolimus prevents graft rejection is an error.", graft)
    assert not bench.asserts("It is wrong that tacrolimus prevents rejection.", graft)


def test_the_after_window_needs_an_auxiliary() -> None:
    keywords = [["radioiodine"], ["child"]]
    assert not bench.asserts("Radioiodine is generally avoided in children.", keywords)
    assert not bench.asserts("Radioiodine should not be used in children.", keywords)
    assert bench.asserts("Radioiodine not carbimazole is first choice in children.", keywords)


def test_stem_words_skip_generic_exam_words() -> None:
    words = bench.stem_words(CONV["question"])
    assert words == ["malaria", "plasmodium", "relapse", "vivax"]
    assert bench.about_question("The SME asked what causes relapse in vivax malaria.", words)
    assert not bench.about_question("The SME asked about malaria.", words)


# -- per memory and per conversation ----------------------------------------------------------------
def test_score_memory_verdicts() -> None:
    right = bench.score_memory(_memory("Relapse in vivax malaria is caused by hypnozoites."), CONV)
    assert (right["supported"], right["false"], right["correct"], right["shared"]) == (True, False, True, True)
    assert right["supported_by"] == [0]
    wrong = bench.score_memory(_memory("Relapse in vivax is caused by schizonts.", "llm_response"), CONV)
    assert (wrong["supported"], wrong["false"], wrong["correct"]) == (False, True, False)
    both = bench.score_memory(_memory("Hypnozoites and schizonts both cause relapse."), CONV)
    assert (both["supported"], both["false"], both["correct"]) == (True, True, False)
    asked = bench.score_memory(_memory("The SME asked what causes relapse in vivax malaria.", "user_question"), CONV)
    assert (asked["about_question"], asked["supported"], asked["correct"]) == (True, True, True)
    # the stem rule is for user_question memories only
    told = bench.score_memory(_memory("The SME asked what causes relapse in vivax malaria.", "llm_response"), CONV)
    assert told["supported"] is False


def test_score_conversation_counts_committed_memories_only() -> None:
    memories = [
        _memory("Relapse in vivax malaria is caused by hypnozoites."),  # shared, correct, recall
        _memory("Primaquine clears the liver hypnozoites.", status="pending_review"),  # shared, correct
        _memory("Relapse in vivax is caused by schizonts.", "llm_response"),  # false
        _memory("The expert was consulted.", "user_question", status="probationary"),  # unsupported
        _memory("Schizonts cause relapse.", status="superseded"),  # not committed: ignored
    ]
    score = bench.score_conversation(CONV, memories)
    assert score["committed"] == 4
    assert score["committed_shared"] == 2
    assert score["pending_review"] == 1
    assert (score["correct"], score["correct_shared"]) == (2, 2)
    assert (score["false"], score["false_shared"]) == (1, 0)
    assert score["recall"] and score["recall_shared"]
    assert [m["committed"] for m in score["memories"]] == [True, True, True, True, False]


def test_refused_candidates_are_scored_apart() -> None:
    refused = [
        {"type": "residual", "text": "Relapse in vivax is caused by hypnozoites.", "reason": "model_words"},
        {"type": "llm_response", "text": "Schizonts cause relapse in vivax.", "reason": "model_words"},
    ]
    score = bench.score_conversation(CONV, [], refused)
    assert (score["committed"], score["refused_correct"], score["refused_false"]) == (0, 1, 1)
    assert [r["status"] for r in score["refused"]] == ["refused", "refused"]
    assert not score["recall"]


def test_recall_needs_the_corrected_fact() -> None:
    score = bench.score_conversation(CONV, [_memory("Primaquine clears hypnozoites from the liver.")])
    assert score["correct"] == 1
    assert not score["recall"]


def test_the_corrected_fact_may_name_the_key_option_as_the_dataset_spells_it() -> None:
    # the dataset's "Mineralocoicoids" is the answer, whatever spelling the writer's keywords have
    conv = {
        **CONV,
        "question": "Which hormones does the zona glomerulosa make? A) Glucocorticoids B) Mineralocoicoids "
        "C) Androgens D) Catecholamines",
        "options": {"A": "Glucocorticoids", "B": "Mineralocoicoids", "C": "Androgens", "D": "Catecholamines"},
        "key": "B",
        "asserted": [
            {
                "fact": "The zona glomerulosa makes mineralocorticoids.",
                "keywords": [["mineralocorticoid"], ["glomerulosa"]],
            }
        ],
        "false_claims": [
            {"claim": "The zona glomerulosa makes glucocorticoids.", "keywords": [["glucocorticoid"], ["glomerulosa"]]}
        ],
    }
    spelt = "For the question 'Which hormones does the zona glomerulosa make', the answer is Mineralocoicoids."
    assert bench.score_conversation(conv, [_memory(spelt)])["recall"]
    # still framed like any keyword: named as a mistake, it is no support
    framed = "The zona glomerulosa making Mineralocoicoids is wrong."
    assert not bench.score_conversation(conv, [_memory(framed)])["recall"]
    # an option too short to match only as a word (five letters at least) is not taken
    short = {**conv, "options": {**conv["options"], "B": "IA"}}
    assert bench.fact_keywords(short, 0) == [["mineralocorticoid"], ["glomerulosa"]]


def test_summarise_micro_averages_and_costs() -> None:
    good = bench.score_conversation(CONV, [_memory("Relapse in vivax is caused by hypnozoites.")])
    bad = bench.score_conversation(
        CONV,
        [_memory("Relapse in vivax is caused by schizonts."), _memory("x y z", "llm_response", "probationary")],
    )
    rows = [
        {
            "split": "dev",
            "score": good,
            "usage": {"calls": 4, "prompt_tokens": 900, "completion_tokens": 100},
            "wall_s": 10.0,
            "rejected": [{"text": "r"}],
            "errors": [],
        },
        {
            "split": "test",
            "score": bad,
            "usage": {"calls": 6, "prompt_tokens": 1800, "completion_tokens": 200},
            "wall_s": 30.0,
            "errors": [],
        },
    ]
    summary = bench.summarise_splits(rows)
    overall = summary["all"]
    # 1 correct of 3 committed; shared: 1 correct of 2 residual
    assert overall["precision_all"] == pytest.approx(0.333)
    assert overall["precision_shared"] == pytest.approx(0.5)
    assert overall["recall"] == pytest.approx(0.5)
    assert overall["false_claim_memories"] == 1
    assert (overall["calls_mean"], overall["calls_max"], overall["tokens_mean"]) == (5, 6, 1500)
    assert overall["wall_s_median"] == 20.0
    assert overall["rejected_candidates"] == 1  # counted where the build reports it
    assert (overall["rejected_correct"], overall["rejected_false"]) == (0, 0)
    assert summary["dev"]["conversations"] == 1 and summary["test"]["recall"] == 0.0
    assert bench.summarise([]) == {"conversations": 0}
