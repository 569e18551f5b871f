"""Multiple-choice questions: their options, which ones a text names, and which one the expert accepted.

Pure and deterministic, used by the truth gate. Who said what comes from the caller (the turns'
roles): ``answers`` takes the expert's statements and the chatbot's replies separately.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from memory.option_names import alike, spell_initials
from memory.wording import CHUNK, fold, normal, positive_text, sentences, short_words, stems, words

_OPTION = re.compile(r"(?<![A-Za-z0-9°º])\(?([A-Ea-e])\)\s+(.+?)(?=\s+\(?[A-Ea-e]\)\s|$)")
_ASIDE = re.compile(r"\(([^()]*)\)")
_NEGATIVE = re.compile(r"\b(?:not|NOT|Not|except|EXCEPT|Except|(?<!\b[Aa]t\s)[Ll]east\s+[a-z]+)\b|n't\b")
_LETTER_REFS = (
    re.compile(r"(?<![A-Za-z0-9°º])\(?([A-Ea-e])\)"),  # not a stage's letter "(T4d)", nor "(at 20°C)"
    re.compile(r"\b(?:[Aa]nswer|[Oo]ption|[Cc]hoice)(?:'s|’s)?\s*(?:is|:|-|=)?\s*\(?([A-E])\b(?![a-z'-])"),
    re.compile(r"\b(?:[Ii]t'?s|[Ii]t is|[Pp]ick|[Cc]hoose|[Gg]o with)\s+\(?([A-E])\b(?![a-z'-])"),
    # a lower-case letter that ends the turn after "it's" or "should be": "wrong one. it's c", "should be d"
    re.compile(
        r"\b(?:[Ii]t'?s|[Ii]t is|[Ii]ts|[Ss]hould(?:'ve|’ve|\s+have)?\s+(?:be|been))\s+\(?([a-e])\)?\s*[.!]?\s*$"
    ),
    # a whole turn: "c", "(C)", "no — d"
    re.compile(r"^\s*(?:[Nn]o|[Yy]es)?[,.!\s\u2013\u2014-]*\(?([A-Ea-e])\)?\s*[.!]?\s*$"),
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


def about_topic(text: str, topic: str) -> bool:
    """Whether ``text`` has two content words of ``topic`` (all of them when it has fewer)."""
    said = set(stems(topic))
    return len(said & set(stems(text))) >= min(2, len(said))


def negative_question(question: str) -> bool:
    """Whether a question asks for the option that is not something ("Not a feature of", "all except")."""
    return bool(_NEGATIVE.search(question_stem(question)))


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
    rf"^\s*(?:(?:no|yes)[,.!]?\s+)?(?:the\s+)?({_PLACES})(?:\s+(?:one|option|choice))?\s*[.!]?\s*$",
    re.IGNORECASE,
)
# a place ending a clause after "it's the", "should be the": "no - it's the fourth" (fresh29's truth-1032)
_PLACE_SAID = re.compile(
    rf"\b(?:it'?s|it is|its|should(?:'ve|’ve|\s+have)?\s+(?:be|been)|answer is|go with|pick)\s+the\s+({_PLACES})\b"
    r"(?=\s*(?:[.!,;:]|$))",
    re.IGNORECASE,
)
_LAST = re.compile(r"\b(?:the\s+)?last\s+(?:one|option|choice)\b(?!\s+(?:to|of|that|which|who|you)\b)", re.I)


# letters listed together ("A, B and C are out"): the first, cut off at its comma, is no bare verdict
_LETTER_LIST = re.compile(r"(?<![A-Za-z0-9])([A-E])\)?\s*,\s*\(?[A-E](?![A-Za-z0-9])")


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


def _found(mine: set[str], said: set[str]) -> set[str]:
    """The words of ``mine`` that ``said`` has (as :func:`alike` words)."""
    return {w for w in mine if w in said or any(alike(w, s) for s in said)}


def part_of(inner: str, outer: str) -> bool:
    """Whether every word of option text ``inner`` is in ``outer``, which has more ("anemia" in "anemia patient")."""
    mine, theirs = set(words(inner)), set(words(outer))
    return bool(mine) and _found(mine, theirs) == mine and _found(theirs, mine) != theirs


Shapes = tuple[dict[str, set[str]], dict[str, list[set[str]]], dict[str, str | None], set[str]]


@functools.lru_cache(maxsize=256)
def _shapes(items: tuple[tuple[str, str], ...]) -> Shapes:
    """What naming needs of a question's options, worked out once per question (read only).

    Each option's own words, its word forms, its one-word spelling, and the twins: options whose words are
    the same ("Knock down", "Knock out"; "HSV I", "HSV II") or that have only two-letter ones ("Sv", "cd"),
    named only by their text (options with no word at all, "I", only by their letter).
    """
    options = dict(items)
    said = {letter: set(words(text)) for letter, text in options.items()}
    twins = {a for a in options for b in options if a != b and said[a] == said[b] != set()}
    twins |= {a for a, text in options.items() if not said[a] and short_words(text)}  # "Sv", "cd": by their text
    forms = {letter: _forms(text) for letter, text in options.items()}
    joined = {letter: _joined(text) for letter, text in options.items()}
    return _distinct(options), forms, joined, twins


def _distinct(options: dict[str, str]) -> dict[str, set[str]]:
    """Each option's own words (those no other option shares)."""
    own = {letter: set(words(text)) for letter, text in options.items()}
    return {
        letter: {w for w in mine if not _found({w}, set().union(*(s for o, s in own.items() if o != letter)))}
        for letter, mine in own.items()
    }


