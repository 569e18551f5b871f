"""Tests for scenarios.metrics: ICS, KPCS, AICS, alpha sweep, describe, answer parsing (hand-computed)."""

from __future__ import annotations

import math

import pytest

from scenarios.metrics import (
    accuracy,
    aics,
    alpha_sweep,
    answer_letter,
    best_alpha,
    cosine,
    derive_key_points,
    describe,
    distribution,
    ics,
    kpcs,
    persistence_rate,
    split_sentences,
    turns_to_correct,
)

# A tiny deterministic embedder: every sentence the tests use has a fixed, hand-picked vector.
# Case, runs of spaces and trailing punctuation are ignored, so "X." and "X" embed alike. Vectors are
# deliberately NOT all unit length ([0, 3, 4, 0, 0] has norm 5): a dot product instead of a cosine fails.
VECTORS: dict[str, list[float]] = {
    "atropine blocks muscarinic receptors": [1, 0, 0, 0, 0],
    "it raises heart rate": [0, 1, 0, 0, 0],
    "raises heart rate": [0, 1, 0, 0, 0],
    "it speeds the heart": [0, 3, 4, 0, 0],  # cos with [0,1,0,0,0] = 3/5 = 0.6
    "atropine is an antimuscarinic": [0.8, 0.6, 0, 0, 0],  # cos with [1,0,0,0,0] = 0.8
    "the sky is blue": [0, 0, 1, 0, 0],
    "crosses the blood brain barrier": [0, 0, 0, 1, 0],
    "give 0.1 mg of atropine": [0, 0, 0, 0, 1],
    "it blocks muscarinic receptors": [1, 0, 0, 0, 0],
}


