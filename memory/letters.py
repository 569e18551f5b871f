"""How a text calls an option by its letter or its place, and option letters in a memory spelt out.

A verdict may be a letter ("it's C", "the answer is b"), a place ("the third one", "option two") or
the last option; a memory must carry the corrected content instead (issue 11: a paraphrase of the
question may re-letter the options). Pure and deterministic.
"""

from __future__ import annotations

import functools
import re


def unletter(text: str, options: dict[str, str]) -> str:
    """Drop option letters next to their option's text, and spell out a bare letter with its text.

    A memory must carry the corrected content: a paraphrase of the question may re-letter the options.
    """
    if not options:
        return text
    for letter, option in options.items():
        escaped = re.escape(option)
        text = re.sub(rf"(?<![A-Za-z0-9°º])\(?{letter}\)\s*(?={escaped})", "", text, flags=re.IGNORECASE)
        text = re.sub(rf"(?<![A-Za-z0-9°º])\(?{letter}\)(?!\s*[A-Za-z0-9])", option, text, flags=re.IGNORECASE)
        # "the answer is A" spelt out, but not "the answer is A child with ..." (the option's own first word)
        text = re.sub(
            rf"\b(answer|option|choice)(\s+is|:)?\s+(?!{escaped})\(?{letter}\)?(?![A-Za-z0-9'-])",
            functools.partial(_spelt, option),
            text,
        )
    return " ".join(text.split())


def _spelt(option: str, found: re.Match[str]) -> str:
    """The matched "answer is" (or "option:") followed by the option's text in place of its letter."""
    return f"{found.group(1)}{found.group(2) or ''} {option}"


# how a whole-turn verdict may open before the letter or place it gives: "nope...", "wrong -", "no,"
_VERDICT_OPENS = (
    r"(?:no+|nope|nah|wrong|incorrect|not\s+quite|not\s+that(?:\s+one)?|negative|yes|yep|yeah|correct|right)"
)
_LETTER_REFS = (
    re.compile(r"(?<![A-Za-z0-9°º])\(?([A-Ea-e])\)"),  # not a stage's letter "(T4d)", nor "(at 20°C)"
    re.compile(r"\b(?:[Aa]nswer|[Oo]ption|[Cc]hoice)(?:'s|’s)?\s*(?:is|:|-|=)?\s*\(?([A-E])\b(?![a-z'-])"),
    re.compile(r"\b(?:[Ii]t'?s|[Ii]t is|[Pp]ick|[Cc]hoose|[Gg]o with)\s+\(?([A-E])\b(?![a-z'-])"),
    # a lower-case letter that ends the turn, or a sentence, after "it's", "should be", "the answer is" or
    # "option": "wrong one. it's c", "should be d", "the answer is b. It drains ..." (fresh31's truth-1081), "ans is d"
    re.compile(
        r"\b(?:[Ii]t'?s|[Ii]t is|[Ii]ts|[Ss]hould(?:'ve|’ve|\s+have)?\s+(?:be|been)|[Aa]ns(?:wer)?(?:'s|’s|\s+is)"
        r"|[Oo]ption|[Cc]hoice|[Gg]o with|[Pp]ick)\s+\(?([a-e])\)?(?=\s*[.!]*\s*$|\s*[.!]+\s+[A-Z])"
    ),
    # a whole turn: "c", "(C)", "no — d", "nope... option b", "wrong, the answer is d" (fresh31's truth-1095),
    # "ans is a" (fresh35's truth-1242), "C pls" (fresh36's truth-1270)
    re.compile(
        rf"^\s*(?:{_VERDICT_OPENS}\b)?[,.!\s\u2013\u2014-]*(?:(?:it'?s|it\s+is|its|go\s+with|pick|choose)\s+)?"
        r"(?:(?:the\s+)?(?:right\s+|correct\s+)?(?:answer|ans|option|choice)(?:'s|’s|\s+is)?\s*[:=-]?\s+)?"
        r"\(?([A-Ea-e])\)?(?:[,\s]+(?:pls|plz|please|thanks|thx|ty))?\s*[.!]*\s*$",
        re.IGNORECASE,
    ),
    # a clause that opens with the letter and calls it right: "C is correct", "B is the one"
    re.compile(r"^\s*\(?([A-E])\)?\s+is\s+(?:the\s+)?(?:correct|right|true|answer|one)\b"),
    # the letter as an adjective, or alone with one word after it: "it's the B one", "D, mate."
    re.compile(r"\bthe\s+([A-E])\s+one\b"),
    re.compile(r"^\s*\(?([A-E])\)?\s*[,!]\s*(?:[A-Za-z]{2,}\s*){1,3}[.!]?\s*$"),  # "D, mate.", "A, no question."
    # a letter that ends a clause after "the right one is", "it should be", "should've been": "the right one is A."
    re.compile(
        r"\b(?:(?:right|correct|true)\s+(?:one|option|answer|choice)\s+is"
        r"|[Ss]hould(?:'ve|’ve|\s+have)?\s+(?:be|been|said|picked|chosen))\s+\(?([A-E])\)?(?=\s*(?:[.!,;:]|$))"
    ),
)