def _forms(option: str) -> list[set[str]]:
    """The word sets an option is named by: its words, or those outside a bracketed aside or the aside's.

    "One way analysis of variance (one way ANOVA)" is named by either; an aside of numbers alone ("(V3)")
    names nothing by itself.
    """
    aside = set(words(" ".join(_ASIDE.findall(option))))
    outside = set(words(_ASIDE.sub(" ", option)))
    if outside and any(not w[0].isdigit() for w in aside):
        return [outside, aside]
    return [outside | aside]


def _joined(option: str) -> str | None:
    """An option of two or three words written as one ("Phosphatidyl glycerol", "Mac conkey"), if it is one."""
    parts = re.findall(r"[a-z]+", fold(_ASIDE.sub(" ", option)))
    return "".join(parts) if 2 <= len(parts) <= 3 and not re.search(r"\d", option) else None


def _said(text: str) -> set[str]:
    """The words of a text, with each pair of neighbours also joined ("phosphatidyl glycerol")."""
    found = re.findall(r"[a-z]+", fold(text))
    return set(words(text)) | {a + b for a, b in itertools.pairwise(found)}


def _apart(chunk: str, options: dict[str, str]) -> tuple[set[str], set[str]]:
    """The options written out whole in ``chunk``, and what it says beyond them (as :func:`_said` words).

    A written-out option keeps its words: in "ethanol to acetaldehyde by alcohol dehydrogenase" the
    "dehydrogenase" is "Alcohol dehydrogenase"'s and does not name "Acetaldehyde dehydrogenase". An option
    inside a longer one ("Potassium oxalate" in "Potassium oxalate + sodium fluoride") keeps nothing.
    """
    flat = f" {normal(chunk)} "
    whole = {
        letter
        for letter, text in options.items()
        if (words(text) or short_words(text)) and f" {normal(text)} " in flat  # "I" is named by its letter only
    }
    pieces = [flat]
    for letter in sorted(whole, key=lambda o: -len(options[o])):
        if not any(part_of(options[letter], options[o]) for o in options if o != letter):
            pieces = [p for piece in pieces for p in piece.split(f" {normal(options[letter])} ")]
    return whole, set().union(*(_said(piece) for piece in pieces))


