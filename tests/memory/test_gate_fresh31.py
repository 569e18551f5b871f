"""The truth gate on what fresh31 found (session 19, read in full): a pronoun after "But" still points back
to the option named before it, and letter-only corrections in lower case or after "nope" name their option."""

from __future__ import annotations

import pytest

from memory.gate_terms import GateReason
from memory.grounding import check
from memory.letters import letters_named, number_alone, without_verdicts
from memory.models import MemoryType
from memory.option_gate import known_answers
from memory.options import parse_options
from memory.subjects import swapped_subject
from memory.wording import negated_spans, positive_text
from tests.memory.corrections import rejected_then_accepted

BONE = (
    "A man of seventy with bone pain, a thick skull and a high alkaline phosphatase most likely has: "
    "A) Paget's disease B) Osteomalacia C) Fibrous dysplasia D) Multiple myeloma"
)
BONE_SAID = [
    "Fibrous dysplasia can thicken the skull, true. But it starts in childhood, usually affects a single bone "
    "and stops growing after puberty. A thick skull with a high alkaline phosphatase at seventy is Paget's disease."
]


def test_a_clause_opening_with_but_it_is_about_the_option_named_before() -> None:
    # fresh31's truth-1093: what the expert said of the rejected option through "But it's ..." was stored
    # of the accepted option, and the gate passed it because every clause was the expert's own
    facts = rejected_then_accepted(BONE, "C) Fibrous dysplasia. It thickens bone.", BONE_SAID, "Thanks, A) Paget's.")
    assert known_answers(facts).accepted == {"A"}
    moved = "Paget's disease starts in childhood, usually affects a single bone and stops growing after puberty."
    assert swapped_subject(moved, facts, facts.source_said) is not None
    verdict = check(moved, MemoryType.RESIDUAL, facts)
    assert not verdict.ok and "another" in verdict.detail
    # said of its own subject, the same clause is no swap (whether a memory about the rejected option is
    # kept is another check's: it is, only worded as a mistake to avoid)
    kept = "Fibrous dysplasia starts in childhood, usually affects a single bone and stops growing after puberty."
    assert swapped_subject(kept, facts, facts.source_said) is None


NODES = (
    "Lymph from the tip of the tongue drains first into: A) Submandibular B) Submental C) Jugulo-omohyoid D) Parotid"
)


@pytest.mark.parametrize(
    ("turn", "letter"),
    [
        ("no, the answer is b", "B"),  # fresh31's truth-1081
        ("nope... option b", "B"),  # fresh31's truth-1095
        ("wrong - D", "D"),
        ("Nope, c.", "C"),
        ("wrong, go with d", "D"),
        ("the answer is b. The tip drains to the submental nodes.", "B"),
    ],
)
def test_a_letter_after_a_dismissal_or_in_lower_case_is_the_verdict(turn: str, letter: str) -> None:
    options = parse_options(NODES)
    assert letters_named(turn, options) == {letter}
    facts = rejected_then_accepted(NODES, "A) Submandibular. It drains the lips.", [turn], "Okay.")
    assert known_answers(facts).accepted == {letter}


@pytest.mark.parametrize(
    ("turn", "letter"), [("nope. first option", "A"), ("nah, second one", "B"), ("wrong, it's the fourth", "D")]
)
def test_a_place_after_a_dismissal_is_the_verdict(turn: str, letter: str) -> None:
    # fresh31's truth-1109: "nope. first option" named nothing, so nothing was stored at all
    assert number_alone(turn, parse_options(NODES)) == {letter}
    assert without_verdicts(turn).strip(" ,.") in {"", "wrong"}


@pytest.mark.parametrize("turn", ["No.", "Nope", "Correct", "the answer is a reduction in flow", "No, no."])
def test_no_letter_is_read_into_words(turn: str) -> None:
    options = parse_options(NODES)
    assert letters_named(turn, options) == set() and number_alone(turn, options) == set()


VECTOR = "Which of these is not spread by ticks? A) Lyme disease B) Typhoid C) Babesiosis D) Tularaemia"


def test_a_negated_verb_inside_the_subject_ends_at_the_main_copula() -> None:
    # fresh31's truth-1092: "The one lice don't transmit is Q fever" read as denying Q fever, so the spelt-out
    # answer to a "not transmitted" question was refused as negated and the corrected fact never stored
    said = ["Ticks carry Lyme disease, babesiosis and tularaemia. The one ticks don't spread is typhoid."]
    assert negated_spans("The one ticks do not spread is typhoid") == ["spread"]
    facts = rejected_then_accepted(VECTOR, "C) Babesiosis.", said, "Thanks, B) Typhoid.")
    assert known_answers(facts).accepted == {"B"}
    spelt = "For the question 'Which of these is not spread by ticks', the answer is Typhoid."
    assert check(spelt, MemoryType.RESIDUAL, facts).ok
    # a relative word keeps the copula inside what is negated; a plain denial is still one
    assert negated_spans("It doesn't cause what is called pellagra") == ["cause what is called pellagra"]
    assert positive_text("Ticks don't spread typhoid") == ""
    assert not check("Ticks spread typhoid.", MemoryType.RESIDUAL, facts).ok


NODE = "Virchow's node lies in the: A) Right supraclavicular fossa B) Left supraclavicular fossa C) Axilla D) Groin"


def test_a_name_the_expert_only_mentioned_was_not_asked_about() -> None:
    # fresh31's truth-1113: "The user asks about Langer's lines" after a question on Kraissl's lines, where the
    # expert named Langer's only to say the chatbot had mixed them up
    said = ["No, you are mixing it up with the Delphian node, in front of the larynx. Virchow's is on the left."]
    facts = rejected_then_accepted(NODE, "A) Right supraclavicular fossa.", said, "I see, B) Left.")
    verdict = check("The user asks about the Delphian node.", MemoryType.USER_QUESTION, facts)
    assert not verdict.ok and verdict.reason is GateReason.MISREPORTED
    assert check("The user asks about Virchow's node.", MemoryType.USER_QUESTION, facts).ok
    assert check("The user asks where Virchow's node lies.", MemoryType.USER_QUESTION, facts).ok
    # an acronym or a bracketed short form is another way of writing what was asked (fresh22's truth-836)
    assert check("The user asks where Virchow's node (VN) lies.", MemoryType.USER_QUESTION, facts).ok
