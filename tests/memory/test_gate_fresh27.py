"""The truth gate on what fresh27 and fresh28 found (session 17), each case in other words.

A letter written "a)" beside an option that opens with a letter and a hyphen ("B-cell"), and a turn that
says only "second one"; a name written as one word ("MacIntosh") for an option of two; the rejected answer
said in the question's words before a comma; a source sentence copied after its lead-in with a subject
it only lists further on; a user said to ask about an option's word, or to hold the quiz case's wish.
"""

from __future__ import annotations

from memory.grounding import Evidence, GateReason, check
from memory.letters import letters_named, unletter
from memory.models import MemoryType
from memory.option_gate import known_answers
from memory.options import parse_options
from memory.subject_copies import replaced_subject
from tests.memory.corrections import rejected_then_accepted

R, Q = MemoryType.RESIDUAL, MemoryType.USER_QUESTION

STOMACH = "Which cells give rise to most lymphomas of the stomach? A) B-cell B) T-cell C) NK-cell D) Plasma cell"


def test_an_option_that_opens_with_a_letter_and_a_hyphen_is_not_read_as_that_letter() -> None:
    # fresh28's truth-997: "a)" was read, but the spelt-out "the answer is B-cell" had its "B" taken for
    # the letter of option B and became "T-cell-cell", the rejected answer
    facts = rejected_then_accepted(STOMACH, "B) T-cell. MALT is T-cell tissue.", ["a)"], "Right, A) B-cell.")
    assert known_answers(facts).accepted == {"A"}
    spelt = "For the question 'Which cells give rise to most lymphomas of the stomach', the answer is B-cell."
    assert unletter(spelt, parse_options(STOMACH)) == spelt
    assert letters_named("the answer is B-cell") == set()
    assert letters_named("the answer is B.") == {"B"}
    assert check(spelt, R, facts).ok


WRIST = "Which nerve is injured in wrist drop? A) Median B) Radial C) Ulnar D) Axillary"


def test_a_turn_that_only_names_a_place_names_that_option() -> None:
    # fresh28's truth-983: "second one", with no "the", was no verdict and nothing shared was stored
    for turn in ("second one", "Second option.", "no, the second", "Second."):
        facts = rejected_then_accepted(WRIST, "A) Median.", [turn], "B) Radial.")
        assert known_answers(facts).accepted == {"B"}, turn
    # a place inside a sentence is still no verdict without "the"
    facts = rejected_then_accepted(WRIST, "A) Median.", ["A second one follows later."], "B) Radial.")
    assert known_answers(facts).accepted == set()


BLADE = "Which laryngoscope blade is curved? A) Miller blade B) Mac Intosh blade C) Wisconsin blade"


def test_an_option_of_two_words_is_named_when_written_as_one() -> None:
    # fresh27's truth-954: "a McDonald purse-string stitch" did not name "Mc Donald stitch", and the
    # answer was never stored
    said = ["The Miller is the straight one. The curved blade is the MacIntosh, its tip goes in the vallecula."]
    facts = rejected_then_accepted(BLADE, "A) Miller blade. It is curved.", said, "B) Mac Intosh blade.")
    assert known_answers(facts).accepted == {"B"}
    assert known_answers(rejected_then_accepted(BLADE, "A) Miller blade.", ["Not that one."], "OK.")).accepted == set()


NOTCH = "The radial notch is a part of: A) Radius bone B) Ulna bone C) Humerus bone D) Scapula"


def test_the_rejected_answer_in_the_question_s_words_before_a_comma_is_refused() -> None:
    # fresh27's truth-948: a letter-only correction, and the extractor's reason was the chatbot's pick in
    # the question's own words ("a part of the mandible" for "Mandibular fossa is a part of")
    facts = rejected_then_accepted(NOTCH, "A) Radius bone.", ["Nope. B"], "B) Ulna bone.")
    guessed = "The radial notch is a part of the radius, so for the radial notch the right option is Ulna bone."
    verdict = check(guessed, R, facts)
    assert (verdict.ok, verdict.reason) == (False, GateReason.REJECTED_ANSWER), verdict
    assert check("For the question 'The radial notch is a part of', the answer is Ulna bone.", R, facts).ok


def test_a_source_sentence_after_its_lead_in_copied_with_another_subject_is_refused() -> None:
    # fresh28's truth-1008: "It's the parotid: the facial nerve ... into its temporal, ..., buccal, ...
    # branches" stored as "The buccal nerve ...": the new subject is a word the sentence only lists
    said = "It's the carpal tunnel: the median nerve passes under the flexor retinaculum beside the flexor tendons."
    copied = "The flexor nerve passes under the flexor retinaculum beside the flexor tendons."
    assert replaced_subject(copied, [f"No. {said}"]) is not None
    # the subject the lead-in names is the sentence's own ("Insulin does that: the hormone ...")
    lead = "Insulin does that: the hormone drives potassium into cells through the sodium-potassium pump."
    assert replaced_subject("Insulin drives potassium into cells through the sodium-potassium pump.", [lead]) is None


EYE = "Which tissue gives the eye most of its focusing power? A) Cornea B) Lens C) Vitreous D) Aqueous humour"
SUGAR = (
    "A man with type 2 diabetes failing on metformin does not want to take injections. Which drug next? "
    "A) Insulin glargine B) Empagliflozin C) Exenatide"
)


def user_check(facts: Evidence, text: str) -> tuple[bool, GateReason]:
    verdict = check(text, Q, facts)
    return verdict.ok, verdict.reason


def test_a_user_memory_neither_asks_about_an_option_s_word_nor_owns_the_quiz_case() -> None:
    # fresh27's truth-949: the user asked which part focuses most, not about the lens
    eye = rejected_then_accepted(EYE, "B) Lens.", ["The cornea does, about two thirds of it."], "A) Cornea.")
    assert user_check(eye, "The user asks about the focusing power of the lens.") == (False, GateReason.MISREPORTED)
    assert user_check(eye, "The user asks which tissue gives the eye most of its focusing power.")[0]
    # fresh28's truth-979: the case's patient, not the user, does not want injections
    said = ["Exenatide is an injection and glargine too, so empagliflozin: it is oral."]
    sugar = rejected_then_accepted(SUGAR, "C) Exenatide.", said, "B) Empagliflozin.")
    refused = user_check(sugar, "The user does not want to take injections.")
    assert refused == (False, GateReason.MISREPORTED)