def _names(forms: list[set[str]], own: set[str], said: set[str]) -> bool:
    """Whether ``said`` names an option: all of one form's words, or all its own words and most of the rest."""
    for form in (f for f in forms if f):
        found = _found(form, said)
        mine = form & own
        if found == form or (mine and mine <= found and 3 * len(found) >= 2 * len(form)):
            return True
    return False


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
    text = spell_initials(text, options)
    chunks = [positive_text(c) for c in CHUNK.split(text) if c.strip()] if positive_only else [text]
    own, forms, joined, twins = _shapes(tuple(options.items()))
    named: set[str] = set()
    listed = {m.group(1) for m in _LETTER_LIST.finditer(text)}
    heard: list[set[str]] = []
    for chunk in chunks:
        whole, said = _apart(chunk, options)
        heard.append(said)
        found = whole | {
            letter
            for letter in options
            if letter not in twins and (_names(forms[letter], own[letter], said) or joined[letter] in said)
        }
        found -= {a for a in found for b in found if a != b and part_of(options[a], options[b])}
        named |= found | ((letters_named(chunk, options) - (listed if len(chunks) > 1 else set())) & set(options))
    if positive_only and len(chunks) > 1:
        # an option of several parts may be named across chunks ("you need sodium fluoride, ... with
        # potassium oxalate"): it then wins over the shorter option inside it ("Potassium oxalate")
        said = set().union(*heard)
        spanning = {letter for letter in options if any(f and _found(f, said) == f for f in forms[letter])}
        named -= {a for a in named for b in spanning if a != b and part_of(options[a], options[b])}
        named |= {b for b in spanning if any(part_of(options[a], options[b]) for a in named | spanning if a != b)}
    return named


class Answers(BaseModel):
    """The accepted option(s) and the rejected ones, by letter (immutable: results are shared)."""

    model_config = ConfigDict(frozen=True)

    accepted: frozenset[str]
    rejected: frozenset[str]


def answers(
    source_said: Sequence[str],
    model_rejected: Sequence[str],
    options: dict[str, str],
    model_final: Sequence[str] = (),
    negative: bool = False,
) -> Answers:
    """The option the source accepted, and the options the chatbot chose that the source did not accept.

    Accepted: the letters the source named positively; else the one option a statement's first sentence
    names positively while it negates the chatbot's lettered pick ("Pemphigus, not bullous pemphigoid.",
    "Not hyaline, hyperplastic."): the rest of such a turn often explains both; else the one option the
    chatbot's closing turns ``model_final`` name after the source's last word ("Understood, the answer is
    D) ..."), when the source spoke for it in its own words and never against it, and the chatbot had not
    picked it before (the closing only tells which of the options the source explained is the answer);
    else the options the source named positively that the chatbot had not mentioned (a source that
    mentions the chatbot's options is explaining why they are wrong, or agreeing with part of the
    reasoning), unless the chatbot closed on another option: then none. In a ``negative`` question
    (:func:`negative_question`) the source may speak for the answer by denying it ("What doesn't belong is
    the Aschoff nodule").
    """
    chosen = {letter for said in model_rejected for letter in named_options(said, options)}
    picked = {letter for said in model_rejected for letter in letters_named(said, options)} & set(options)
    by_letter: set[str] = set()
    by_words: set[str] = set()
    for said in source_said:
        alone = _number_alone(said, options)
        positive = named_options(said, options, positive_only=True) | alone
        lettered = {letter for letter in letters_named(said, options) | alone if letter in positive}
        by_letter |= lettered
        by_words |= positive - lettered
    said_against = {
        letter
        for said in source_said
        for letter in named_options(said, options) - named_options(said, options, positive_only=True)
    }
    denied = {  # named inside a negation in one chunk: "not C) carbamazepine", "B is not the answer"
        letter
        for said in source_said
        for chunk in CHUNK.split(said)
        for letter in named_options(chunk, options) - named_options(chunk, options, positive_only=True)
    }
    opening = set().union(*(_opening_pick(said, options, picked) for said in source_said))
    closing = _closing_pick(options, model_final) - picked
    # in a negative question ("Not a feature of ...") the source may also deny the answer: "X doesn't belong"
    vouched = closing & (leaning(source_said, options) | denied if negative else leaning(source_said, options) - denied)
    unmatched = closing and not closing & (by_words - chosen)  # the chatbot closed on another option
    set_aside = {letter for letter in by_words if _set_aside(source_said, letter, options)}  # fresh25's truth-914
    spoken_for = by_words - chosen - set_aside
    if len(spoken_for) > 1 and closing & spoken_for:  # the closing tells which of those the source meant
        spoken_for &= closing
    accepted = by_letter or opening or vouched or (set() if unmatched else spoken_for)
    negated = said_against - accepted
    return Answers(accepted=frozenset(accepted), rejected=frozenset((chosen | negated) - accepted))


