"""What a user memory may report: a question with no denial the user made, a term the user names (session 15)."""

from __future__ import annotations

from memory.grounding import GateReason, check
from memory.models import MemoryType
from memory.user_reports import names_a_term
from tests.memory.corrections import rejected_then_accepted

Q = MemoryType.USER_QUESTION


def test_a_user_memory_may_not_report_a_question_with_a_denial_the_user_never_made() -> None:
    # session 15, from fresh24's truth-891: "a connective tissue tumour that is not a connective tissue tumour"
    question = "Which one is a tumour of connective tissue? A) Lipoma B) Melanoma C) Carcinoma D) Papilloma"
    said = [
        "Lipoma: fat is a connective tissue. Melanoma comes from melanocytes and is not a connective tissue tumour."
    ]
    facts = rejected_then_accepted(question, "B) Melanoma. It grows in the dermis.", said, "I see. A) Lipoma.")
    verdict = check("The user asks about a tumour of connective tissue that is not connective tissue.", Q, facts)
    assert (verdict.ok, verdict.reason) == (False, GateReason.MISREPORTED)
    assert check("The user asks which one is a tumour of connective tissue.", Q, facts).ok


def test_a_consequence_or_a_measure_is_not_the_name_of_a_term() -> None:
    # session 15: "too short for" (fresh24's truth-888) and "which means" (fresh23's truth-851) name no term
    assert names_a_term("The user writes AD for autosomal dominant.")
    assert names_a_term("The user says LSCS for lower segment caesarean section.")
    assert not names_a_term("The user states that 2 days is too short for immune complexes to form.")
    assert not names_a_term("The user mentions a low Vd, which means the drug stays in the plasma.")
    assert not names_a_term("The user states that Crescendo angina means angina that gets worse.")
