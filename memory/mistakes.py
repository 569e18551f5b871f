"""Memories worded as a mistake to avoid: which options they may name.

Pure. A mistake to avoid may name the answer the source rejected; never the one it accepted.
"""

from __future__ import annotations

from memory.gate_terms import Evidence, GateReason, GateVerdict
from memory.option_gate import known_answers
from memory.options import named_options, parse_options


def mistake_check(text: str, evidence: Evidence) -> GateVerdict:
    """A mistake to avoid may name the rejected answer, never the answer the source accepted.

    Where that answer is not known, it names no option but the rejected ones: "avoid answering RBC 2-6oC,
    Platelet 20-22oC, FFP-30oC" (fresh29's truth-1041) named the right option, which the source described in
    other words; the chatbot's pick was the option with the same words in another order.
    """
    options = parse_options(evidence.question)
    known = known_answers(evidence)
    named = named_options(text, options)
    if named & known.accepted:
        letter = sorted(named & known.accepted)[0]
        return GateVerdict(
            ok=False,
            reason=GateReason.ANSWER_AS_MISTAKE,
            detail=f"calls the accepted answer {letter}) {options[letter]} a mistake",
        )
    if not known.accepted and named - known.rejected:
        letter = sorted(named - known.rejected)[0]
        return GateVerdict(
            ok=False,
            reason=GateReason.OTHER_OPTION,
            detail=f"calls {letter}) {options[letter]} a mistake, which nobody rejected",
        )
    return GateVerdict(ok=True, reason=GateReason.SUPPORTED, detail="worded as a mistake to avoid")
