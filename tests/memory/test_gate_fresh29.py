"""The truth gate on what fresh29's first 21 conversations found (session 18), each case in other words.

A place written in figures ("1st option"), a lower-case letter after "should be" ("should be d"), and a
user memory that turns the expert's advice into the user's own wish.
"""

from __future__ import annotations

from memory.grounding import GateReason, check
from memory.letters import letters_left, letters_named
from memory.models import MemoryType
from memory.option_gate import known_answers
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


def test_a_place_after_it_s_the_names_that_option() -> None:
    # fresh29's truth-1032: "no - it's the fourth" had no "one" after the place, and named nothing
    for turn, letter in (("no - it's the third", "C"), ("Should be the 2nd.", "B"), ("nope, it is the first!", "A")):
        facts = rejected_then_accepted(KIDNEY, "B) Loop of Henle.", [turn], "Okay.")
        assert letters_named(turn) == {letter}, turn
        assert known_answers(facts).accepted == {letter} or letter == "B", turn
    # a place that goes on into a word is no verdict
    assert letters_named("it's the first-line treatment here") == set()


SPIRO = (
    "Which pair of values is normal for an adult at rest? A) Rate 12-20/min, tidal volume 500 ml "
    "B) Rate 500/min, tidal volume 12-20 ml C) Rate 30-40/min, tidal volume 150 ml"
)


def test_a_mistake_to_avoid_names_no_option_nobody_rejected() -> None:
    # fresh29's truth-1041: the expert described the right option in other words, so it was not known as
    # accepted, and "avoid answering <the right option>" was stored as a mistake
    said = ["Not that way round: breathing runs at 12 to 20 a minute and each breath moves about half a litre."]
    facts = rejected_then_accepted(SPIRO, "B) Rate 500/min, tidal volume 12-20 ml.", said, "Got it.")
    assert known_answers(facts).rejected == {"B"}
    wrong = "On normal breathing at rest, avoid this mistake: answering Rate 12-20/min, tidal volume 500 ml."
    verdict = check(wrong, MemoryType.LLM_RESPONSE, facts, mistake=True)
    assert (verdict.ok, verdict.reason) == (False, GateReason.OTHER_OPTION), verdict
    right = "On normal breathing at rest, avoid this mistake: answering Rate 500/min, tidal volume 12-20 ml."
    assert check(right, MemoryType.LLM_RESPONSE, facts, mistake=True).ok


APGAR_LIKE = (
    "The three parts of the Glasgow coma scale are? A) Pupils, pulse, pressure "
    "B) Eyes, verbal, motor C) Eyes, pupils, motor"
)


def test_a_rejected_option_of_several_parts_written_out_whole_is_refused() -> None:
    # fresh29's truth-1032: "The APGAR acronym stands for <the rejected list>, so ... the right option is
    # <the accepted list>": the checks that read up to each comma never saw the rejected option whole
    facts = rejected_then_accepted(APGAR_LIKE, "C) Eyes, pupils, motor.", ["no - it's the second"], "B it is.")
    assert known_answers(facts).accepted == {"B"}
    guessed = "The Glasgow coma scale has Eyes, pupils, motor, so the right option is Eyes, verbal, motor."
    verdict = check(guessed, MemoryType.RESIDUAL, facts)
    assert (verdict.ok, verdict.reason) == (False, GateReason.REJECTED_ANSWER), verdict
    assert check("The parts of the Glasgow coma scale are Eyes, verbal, motor.", MemoryType.RESIDUAL, facts).ok


def test_the_chatbot_s_closing_line_without_its_letter_is_not_the_expert_s() -> None:
    # fresh29's truth-1043: "Understood: A) <option>" with its letter dropped was stored as the expert's
    said = ["Wrong again, the first one: an adult at rest breathes 12 to 20 times a minute, half a litre each."]
    thanks = "Understood: A) Rate 12-20/min, tidal volume 500 ml."
    facts = rejected_then_accepted(SPIRO, "C) Rate 30-40/min, tidal volume 150 ml.", said, thanks)
    assert known_answers(facts).accepted == {"A"}
    verdict = check("Understood: Rate 12-20/min, tidal volume 500 ml.", MemoryType.RESIDUAL, facts)
    assert (verdict.ok, verdict.reason) == (False, GateReason.MODEL_WORDS), verdict
    # the expert's own "The answer is A." spelt out is the expert's, though the chatbot says the same
    said = ["No. The answer is A. An adult at rest breathes 12 to 20 times a minute, half a litre each."]
    thanks = "Understood, the answer is A) Rate 12-20/min, tidal volume 500 ml."
    facts = rejected_then_accepted(SPIRO, "C) Rate 30-40/min, tidal volume 150 ml.", said, thanks)
    assert check("The answer is Rate 12-20/min, tidal volume 500 ml.", MemoryType.RESIDUAL, facts).ok
