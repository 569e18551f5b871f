"""Qualifiers a claim is said under: a group ("in women") or the question's own subject ("With vivax ...").

A memory sentence that restates what the source said under a qualifier, without it, says it of everyone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from memory.option_gate import ECHO_MIN_STEMS
from memory.options import question_stem
from memory.wording import sentences, stems

# the share of a memory sentence's claim that one source sentence (or two naming the same options) must say
CLAIM_COVER = 0.85

_POPULATION = (
    r"(?:wom[ae]n|m[ae]n|child(?:ren)?|kids?|adults?|infants?|neonates?|newborns?|(?:the\s+)?elderly|"
    r"older\s+(?:adults|people|patients)|pregnan(?:cy|t\s+women)|males?|females?|boys?|girls?|adolescents?)"
)
_QUALIFIER = re.compile(rf"\b(?:in|among)\s+{_POPULATION}\b", re.IGNORECASE)
_OPENING = re.compile(r"^\W*(?:with|in|for|among)\s+", re.IGNORECASE)


def dropped_qualifier(text: str, source: Sequence[str], question: str = "") -> str | None:
    """The qualifier ("in women") of a source sentence that a memory sentence restates without it, if any.

    "In women breast carcinoma is far and away the commonest primary behind uveal metastases" is not
    "Breast cancer is far and away the commonest primary ...": the expert limited the claim to a group. So
    is a sentence opening on words of the ``question`` ("With vivax the gametocytes show up early" after a
    question on Plasmodium vivax): said of one subject, not of every one. A memory sentence that restates
    CLAIM_COVER of the sentence's other words, and has no word of the qualifier anywhere, widens it.
    """
    mine = set(stems(text))
    asked = set(stems(question_stem(question))) if question else set()
    for said in (one for turn in source for one in sentences(turn)):
        found = [qualifier.group(0) for qualifier in _QUALIFIER.finditer(said)]
        opening = _opening_qualifier(said, asked)
        for qualifier in [*found, *([opening] if opening else [])]:
            group = set(stems(qualifier))
            rest = set(stems(said)) - group
            if not group or group & mine or len(rest) < ECHO_MIN_STEMS:
                continue
            if any(len(set(stems(one)) & rest) >= CLAIM_COVER * len(rest) for one in sentences(text)):
                return qualifier
    return None


def _opening_qualifier(sentence: str, asked: set[str]) -> str | None:
    """A sentence's opening phrase on words of the question, up to three of them: "With vivax", "In a child"."""
    opening = _OPENING.match(sentence)
    if opening is None:
        return None
    taken: list[str] = []
    for word in sentence[opening.end() :].split()[:3]:
        bare = word.strip(",;:'\"()")
        said = stems(bare)
        if (said and not set(said) <= asked) or (not said and stems(" ".join(taken))):
            break  # a word the question lacks, or a small word after the phrase ("With vivax the ...")
        taken.append(bare)
        if word != bare:  # "In children, ...": the comma ends the phrase
            break
    return f"{opening.group(0).strip()} {' '.join(taken)}" if stems(" ".join(taken)) else None
