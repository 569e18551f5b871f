"""A reason for the answer that the source never gave (issue 11's truth gate, from fresh33's truth-1179).

A memory may pass the whole-memory word check with a clause of its own: "Median, as the median is the most
representative average for this caries data", after an expert who said only "Should be C.". Its words
beyond the question's are the model's, and a because-clause is a claim a reader will take as the expert's.
"""

from __future__ import annotations

import re

from memory.gate_terms import Evidence, GateReason, GateVerdict
from memory.wording import stems, stemset

# a reason given for the answer: ", as the median is ...", "because ...", ", since ..." up to the clause's end
# (a full stop inside a number, "pH 7.4", does not end it)
_REASON = re.compile(r"(?:,\s*as|\bbecause|,\s*since)\s+((?:[^,;:.!?\n]|\.(?=\d))+)", re.IGNORECASE)
# what a mistake to avoid says is wrong with the answer: "answering 5mm, which is too deep for MTA"
_WHY_WRONG = re.compile(r"\bwhich\s+((?:[^,;:.!?\n]|\.(?=\d))+)", re.IGNORECASE)


def unsaid_reason(text: str, evidence: Evidence, *, mistake: bool = False) -> GateVerdict | None:
    """A reason for the answer that the source never gave, in a memory whose other words pass.

    "Median, as the median is the most representative average for this caries data", after an expert who
    said only "Should be C." (fresh33's truth-1179): the words of a because-clause that the question does not
    hold must come mostly from what the source said, or it is a reason nobody gave. In a ``mistake`` to avoid,
    so must a which-clause: "answering 5mm, which is too deep for MTA" after an expert who said only "first
    option" (fresh35's truth-1235), or the chatbot's own "which is a moderate level" (holdout2's mmcqa-15cebe53).
    """
    asked = set(stems(evidence.question))
    said = stemset([*evidence.source_said, evidence.reference])
    reasons = _REASON.findall(text) + (_WHY_WRONG.findall(text) if mistake else [])
    for reason in reasons:
        new = [w for w in dict.fromkeys(stems(reason)) if w not in asked]
        foreign = [w for w in new if w not in said]
        if new and len(foreign) * 2 > len(new):
            detail = f"a reason nobody gave: {reason.strip()!r}"
            return GateVerdict(ok=False, reason=GateReason.UNSAID, detail=detail, unsupported=foreign)
    return None
