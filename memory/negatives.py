"""Negative questions ("Which drug is not used in ...?"): a memory must keep the answer on the "not" side.

Part of the truth gate (:mod:`memory.option_gate` runs it). Written in session 13 from the held-out run's
"Febuxostat is not used in the management of rheumatoid arthritis, so for the drug of choice in rheumatoid
arthritis the right option is Febuxostat": the extractor's sentence shape turned the answer into its
opposite. Pure and deterministic.
"""

from __future__ import annotations

import re

from memory.options import named_options, parse_options, question_stem
from memory.wording import NEGATION, sentences, stems, stemset

# a clause of a memory ends at a sentence mark, or at a comma that a connective follows ("..., so ...")
_PART = re.compile(r"[;!?\n]|(?<!\d):|:(?!\d)|\.(?!\d)|,\s*(?=(?:so|and so|therefore|hence|which|thus)\b)")
# words that keep a negative question's sense in a clause without "not": "the least likely", "all except"
_STILL_NEGATIVE = re.compile(
    r"\b(?:except|exception|least|unlikely|absent|lack\w*|fails?|avoid\w*|contraindicat\w*|spared?)\b", re.I
)
_FRAMED = re.compile(r"\b(?:answer|option|choice|correct|right)\b", re.I)
# the asking sentence asks for the option that is not something: "Which drug is not used", "all except";
# a premise's negation ("Tissue conditioners are not used for long as they") is no such question
_ASKS_NOT = re.compile(
    r"\b(?:which|what)\b[^?]*?(?:\bnot\b|n't\b|\bexcept\b|\bleast\b)|\bexcept\b|\bleast\s+(?:likely|common|probable)\b",
    re.I,
)


def asks_for_the_odd_one(question: str) -> bool:
    """Whether the question's asking sentence asks which option is not something ("Which ... is not ...")."""
    asking = sentences(question_stem(question))
    return bool(asking) and bool(_ASKS_NOT.search(asking[-1]))


def reversed_answer(text: str, question: str, accepted: frozenset[str]) -> str | None:
    """A clause that says the accepted answer of a negative question has what the question says it lacks.

    For "Which drug is not used in rheumatoid arthritis?", answered "Febuxostat": "for the drug of choice
    in rheumatoid arthritis the right option is Febuxostat" and "Febuxostat is used in the management of
    rheumatoid arthritis" both say the opposite of what the expert accepted. A clause names the accepted
    option, carries no negation, and either frames it as the answer to words of the question or shares
    half the question's content words at least. A quoted question keeps its "not", so "For the question
    'Which drug is not used ...', the answer is Febuxostat" is kept.
    """
    if not accepted or not asks_for_the_odd_one(question):
        return None
    options = parse_options(question)
    asked = set(stems(question_stem(question))) - stemset(options.values())
    if not options or not asked:
        return None
    for part in (p.strip() for p in _PART.split(text) if p and p.strip()):
        if NEGATION.search(part) or _STILL_NEGATIVE.search(part):
            continue
        if not named_options(part, options, positive_only=True) & accepted:
            continue
        shared = set(stems(part)) & asked
        if (shared and _FRAMED.search(part)) or (len(shared) >= 2 and 2 * len(shared) >= len(asked)):
            return part
    return None
