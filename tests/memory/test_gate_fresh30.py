"""The truth gate on what fresh30 found (session 18), in other words: British "-ise" spellings of an option."""

from __future__ import annotations

from memory.option_gate import known_answers
from memory.option_names import alike
from memory.options import named_options, parse_options
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