class FakeEmbedder:
    """Looks every text up in VECTORS (an unknown text fails loudly) and records each batch."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [VECTORS[" ".join(t.split()).rstrip(".!?").lower()] for t in texts]


# --- sentences and cosine ---------------------------------------------------------------------------


def test_split_sentences_keeps_decimals_and_drops_empty_pieces() -> None:
    text = "Dose is 0.01 mg. Give IV!  Why?\n- \n\nNext line"
    assert split_sentences(text) == ["Dose is 0.01 mg.", "Give IV!", "Why?", "Next line"]
    assert split_sentences("") == []
    assert split_sentences("  \n ... \n") == []


def test_cosine_normalises_and_handles_zero_vectors() -> None:
    # [0,3,4]·[0,1,0] = 3; |[0,3,4]| = 5, |[0,1,0]| = 1 -> 3/5 = 0.6
    assert cosine([0, 3, 4], [0, 1, 0]) == pytest.approx(0.6)
    assert cosine([0, 0, 0], [1, 0, 0]) == 0.0
    with pytest.raises(ValueError, match="length"):
        cosine([1, 0], [1, 0, 0])


# --- ICS --------------------------------------------------------------------------------------------


def test_ics_one_sentence_per_match() -> None:
    embed = FakeEmbedder()
    generated = "Atropine blocks muscarinic receptors. It raises heart rate. The sky is blue."
    expected = "Atropine blocks muscarinic receptors. It raises heart rate."
    # N_GR = 3, N_ER = 2; one-hot vectors, so HS = [1, 1, 0]
    # ICS = (1/3) * (1/2 + 1/2 + 0/2) = 1/3
    assert ics(generated, expected, embed) == pytest.approx(1 / 3)
    assert len(embed.calls) == 1  # both texts in one batch
    assert len(embed.calls[0]) == 5


def test_ics_counts_several_similar_expected_sentences_and_respects_threshold() -> None:
    generated = "Atropine blocks muscarinic receptors. It speeds the heart."
    expected = "Atropine blocks muscarinic receptors. It raises heart rate. Atropine is an antimuscarinic."
    # N_GR = 2, N_ER = 3.
    # g1 = [1,0,0,0,0]: cos with e1 = 1.0, e2 = 0.0, e3 = 0.8          -> HS_1 = 2 at threshold 0.7
    # g2 = [0,3,4,0,0]: cos with e1 = 0.0, e2 = 3/5 = 0.6, e3 = 0.36    -> HS_2 = 0 at threshold 0.7
    # ICS(0.7) = (1/2) * (2/3 + 0/3) = 1/3
    assert ics(generated, expected, FakeEmbedder()) == pytest.approx(1 / 3)
    # threshold 0.6: g2 now matches e2 (0.6 >= 0.6)                    -> HS_2 = 1
    # ICS(0.6) = (1/2) * (2/3 + 1/3) = 1/2
    assert ics(generated, expected, FakeEmbedder(), threshold=0.6) == pytest.approx(0.5)
    # threshold 0.9: g1 only matches e1 (0.8 < 0.9)                    -> HS = [1, 0]
    # ICS(0.9) = (1/2) * (1/3 + 0) = 1/6
    assert ics(generated, expected, FakeEmbedder(), threshold=0.9) == pytest.approx(1 / 6)


def test_ics_empty_inputs_score_zero_without_embedding() -> None:
    embed = FakeEmbedder()
    assert ics("", "Atropine blocks muscarinic receptors.", embed) == 0.0
    assert ics("Atropine blocks muscarinic receptors.", "   ", embed) == 0.0
    assert embed.calls == []


def test_ics_rejects_an_embedder_returning_the_wrong_count() -> None:
    with pytest.raises(ValueError, match="vectors"):
        ics("The sky is blue.", "The sky is blue.", lambda texts: [[1.0]])


# --- KPCS -------------------------------------------------------------------------------------------


def test_kpcs_literal_and_semantic_coverage() -> None:
    embed = FakeEmbedder()
    generated = "Give 0.1  MG of atropine. It blocks Muscarinic receptors. It speeds the heart."
    points = ["0.1 mg", "muscarinic receptors", "raises heart rate", "crosses the blood brain barrier"]
    # "0.1 mg": literal (case and double space normalised)                         -> covered
    # "muscarinic receptors": literal (case-insensitive)                            -> covered
    # "raises heart rate" [0,1,0,0,0] vs "It speeds the heart" [0,3,4,0,0]: 0.6    -> covered at 0.6
    # "crosses the blood brain barrier" [0,0,0,1,0]: cos 0 with every sentence      -> not covered
    # KPCS = 3 / 4 = 0.75
    assert kpcs(generated, points, embed) == pytest.approx(0.75)
    # only the two points not found literally are embedded, with the 3 sentences, in one call
    assert embed.calls == [
        [
            "raises heart rate",
            "crosses the blood brain barrier",
            "Give 0.1  MG of atropine.",
            "It blocks Muscarinic receptors.",
            "It speeds the heart.",
        ]
    ]
    # a stricter threshold drops the semantic match: 2 / 4 = 0.5
    assert kpcs(generated, points, FakeEmbedder(), threshold=0.7) == pytest.approx(0.5)


def test_kpcs_all_literal_needs_no_embedding_and_edge_cases() -> None:
    embed = FakeEmbedder()
    assert kpcs("Answer: B) 0.1 mg", ["0.1 mg", "b) 0.1"], embed) == 1.0
    assert embed.calls == []
    assert kpcs("anything", [], embed) == 0.0
    assert kpcs("anything", ["  ", ""], embed) == 0.0
    assert kpcs("", ["0.1 mg"], embed) == 0.0


# --- AICS and the alpha sweep -------------------------------------------------------------------------


def test_aics_weighted_average() -> None:
    # 0.1 * (1/3) + 0.9 * 0.75 = 0.0333... + 0.675 = 0.708333...
    assert aics(1 / 3, 0.75, 0.1) == pytest.approx(0.7083333333)
    # the paper's Figure 4 averages: 0.1 * 0.76 + 0.9 * 0.12 = 0.076 + 0.108 = 0.184 (reported 0.18)
    assert aics(0.76, 0.12, 0.1) == pytest.approx(0.184)
    assert aics(0.5, 0.2, 0.0) == pytest.approx(0.2)
    assert aics(0.5, 0.2, 1.0) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="alpha"):
        aics(0.5, 0.5, 1.5)


ROWS = [(0.8, 0.6, True), (0.6, 0.4, True), (0.7, 0.1, False), (0.5, 0.1, False)]
# correct rows: mean ICS 0.7, mean KPCS 0.5; incorrect rows: mean ICS 0.6, mean KPCS 0.1


def test_alpha_sweep_means_and_gaps() -> None:
    sweep = alpha_sweep(ROWS)
    assert [r["alpha"] for r in sweep] == [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]
    by_alpha = {r["alpha"]: r for r in sweep}
    # alpha 0:   correct = 0.5;                       incorrect = 0.1;                gap = 0.4
    assert by_alpha[0.0]["correct"] == pytest.approx(0.5)
    assert by_alpha[0.0]["incorrect"] == pytest.approx(0.1)
    assert by_alpha[0.0]["gap"] == pytest.approx(0.4)
    # alpha 0.1: correct = 0.07 + 0.45 = 0.52;        incorrect = 0.06 + 0.09 = 0.15; gap = 0.37
    assert by_alpha[0.1]["correct"] == pytest.approx(0.52)
    assert by_alpha[0.1]["incorrect"] == pytest.approx(0.15)
    assert by_alpha[0.1]["gap"] == pytest.approx(0.37)
    # alpha 0.5: correct = 0.35 + 0.25 = 0.6;         incorrect = 0.3 + 0.05 = 0.35;  gap = 0.25
    assert by_alpha[0.5]["gap"] == pytest.approx(0.25)
    assert by_alpha[0.5]["n_correct"] == 2
    assert by_alpha[0.5]["n_incorrect"] == 2
    assert best_alpha(sweep) == 0.0


def test_best_alpha_when_semantic_alignment_separates_better() -> None:
    # gap(alpha) = alpha * (0.9 - 0.1) + (1 - alpha) * (0.2 - 0.2) = 0.8 * alpha -> largest at 0.5
    sweep = alpha_sweep([(0.9, 0.2, True), (0.1, 0.2, False)])
    assert best_alpha(sweep) == 0.5
    assert sweep[-1]["gap"] == pytest.approx(0.4)


def test_best_alpha_ties_go_to_the_smaller_alpha() -> None:
    # ICS = KPCS in every row, so every alpha gives gap 0.5 - 0.2 = 0.3 (up to float noise)
    sweep = alpha_sweep([(0.5, 0.5, True), (0.2, 0.2, False)], alphas=(0.5, 0.3, 0.2))
    assert all(r["gap"] == pytest.approx(0.3) for r in sweep)
    assert best_alpha(sweep) == 0.2


def test_alpha_sweep_with_one_class_only_has_no_gap() -> None:
    sweep = alpha_sweep([(0.9, 0.2, True)], alphas=(0.1,))
    assert sweep == [
        {"alpha": 0.1, "correct": pytest.approx(0.27), "incorrect": None, "gap": None, "n_correct": 1, "n_incorrect": 0}
    ]
    assert best_alpha(sweep) is None
    assert best_alpha([]) is None


# --- describe -------------------------------------------------------------------------------------------


def test_describe_uses_sample_std() -> None:
    stats = describe([1, 2, 3, 4])
    # mean = 10 / 4 = 2.5; squared deviations 2.25 + 0.25 + 0.25 + 2.25 = 5; 5 / (4 - 1) = 5/3
    assert stats["count"] == 4
    assert stats["mean"] == pytest.approx(2.5)
    assert stats["std"] == pytest.approx(math.sqrt(5 / 3))  # 1.29099...
    assert (stats["min"], stats["max"]) == (1.0, 4.0)


def test_describe_single_and_empty() -> None:
    assert describe([7]) == {"count": 1, "mean": 7.0, "std": 0.0, "min": 7, "max": 7}
    assert isinstance(describe([7])["max"], int)  # counts stay ints, so tables print "7", not "7.000"
    assert describe([]) == {"count": 0, "mean": None, "std": None, "min": None, "max": None}


# --- key points -----------------------------------------------------------------------------------------


def test_derive_key_points_order_clauses_and_cap() -> None:
    explanation = "Dose is weight based; give 0.01 mg/kg, max 0.5 mg. Repeat."
    # clauses: "Dose is weight based" | "give 0.01 mg/kg" | "max 0.5 mg" | "Repeat" (one word: skipped)
    assert derive_key_points("A", "0.01", explanation) == ["0.01", "A) 0.01", "Dose is weight based", "give 0.01 mg/kg"]
    assert derive_key_points("A", "0.01", explanation, max_points=10) == [
        "0.01",
        "A) 0.01",
        "Dose is weight based",
        "give 0.01 mg/kg",
        "max 0.5 mg",
    ]


def test_derive_key_points_deduplicates_and_handles_blanks() -> None:
    explanation = "Atropine is the antidote. atropine   IS the antidote! Atropine, given early"
    assert derive_key_points("C", "Atropine", explanation, max_points=10) == [
        "Atropine",
        "C) Atropine",
        "Atropine is the antidote",
        "given early",
    ]
    assert derive_key_points("B", "", "") == []
    assert derive_key_points("B", "Iron", "", max_points=0) == []


# --- answer_letter --------------------------------------------------------------------------------------

OPTIONS = {"A": "0.01", "B": "0.1", "C": "Atropine", "D": "Iron deficiency anaemia"}


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Answer: B", "B"),
        ("The answer is b) 0.1", "B"),
        ("**Answer:** C", "C"),
        ("ANSWER: d", "D"),
        ("Final answer - [B]", "B"),
        ("The correct answer is option (d).", "D"),
        ("I would choose option c", "C"),
        ("I'll go with A.", "A"),
        ("(C)", "C"),
        ("(C) is the right one", "C"),
        ("D) Iron deficiency", "D"),
        ("D. Iron deficiency", "D"),
        ("D: yes", "D"),
        ("B", "B"),
        ("c", "C"),
        ("B is the correct answer.", "B"),
        ("The correct option is C.", "C"),
        ("Option B is correct because 0.1 is the usual dose.", "B"),
        ("Option A is wrong; the answer is B.", "B"),
        ("The answer is B. Option A would be too low.", "B"),
        ("C) Atropine. Option A would cause harm.", "C"),
        ("answer is A, option B is incorrect", "A"),
        ("Answer: A\nExplanation: option (B) is wrong", "A"),
        ("The answer is (A) 0.01; (B) is wrong.", "A"),
        # no letter at all: the text of exactly one option decides
        ("The answer is a drug called atropine", "C"),  # "a" + word is an article, not option A
        ("Atropine is the drug of choice here.", "C"),
        ("It is 0.1 per cent", "B"),
        ("iron deficiency anaemia is most likely", "D"),
    ],
)
def test_answer_letter_finds_the_choice(reply: str, expected: str) -> None:
    assert answer_letter(reply, OPTIONS) == expected


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "I am not sure.",
        "The answer is A or B",
        "I pick A/B",
        "(A) and (B) both",
        "Either A) or B) could be right",
        "Both 0.01 and 0.1 appear in guidelines",
        "The answer is not A.",
        "The dose is 0.15 mg",  # 0.1 inside 0.15 is no match
        "Answer: The patient has anaemia",
    ],
)
def test_answer_letter_none_when_absent_or_ambiguous(reply: str) -> None:
    assert answer_letter(reply, OPTIONS) is None


def test_answer_letter_ignores_letters_that_are_not_options_and_keeps_key_case() -> None:
    assert answer_letter("Answer: E", OPTIONS) is None
    assert answer_letter("answer: b", {"a": "x", "b": "y"}) == "b"
    # a longer option containing a shorter one wins over it
    assert answer_letter("It is iron deficiency.", {"A": "iron", "B": "iron deficiency"}) == "B"


# --- counts and rates -----------------------------------------------------------------------------------


def test_accuracy_distribution_persistence_and_turns() -> None:
    assert accuracy([True, False, True, True]) == 0.75
    assert accuracy([]) is None
    assert distribution([True, False, True]) == {"correct": 2, "incorrect": 1}
    assert distribution([]) == {"correct": 0, "incorrect": 0}
    # asks about corrected records r1, r2: (r1 ok), (r1 wrong), (r2 ok) -> 2/3; r9 is ignored
    asks = [("r1", True), ("r1", False), ("r2", True), ("r9", False)]
    assert persistence_rate(asks, {"r1", "r2"}) == pytest.approx(2 / 3)
    assert persistence_rate(asks, set()) is None
    assert turns_to_correct([False, False, True, True]) == 3
    assert turns_to_correct([False]) is None
