"""Correction conversations for the truth-gate tests, split by speaker as the gate sees them."""

from __future__ import annotations

from memory.grounding import Evidence


def rejected_then_accepted(question: str, chatbot: str, sme: list[str], thanks: str) -> Evidence:
    """The expert asks, the chatbot answers wrong, the expert corrects, the chatbot thanks."""
    return Evidence(
        question=question,
        source_said=sme,
        user_said=[question, *sme],
        model_said=[chatbot, thanks],
        model_rejected=[chatbot],
    )
