"""The truth gate on what fresh30 found (sessions 18 and 19), in other words: British "-ise" spellings of an
option, and the scope of "without"."""

from __future__ import annotations

from memory.option_gate import known_answers
from memory.option_names import alike
from memory.options import Answers, named_options, parse_options
from memory.wording import positive_text
from tests.memory.corrections import rejected_then_accepted

RAYS = "How do X-rays damage a cell? A) Heating B) Ionization C) Drying D) Stretching"


def test_an_option_spelt_with_ise_is_named_by_its_ize_spelling() -> None:
    # fresh30's truth-1080: "Ionisation is the mechanism" did not name "Ionization", so the expert's answer
    # was unknown and nothing said what the question's answer was
    said = ["Not heat at these doses. Ionisation is the mechanism: electrons knocked out, DNA broken."]
    assert named_options(said[0], parse_options(RAYS), positive_only=True) == {"B"}
    facts = rejected_then_accepted(RAYS, "A) Heating.", said, "Understood, B) Ionization.")
    assert known_answers(facts).accepted == {"B"}
    assert alike("ionisation", "ionization") and alike("organise", "organize") and alike("ionis", "ioniz")
    assert not alike("ionisation", "isolation")


SCALE = "Pain rated none, mild, moderate or severe is on which scale? A) Ratio B) Interval C) Ordinal D) Nominal"


def test_without_negates_its_noun_phrase_not_the_clause_after_it() -> None:
    # fresh30's truth-1072: "Ordered categories without equal intervals make an ordinal scale" read as
    # denying "ordinal", so neither option was known as accepted and the right answer was refused as rejected
    said = ["They're categories, yes. Ranked categories without equal steps make an ordinal scale."]
    options = parse_options(SCALE)
    assert named_options(said[0], options, positive_only=True) == {"C"}
    facts = rejected_then_accepted(SCALE, "D) Nominal. They are just named groups.", said, "Thanks, C) Ordinal.")
    assert known_answers(facts) == Answers(accepted=frozenset({"C"}), rejected=frozenset({"D"}))
    # the phrase itself is still negated: a scale without equal steps is not said to have them
    assert positive_text("a scale without equal steps") == "a scale"
    assert positive_text("given without an interval scale in mind") == "given"