def _set_aside(source_said: Sequence[str], letter: str, options: dict[str, str]) -> bool:
    """Whether every source sentence naming an option goes on, in its next chunk, to deny what no option names.

    "10% dextrose is for hypoglycaemia, not volume" sets the option aside for another use; "Saline, not
    starch" (a word of the chatbot's pick) does not.
    """
    own = [mine for mine in _shapes(tuple(options.items()))[0].values() if mine]
    where = [s for said in source_said for s in sentences(said) if letter in named_options(s, options)]
    return bool(where) and all(
        any(
            letter in named_options(chunk, options, positive_only=True)
            and _DENIAL_OPENS.match(after)
            and not named_options(after, options)
            and not any(_found(mine, set(words(after))) for mine in own)
            for chunk, after in itertools.pairwise([c for c in CHUNK.split(sentence) if c.strip()])
        )
        for sentence in where
    )


_DENIAL_OPENS = re.compile(r"\s*(?:and\s+|but\s+)?not\b", re.IGNORECASE)


def _number_alone(turn: str, options: dict[str, str]) -> set[str]:
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


def _closing_pick(options: dict[str, str], model_final: Sequence[str]) -> set[str]:
    """The one option the chatbot's closing turns name positively ("Understood, the answer is D) ..."), if one.

    A letter decides where the words cannot ("B) HSV II" also has the words of "HSV I").
    """
    named = {letter for said in model_final for letter in named_options(said, options, positive_only=True)}
    lettered = named & {letter for said in model_final for letter in letters_named(said, options)}
    return lettered if len(lettered) == 1 else named if len(named) == 1 else set()


def leaning(texts: Sequence[str], options: dict[str, str], beyond: str = "") -> set[str]:
    """The options one of whose own words (those no other option has) the texts say outside a negation.

    Weaker than naming an option: "the periodontium" leans to "Periodontal disease" without naming it.
    Words of ``beyond`` (the question, which a memory may repeat) do not count, as written there: another
    form of one ("the mandible" for the question's "Mandibular fossa") is the memory's own.
    """
    texts = [spell_initials(said, options) for said in texts]
    positive = {w for said in texts for c in CHUNK.split(said) for w in words(positive_text(c))}
    positive -= set(words(beyond))  # the question's own words; "mandible" is not its "mandibular" (truth-948)
    own_words = _shapes(tuple(options.items()))[0]
    # two-letter words ("AP" of "X-ray lumbar spine- AP view") lean too, where no other option has them
    short = {w for said in texts for c in CHUNK.split(said) for w in short_words(positive_text(c))}
    short -= set(short_words(beyond))
    each = {letter: set(short_words(text)) for letter, text in options.items()}
    own_short = {
        letter: mine - set().union(*(s for other, s in each.items() if other != letter))
        for letter, mine in each.items()
    }
    return {letter for letter, own in own_words.items() if (own and _found(own, positive)) or own_short[letter] & short}


def _opening_pick(said: str, options: dict[str, str], picked: set[str]) -> set[str]:
    """The option a statement opens with as the answer, when its first sentence also negates ``picked``.

    Not one the chatbot picked itself: "Morbidity is the general term ...; you measure it with incidence and
    prevalence, so it isn't a rate" explains why the chatbot's "C) Morbidity" is wrong.
    """
    first = next(iter(sentences(said.strip())), "")
    positive = named_options(first, options, positive_only=True)
    against = named_options(first, options) - positive
    return positive if len(positive) == 1 and picked & against and not positive & picked else set()


# an option called by its letter that :func:`memory.letters.unletter` left: "which includes both options B and C"
_PLACE = re.compile(rf"\b(?:{_PLACES}|last)\s+(?:option|choice)\b", re.I)  # not "the second one"
_LETTER_LEFT = re.compile(r"\b(?:[Oo]ptions?|[Cc]hoices?|[Aa]nswers?|[Ll]etters?)\s+\(?([A-E])\)?(?![A-Za-z0-9'])")


def letters_left(text: str) -> list[str]:
    """How ``text`` still calls options by letter or place ("options B and C", "the third option"), in order."""
    places = [m.group(0) for pattern in (_PLACE, _NUMBERED) for m in pattern.finditer(text)]
    return [m.group(1) for m in _LETTER_LEFT.finditer(text)] + places
