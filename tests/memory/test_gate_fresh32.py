"""The truth gate on what fresh32 found (session 20, read in full): option codes such as TNM stages are
words of their own, a pronoun with its verb ends what a negation covers, a negative question's answer may
be denied in other words, and a memory may not drop the question's subject that opens a sentence."""

from __future__ import annotations

from memory.grounding import check
from memory.models import MemoryType
from memory.option_gate import known_answers
from memory.options import named_options, parse_options
from memory.wording import negated_spans, positive_text, stems, words
from tests.memory.corrections import rejected_then_accepted

STAGE = (
    "A 3 cm breast lump with no palpable axillary nodes and no metastases is staged: "
    "A) T1N0M0 B) T2N0M0 C) T0N2M0 D) T2N1M0"
)
STAGE_SAID = [
    "No. A lump over 2 cm and up to 5 cm is T2, and with no nodes felt and no spread anywhere this is T2N0M0."
]


def test_a_code_of_letters_digits_and_letters_is_one_word() -> None:
    assert words("HbA1c, CYP2C9 and T2N0M0") == ["hba1c", "cyp2c9", "t2n0m0"]
    assert stems("T2N0M0 and T2N0M1") == ["t2n0m0", "t2n0m1"]  # whole: cut to five letters they are one
    # a name and a number are both words, so the forms with a hyphen or a space match ("IGF-1", "NPHS 2");
    # a number with its unit or ending after it splits too: "5mg" is the number 5
    assert words("IGF1") == words("IGF-1") == ["igf", "1"]
    assert words("NPHS2") == words("NPHS 2")
    assert words("5mg on the 2nd day") == ["5", "2", "day"]


def test_a_code_nobody_said_is_unsaid_even_when_its_digits_were_said() -> None:
    # read as their digits, "T0N0M2" was the expert's "T2N0M0" reordered, and a stage nobody gave passed as said
    said = ["No. A lump over 2 cm and up to 5 cm is T2, and nothing has reached the nodes, so it is T2N0M0."]
    facts = rejected_then_accepted(STAGE, "D) T2N1M0. A lump this size has usually spread.", said, "B) then.")
    assert known_answers(facts).accepted == {"B"}
    assert check("A lump over 2 cm and up to 5 cm is T2.", MemoryType.RESIDUAL, facts).ok
    verdict = check("A lump over 2 cm and up to 5 cm is T0N0M2.", MemoryType.RESIDUAL, facts)
    assert not verdict.ok and verdict.unsupported == ["t0n0m2"]
    # guard: an option named by its whole code is that option alone
    options = parse_options(STAGE)
    assert named_options("It is T0N2M0.", options) == {"C"}
    assert named_options("this is T2N0M0", options) == {"B"}


def test_a_pronoun_and_its_verb_end_a_negation() -> None:
    said = "with no nodes felt and no spread anywhere this is T2N0M0"
    assert not any("T2N0M0" in span for span in negated_spans(said))
    assert "T2N0M0" in positive_text(said)
    assert negated_spans("There are no nodes it's that simple") == ["nodes"]
    # a pronoun without a verb after it is still inside the negation
    assert negated_spans("No nerve supplies this muscle") == ["nerve supplies this muscle"]
    assert negated_spans("It is not this one") == ["this one"]
    assert positive_text("It is not this one") == ""


def test_the_expert_s_stage_is_accepted_and_only_its_own_code_is_supported() -> None:
    facts = rejected_then_accepted(STAGE, "D) T2N1M0. A lump this size has usually spread.", STAGE_SAID, "B) then.")
    assert known_answers(facts).accepted == {"B"}
    assert known_answers(facts).rejected == {"D"}
    spelt = "A 3 cm breast lump with no palpable nodes and no metastases is staged T2N0M0."
    assert check(spelt, MemoryType.RESIDUAL, facts).ok
    # the same digits in another order are a stage nobody gave
    swapped = "A 3 cm breast lump with no palpable nodes and no metastases is staged T0N2M0."
    verdict = check(swapped, MemoryType.RESIDUAL, facts)
    assert not verdict.ok


SCURVY = "Which is not a feature of scurvy? A) Gum bleeding B) Poor wound healing C) Corkscrew hairs D) Night blindness"


def test_in_a_negative_question_the_expert_may_deny_the_answer_in_other_words() -> None:
    # fresh32's truth-1134: "What you don't see is sensory loss" for the option "Sensory changes", and the
    # chatbot closing on it; no option was known as accepted, so the answer was never spelt out
    said = ["No. Gums bleed, wounds break down and hairs coil. What scurvy does not give you is blindness."]
    facts = rejected_then_accepted(SCURVY, "A) Gum bleeding. Vitamin C keeps the gums intact.", said, "D) then.")
    assert known_answers(facts).accepted == {"D"}
    # the closing must agree: closing on an option the expert's words do not lean to accepts nothing
    said = ["No. Gums bleed and wounds break down. What scurvy does not give you is blindness."]
    other = rejected_then_accepted(SCURVY, "A) Gum bleeding. Vitamin C keeps the gums intact.", said, "C) then.")
    assert known_answers(other).accepted == set()


THYROID = (
    "The drug of choice for hyperthyroidism in the first trimester of pregnancy is: A) Carbimazole "
    "B) Propylthiouracil C) Radioactive iodine D) Propranolol"
)


def test_a_memory_may_not_drop_the_question_s_subject_that_opens_the_expert_s_sentence() -> None:
    # fresh32's truth-1117: "With vivax the gametocytes show up early ..." stored without "With vivax", as
    # if true of every Plasmodium; fresh7's truth-373 ("For a testis, Bouin's is the routine fixative")
    said = [
        "No, carbimazole can harm the embryo. In the first trimester propylthiouracil is preferred, because it "
        "crosses the placenta less and carries no embryopathy."
    ]
    facts = rejected_then_accepted(THYROID, "A) Carbimazole. It is the usual drug.", said, "B) then.")
    widened = "Propylthiouracil is preferred, because it crosses the placenta less and carries no embryopathy."
    verdict = check(widened, MemoryType.RESIDUAL, facts)
    assert not verdict.ok and "In the first trimester" in verdict.detail
    kept = "In the first trimester propylthiouracil is preferred, because it crosses the placenta less."
    assert check(kept, MemoryType.RESIDUAL, facts).ok
    # an opening on words the question lacks limits nothing the memory could drop
    other = ["With a large goitre, surgery is considered after the first trimester."]
    facts = rejected_then_accepted(THYROID, "A) Carbimazole. It is the usual drug.", other, "B) then.")
    assert check("Surgery is considered after the first trimester.", MemoryType.RESIDUAL, facts).ok