# a place in words or figures: "the third one", "1st option" (fresh29's truth-1018)
_PLACES = "first|second|third|fourth|fifth|1st|2nd|3rd|4th|5th"
# "the third one" as a verdict, not "the first one to rise"
_ORDINAL = re.compile(rf"\bthe\s+({_PLACES})\s+(?:one|option)\b(?!\s+(?:to|of|that|which|who)\b)", re.I)
_ORDER = {"first": "A", "second": "B", "third": "C", "fourth": "D", "fifth": "E"}
_ORDER |= {"1st": "A", "2nd": "B", "3rd": "C", "4th": "D", "5th": "E"}
# "Option two." as a verdict: an option's number
_NUMBERED = re.compile(
    r"(?<!\bof\s)\b(?:option|choice)\s+(one|two|three|four|five|[1-5])\b(?!\s*(?:%|mg|ml|or|and|of)\b)", re.I
)
_NUMBER = {"one": "A", "two": "B", "three": "C", "four": "D", "five": "E", "1": "A", "2": "B", "3": "C", "4": "D"}
_NUMBER_ALONE = re.compile(r"^\s*\(?([1-4])\)?\s*[.!]?\s*$")
# a whole turn naming a place without "the": "second one", "Third option.", "the fourth"
_PLACE_ALONE = re.compile(
    rf"^\s*(?:{_VERDICT_OPENS}\b[,.!\s\u2013\u2014-]*)?(?:(?:it'?s|it\s+is|its)\s+)?(?:the\s+)?({_PLACES})"
    r"(?:\s+(?:one|option|choice))?\s*[.!]*\s*$",
    re.IGNORECASE,
)
# a place ending a clause after "it's the", "should be the": "no - it's the fourth" (fresh29's truth-1032)
_PLACE_SAID = re.compile(
    rf"\b(?:it'?s|it is|its|should(?:'ve|’ve|\s+have)?\s+(?:be|been)|answer is|go with|pick)\s+the\s+({_PLACES})\b"
    r"(?=\s*(?:[.!,;:]|$))",
    re.IGNORECASE,
)
_LAST = re.compile(r"\b(?:the\s+)?last\s+(?:one|option|choice)\b(?!\s+(?:to|of|that|which|who|you)\b)", re.I)


def letters_named(text: str, options: dict[str, str] | None = None) -> set[str]:
    """Option letters a turn names ("C)", "answer: C", "it's C", a bare "C.", "the third one").

    With the question's ``options``, "the last one" or "Last option." names the last letter.
    """
    found = {m.group(1).upper() for pattern in _LETTER_REFS for m in pattern.finditer(text)}
    if options and _LAST.search(text):
        found.add(max(options))
    found |= {_NUMBER.get(m.group(1).lower(), "E") for m in _NUMBERED.finditer(text)}
    found |= {_ORDER[m.group(1).lower()] for m in _PLACE_SAID.finditer(text)}
    return found | {_ORDER[m.group(1).lower()] for m in _ORDINAL.finditer(text)}


def without_verdicts(text: str) -> str:
    """``text`` with its letter and place verdicts cut out ("Nope, it's the 2nd one" -> "Nope, it's")."""
    for pattern in (*_LETTER_REFS, _LAST, _NUMBERED, _PLACE_SAID, _ORDINAL, _PLACE_ALONE):
        text = pattern.sub(" ", text)
    return text


def number_alone(turn: str, options: dict[str, str]) -> set[str]:
    """The option a whole turn of one number or place names ("(1)", "second one"), where no option has a number.

    A place needs no "the" when it is all the turn says (fresh28's truth-983: "second one").
    """
    place = _PLACE_ALONE.match(turn)
    if place:
        letter = _ORDER[place.group(1).lower()]
        return {letter} if letter in options else set()
    alone = _NUMBER_ALONE.match(turn)
    if not alone or any(re.search(r"\d", option) for option in options.values()):
        return set()
    letter = _NUMBER[alone.group(1)]
    return {letter} if letter in options else set()


# an option called by its letter that :func:`memory.letters.unletter` left: "which includes both options B and C"
_PLACE = re.compile(rf"\b(?:{_PLACES}|last)\s+(?:option|choice)\b", re.I)  # not "the second one"
_LETTER_LEFT = re.compile(r"\b(?:[Oo]ptions?|[Cc]hoices?|[Aa]nswers?|[Ll]etters?)\s+\(?([A-E])\)?(?![A-Za-z0-9'])")


def letters_left(text: str) -> list[str]:
    """How ``text`` still calls options by letter or place ("options B and C", "the third option"), in order."""
    places = [m.group(0) for pattern in (_PLACE, _NUMBERED) for m in pattern.finditer(text)]
    return [m.group(1) for m in _LETTER_LEFT.finditer(text)] + places
