"""Multiple-choice questions: their options, which ones a text names, and which one the expert accepted.

Pure and deterministic, used by the truth gate. Who said what comes from the caller (the turns'
roles): ``answers`` takes the expert's statements and the chatbot's replies separately.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel

from memory.wording import CHUNK, positive_text, stems

_OPTION = re.compile(r"(?<![A-Za-z])\(?([A-Ea-e])\)\s+(.+?)(?=\s+\(?[A-Ea-e]\)\s|$)")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_LETTER_REFS = (
    re.compile(r"(?<![A-Za-z])\(?([A-Ea-e])\)"),
    re.compile(r"\b(?:[Aa]nswer|[Oo]ption|[Cc]hoice)\s*(?:is|:|-|=)?\s*\(?([A-E])\b(?![a-z'])"),
    re.compile(r"\b(?:[Ii]t'?s|[Ii]t is|[Pp]ick|[Cc]hoose|[Gg]o with)\s+\(?([A-E])\b(?![a-z'])"),
    re.compile(r"^\s*(?:[Nn]o|[Yy]es)?[,.!\s]*\(?([A-E])\)?\s*[.!]?\s*$"),
    # a clause that opens with the letter and calls it right: "C is correct", "B is the one"
    re.compile(r"^\s*\(?([A-E])\)?\s+is\s+(?:the\s+)?(?:correct|right|true|answer|one)\b"),
    # a letter that ends a clause after "the right one is", "it should be": "the right one is A."
    re.compile(
        r"\b(?:(?:right|correct|true)\s+(?:one|option|answer|choice)\s+is|should\s+be)\s+\(?([A-E])\)?(?=\s*(?:[.!,;:]|$))"
    ),
)


def parse_options(question: str) -> dict[str, str]:
    """Lettered options in a question ("... A) x B) y"), letter -> text; {} when it has none."""
    flat = " ".join(question.split())
    found = {m.group(1).upper(): m.group(2).strip(" ;,") for m in _OPTION.finditer(flat)}
    return found if len(found) >= 2 else {}


def question_stem(question: str) -> str:
    """The question without its lettered options."""
    flat = " ".join(question.split())
    found = list(_OPTION.finditer(flat)) if parse_options(flat) else []
    return flat[: found[0].start()].strip() if found else flat


def letters_named(text: str) -> set[str]:
    """Option letters a turn names ("C)", "answer: C", "it's C", a bare "C.")."""
    return {m.group(1).upper() for pattern in _LETTER_REFS for m in pattern.finditer(text)}


def _distinct(options: dict[str, str]) -> dict[str, set[str]]:
    """Each option's own stems (those no other option shares)."""
    own = {letter: set(stems(text)) for letter, text in options.items()}
    return {
        letter: mine - set().union(*(s for other, s in own.items() if other != letter)) for letter, mine in own.items()
    }


def named_options(text: str, options: dict[str, str], positive_only: bool = False) -> set[str]:
    """The options a text names, by letter or by the option's words.

    An option is named when all of its words are there, or when all of its own words (those no other
    option has) and most of its words are ("level" alone is not "urine sugar level"); an option whose
    words are all inside another named option's ("anemia" in "anemia patient") does not count. With
    ``positive_only`` what a negation covers does not count ("not C) carbamazepine" names no option,
    nor does "Carbamazepine is not the drug of choice").
    """
    if not options:
        return set()
    chunks = [positive_text(c) for c in CHUNK.split(text) if c.strip()] if positive_only else [text]
    own = _distinct(options)
    full = {letter: set(stems(text)) for letter, text in options.items()}
    named: set[str] = set()
    for chunk in chunks:
        words = set(stems(chunk))
        found = {letter for letter, mine in full.items() if mine and mine <= words}
        found |= {
            letter
            for letter, mine in own.items()
            if mine and mine <= words and 3 * len(full[letter] & words) >= 2 * len(full[letter])
        }
        found -= {a for a in found for b in found if a != b and full[a] < full[b]}
        named |= found | (letters_named(chunk) & set(options))
    if positive_only and len(chunks) > 1:
        # an option of several parts may be named across chunks ("you need sodium fluoride, ... with
        # potassium oxalate"): it then wins over the shorter option inside it ("Potassium oxalate")
        said = set().union(*(set(stems(chunk)) for chunk in chunks))
        spanning = {letter for letter, mine in full.items() if mine and mine <= said}
        named -= {a for a in named for b in spanning if a != b and full[a] < full[b]}
        named |= {b for b in spanning if any(full[a] < full[b] for a in named | spanning if a != b)}
    return named


class Answers(BaseModel):
    """The accepted option(s) and the rejected ones, by letter."""

    accepted: set[str]
    rejected: set[str]


def answers(source_said: Sequence[str], model_rejected: Sequence[str], options: dict[str, str]) -> Answers:
    """The option the source accepted, and the options the chatbot chose that the source did not accept.

    Accepted: the letters the source named positively; else the one option a statement's first sentence
    names positively while it negates the chatbot's lettered pick ("Pemphigus, not bullous pemphigoid.",
    "Not hyaline, hyperplastic."): the rest of such a turn often explains both; else the options the
    source named positively that the chatbot had not mentioned (a source that mentions the chatbot's
    options is explaining why they are wrong, or agreeing with part of the reasoning).
    """
    chosen = {letter for said in model_rejected for letter in named_options(said, options)}
    picked = {letter for said in model_rejected for letter in letters_named(said)} & set(options)
    by_letter: set[str] = set()
    by_words: set[str] = set()
    for said in source_said:
        positive = named_options(said, options, positive_only=True)
        lettered = {letter for letter in letters_named(said) if letter in positive}
        by_letter |= lettered
        by_words |= positive - lettered
    said_against = {
        letter
        for said in source_said
        for letter in named_options(said, options) - named_options(said, options, positive_only=True)
    }
    opening = set().union(*(_opening_pick(said, options, picked) for said in source_said))
    accepted = by_letter or opening or (by_words - chosen)
    negated = said_against - accepted
    return Answers(accepted=accepted, rejected=(chosen | negated) - accepted)


def _opening_pick(said: str, options: dict[str, str], picked: set[str]) -> set[str]:
    """The option a statement opens with as the answer, when its first sentence also negates ``picked``."""
    first = _SENTENCE.split(said.strip(), maxsplit=1)[0]
    positive = named_options(first, options, positive_only=True)
    against = named_options(first, options) - positive
    return positive if len(positive) == 1 and picked & against else set()


def unletter(text: str, options: dict[str, str]) -> str:
    """Drop option letters next to their option's text, and spell out a bare letter with its text.

    A memory must carry the corrected content: a paraphrase of the question may re-letter the options.
    """
    if not options:
        return text
    for letter, option in options.items():
        escaped = re.escape(option)
        text = re.sub(rf"(?<![A-Za-z])\(?{letter}\)\s*(?={escaped})", "", text, flags=re.IGNORECASE)
        text = re.sub(rf"(?<![A-Za-z])\(?{letter}\)(?!\s*[A-Za-z0-9])", option, text, flags=re.IGNORECASE)
        text = re.sub(rf"\b(answer|option|choice)(\s+is|:)?\s+\(?{letter}\)?(?![A-Za-z0-9'])", rf"\1\2 {option}", text)
    return " ".join(text.split())
