"""A memory sentence spliced from two of the expert's sentences at a shared phrase (session 15, fresh24's truth-883)."""

from __future__ import annotations

from memory.grounding import GateReason, check
from memory.models import MemoryType
from memory.splices import spliced
from tests.memory.corrections import rejected_then_accepted

QUESTION = "Best bedside guide to fluid resuscitation? A) Urine output B) CVP C) Pulse rate D) Blood pressure"
SAID = (
    "CVP alone predicts fluid responsiveness poorly. The most reliable bedside guide is hourly urine output "
    "through a catheter: aim for 0.5 mL/kg/h in adults. In burns, too, the Parkland volume is titrated against "
    "the urine output."
)


def test_a_sentence_that_turns_from_one_expert_sentence_into_another_is_refused() -> None:
    facts = rejected_then_accepted(
        QUESTION, "B) CVP. It measures filling directly.", [SAID], "Thanks. A) Urine output."
    )
    joined = (
        "The Parkland volume is titrated against the urine output through a catheter: aim for 0.5 mL/kg/h in adults."
    )
    verdict = check(joined, MemoryType.RESIDUAL, facts)
    assert (verdict.ok, verdict.reason) == (False, GateReason.UNSAID) and "spliced" in verdict.detail
    # each sentence as the expert said it, or shortened, passes
    assert check(
        "The most reliable bedside guide is hourly urine output through a catheter.", MemoryType.RESIDUAL, facts
    ).ok
    assert check("In burns the Parkland volume is titrated against the urine output.", MemoryType.RESIDUAL, facts).ok


def test_a_shortened_sentence_or_two_sentences_joined_whole_are_no_splice() -> None:
    source = [
        "The extrinsic, death-receptor pathway goes through Fas and caspase-8. Nobody calls that the extrinsic pathway."
    ]
    assert spliced("The extrinsic pathway goes through Fas and caspase-8.", source) is None
    two = ["Ethambutol causes optic neuritis. Chloroquine causes a bull's eye maculopathy."]
    assert spliced("Ethambutol causes optic neuritis, and chloroquine causes a bull's eye maculopathy.", two) is None
    assert spliced("Ethambutol causes optic neuritis. Chloroquine causes a bull's eye maculopathy.", two) is None
