"""Verdict rules for a small judge model: its decomposed answer, the similarity and textual cues. Pure.

A 1.5B model answering "same attribute? same value?" about a flagged pair (see
:mod:`memory.conflicts` for which pairs are flagged and what a verdict does) misses negations and
swapped names; :func:`combine` weighs its answer against the embedding similarity and those cues.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from memory.conflicts import ConflictConfig, Verdict


class Assessment(BaseModel):
    """A judge model's decomposed answer about a pair: same attribute, and if so same value."""

    model_config = ConfigDict(extra="forbid")

    same_attribute: bool
    same_value: bool


_NEGATION = re.compile(r"\b(?:not|never|no|none|nor|neither|without|cannot)\b|n't", re.IGNORECASE)


def negation_differs(new_text: str, old_text: str) -> bool:
    """Whether one text negates more than the other ("has never conducted" vs "has conducted"). Pure."""
    return len(_NEGATION.findall(new_text)) != len(_NEGATION.findall(old_text))


# Capitalised words that often open a sentence without naming anything.
_OPENER = re.compile(
    r"(?:the|an?|in|on|at|every|for|since|after|before|during|as|by|with|from|this|that|these|those|his|her"
    r"|their|our|my|its|when|while|although|both|each|all|some|many|most|it|he|she|they|we|i|you|there|here"
    r"|once|today|yesterday|last|next)"
)


def _names(text: str) -> set[str]:
    """Proper names and numbers in a text, lower-cased, possessives and hyphens split off."""
    tokens = re.findall(r"[A-Za-z]+|\d+(?:\.\d+)?", re.sub(r"'s\b", "", text))
    found = set()
    for i, token in enumerate(tokens):
        if token[0].isdigit() or (token[0].isupper() and not (i == 0 and _OPENER.fullmatch(token.lower()))):
            found.add(token.lower())
    return found


def _acronyms(text: str) -> set[str]:
    """Initials of each run of capitalised words ("New York University" -> "nyu", also "ny", "yu")."""
    runs = re.findall(r"(?:[A-Z][a-z]+\s+)+[A-Z][a-z]+", text)
    found = set()
    for run in runs:
        initials = "".join(w[0] for w in run.split()).lower()
        found |= {initials[i:j] for i in range(len(initials)) for j in range(i + 2, len(initials) + 1)}
    return found


def names_substituted(new_text: str, old_text: str) -> bool:
    """Whether each text names someone, somewhere or some number the other does not. Pure.

    "based in Seattle" -> "based in Austin", "with Nora Fishel" -> "with Joren Sullivar", "2019" ->
    "2021": a same-frame update that a small model tends to read as the same fact. A name only in one
    text (an added detail) is not a substitution; neither is another form of the same word
    ("Patagonia" / "Patagonian", shared first five letters) or an acronym of the other's words.
    """
    new, old = _names(new_text), _names(old_text)

    def novel(mine: set[str], theirs: set[str], their_text: str) -> set[str]:
        acronyms = _acronyms(their_text)
        return {w for w in mine - theirs if w not in acronyms and not any(w[:5] == t[:5] for t in theirs)}

    return bool(novel(new, old, old_text)) and bool(novel(old, new, new_text))


def combine(
    assessment: Assessment | None, similarity: float, cfg: ConflictConfig, new_text: str = "", old_text: str = ""
) -> Verdict:
    """The verdict from a small model's decomposed answer, the embedding similarity and a negation cue. Pure.

    Embedding similarity is a strong prior (near-identical wording is usually the same fact; very
    different wording usually another fact), but cannot see a changed value; a 1.5B model can often
    see the value but mistakes a negation or a new name for another attribute, and reads a
    same-frame substitution ("based in Seattle" -> "based in Austin") as the same value. A pair
    where one text negates and the other does not (see :func:`negation_differs`), or, from
    ``contradiction_band`` up, where a name or number was swapped for another
    (:func:`names_substituted`), is never the same fact. So:

    - similarity >= ``same_band``: SAME, unless the model sees the same attribute with another value,
      the negation differs or a name was swapped (CONTRADICTS);
    - ``contradiction_band`` <= similarity < ``same_band``: CONTRADICTS, unless the model says the
      same value without a negation change or swapped name (SAME), or it calls the pair another
      attribute, the negation is unchanged and similarity is under ``independent_below`` (INDEPENDENT);
    - below ``contradiction_band``: INDEPENDENT, unless the model sees the same attribute with
      another value (CONTRADICTS).

    Without a usable model answer: SAME / UNSURE (keep both) / INDEPENDENT by band.
    """
    high, low = cfg.same_band, cfg.contradiction_band
    if assessment is None:
        return Verdict.SAME if similarity >= high else Verdict.UNSURE if similarity >= low else Verdict.INDEPENDENT
    changed = assessment.same_attribute and not assessment.same_value
    negated = negation_differs(new_text, old_text)
    swapped = similarity >= low and names_substituted(new_text, old_text)
    if similarity >= high:
        return Verdict.CONTRADICTS if changed or negated or swapped else Verdict.SAME
    if similarity >= low:
        if assessment.same_attribute and assessment.same_value and not negated and not swapped:
            return Verdict.SAME
        if not assessment.same_attribute and not negated and similarity < cfg.independent_below:
            return Verdict.INDEPENDENT
        return Verdict.CONTRADICTS
    return Verdict.CONTRADICTS if changed else Verdict.INDEPENDENT
