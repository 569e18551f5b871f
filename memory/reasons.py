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


def unsaid_reason(text: str, evidence: Evidence) -> GateVerdict | None:
    """A reason for the answer that the source never gave, in a memory whose other words pass.

    "Median, as the median is the most representative average for this caries data", after an expert who
    said only "Should be C." (fresh33's truth-1179): the words of a because-clause that the question does not
    hold must come mostly from what the source said, or it is a reason nobody gave.
    """
    asked = set(stems(evidence.question))
    said = stemset([*evidence.source_said, evidence.reference])
    for reason in _REASON.findall(text):
        new = [w for w in dict.fromkeys(stems(reason)) if w not in asked]
        foreign = [w for w in new if w not in said]
        if new and len(foreign) * 2 > len(new):
            detail = f"a reason nobody gave: {reason.strip()!r}"
            return GateVerdict(ok=False, reason=GateReason.UNSAID, detail=detail, unsupported=foreign)
    return None
