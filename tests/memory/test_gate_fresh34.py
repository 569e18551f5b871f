"""The truth gate on what fresh34 found (session 22, read in full): a chatbot turn that picks an option by
letter chose that option only, whatever other options its reasons mention."""

from __future__ import annotations

from memory.grounding import check
from memory.models import MemoryType
from memory.option_gate import known_answers
from tests.memory.corrections import rejected_then_accepted

SEMINOMA = (
    "A man with stage II testicular seminoma is treated by: A) Chemotherapy B) Orchidectomy + Chemotherapy "
    "C) Orchidectomy alone D) Surveillance"
)
EXPERT = ["No. The testis always comes out first: radical inguinal orchidectomy, then chemotherapy for the nodes."]


def test_a_lettered_pick_chose_that_option_and_not_the_ones_its_reasons_name() -> None:
    # fresh34's truth-1208: "A) Radiotherapy ... sparing the patient disfiguring surgery" named both words of
    # "Surgery + Radiotherapy", so the answer the expert then explained counted as a rejected pick and was never
    # spelt out (no word of that option is its own: each is another option's too); this case is in my own words
    chatbot = "A) Chemotherapy. Platinum chemotherapy cures most of these and spares him an orchidectomy."
    facts = rejected_then_accepted(SEMINOMA, chatbot, EXPERT, "Understood, B) Orchidectomy + Chemotherapy.")
    answers = known_answers(facts)
    assert answers.accepted == {"B"} and answers.rejected == {"A"}
    spelt = "For the question 'A man with stage II testicular seminoma is treated by', the answer is "
    assert check(spelt + "Orchidectomy + Chemotherapy.", MemoryType.RESIDUAL, facts).ok
    assert not check(spelt + "Chemotherapy.", MemoryType.RESIDUAL, facts).ok


def test_a_pick_without_a_letter_still_chose_every_option_it_names() -> None:
    chatbot = "Surveillance is enough here; the scan can wait."
    facts = rejected_then_accepted(SEMINOMA, chatbot, EXPERT, "Understood, B) Orchidectomy + Chemotherapy.")
    assert "D" in known_answers(facts).rejected
