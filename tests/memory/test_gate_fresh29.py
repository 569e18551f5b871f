"""The truth gate on what fresh29's first 21 conversations found (session 18), each case in other words.

A place written in figures ("1st option"), a lower-case letter after "should be" ("should be d"), and a
user memory that turns the expert's advice into the user's own wish.
"""

from __future__ import annotations

from memory.grounding import GateReason, check
from memory.models import MemoryType
from memory.option_gate import known_answers
from memory.options import letters_left, letters_named
from tests.memory.corrections import rejected_then_accepted

Q = MemoryType.USER_QUESTION

KIDNEY = "Which segment reabsorbs most filtered sodium? A) Proximal tubule B) Loop of Henle C) Collecting duct"


def test_a_place_written_in_figures_names_that_option() -> None:
    # fresh29's truth-1018: "1st option" was no verdict, and nothing was stored
    for turn, letter in (("1st option", "A"), ("no, the 2nd one", "B"), ("3rd.", "C")):
        facts = rejected_then_accepted(KIDNEY, "B) Loop of Henle.", [turn], "Okay.")
        assert known_answers(facts).accepted == {letter}, turn
    # a figure that is part of an option's name is no place
    assert letters_named("The 1st premolar has two roots.") == set()
    assert letters_left("so the 2nd option is right") == ["2nd option"]


def test_a_lower_case_letter_after_should_be_names_that_option() -> None:
    # fresh29's truth-1025: "should be d" named nothing, as only a capital letter counted there
    for turn in ("should be c", "it should have been c.", "Should've been c!"):
        facts = rejected_then_accepted(KIDNEY, "A) Proximal tubule.", [turn], "Okay, the collecting duct.")
        assert known_answers(facts).accepted == {"C"}, turn
    # an article in the middle of a sentence is no letter
    assert letters_named("it should be a short course, then review") == set()


ECTOPIC = (
    "What is the first step for a woman with a positive pregnancy test and pain but no sac in the uterus? "
    "A) Methotrexate B) Serial beta-hCG and transvaginal scan C) Laparotomy"
)


def test_a_user_memory_may_not_turn_the_expert_s_advice_into_the_user_s_wish() -> None:
    # fresh29's truth-1028: "the first step is to confirm it with hysteroscopy" became "The user states that
    # they want to confirm the diagnosis with hysteroscopy"
    said = ["Not methotrexate yet: the first step is to confirm it with serial beta-hCG and a transvaginal scan."]
    facts = rejected_then_accepted(ECTOPIC, "A) Methotrexate.", said, "Understood.")
    wish = "The user states that they want to confirm the diagnosis with serial beta-hCG and a transvaginal scan."
    verdict = check(wish, Q, facts)
    assert (verdict.ok, verdict.reason) == (False, GateReason.MISREPORTED), verdict
    # a wish said in the first person is the user's own
    asked = [*said, "I'd like the answer as the option's name, please."]
    facts = rejected_then_accepted(ECTOPIC, "A) Methotrexate.", asked, "Understood.")
    assert check("The user wants the answer as the option's name.", Q, facts).ok
