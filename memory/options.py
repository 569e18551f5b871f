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

from memory.letters import letters_named, number_alone
from memory.option_names import alike, spell_initials
from memory.wording import CHUNK, exact, fold, normal, positive_text, sentences, short_words, stems, words

_OPTION = re.compile(r"(?<![A-Za-z0-9°º])\(?([A-Ea-e])\)\s+(.+?)(?=\s+\(?[A-Ea-e]\)\s|$)")
_ASIDE = re.compile(r"\(([^()]*)\)")
_NEGATIVE = re.compile(r"\b(?:not|NOT|Not|except|EXCEPT|Except|(?<!\b[Aa]t\s)[Ll]east\s+[a-z]+)\b|n't\b")


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


# letters listed together ("A, B and C are out"): the first, cut off at its comma, is no bare verdict
_LETTER_LIST = re.compile(r"(?<![A-Za-z0-9])([A-E])\)?\s*,\s*\(?[A-E](?![A-Za-z0-9])")


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
    if outside and any(not exact(w) for w in aside):
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
    picked = {letter for said in model_rejected for letter in letters_named(said, options)} & set(options)
    chosen = {letter for said in model_rejected for letter in _chose(said, options)}
    by_letter: set[str] = set()
    by_words: set[str] = set()
    for said in source_said:
        alone = number_alone(said, options)
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
    # in a negative question ("Not a feature of ...") the source may also deny the answer: "X doesn't belong",
    # or deny it in other words: "what you don't see is sensory loss" for "Sensory changes" (fresh32's truth-1134)
    leans = leaning(source_said, options)
    vouched = closing & (leans | denied | leaning(source_said, options, denied=True) if negative else leans - denied)
    unmatched = closing and not closing & (by_words - chosen)  # the chatbot closed on another option
    set_aside = {letter for letter in by_words if _set_aside(source_said, letter, options)}  # fresh25's truth-914
    spoken_for = by_words - chosen - set_aside
    if len(spoken_for) > 1 and closing & spoken_for:  # the closing tells which of those the source meant
        spoken_for &= closing
    accepted = by_letter or opening or vouched or (set() if unmatched else spoken_for)
    negated = said_against - accepted
    return Answers(accepted=frozenset(accepted), rejected=frozenset((chosen | negated) - accepted))


def _chose(turn: str, options: dict[str, str]) -> set[str]:
    """The options a chatbot turn chose: its lettered pick, or, with no letter, every option its words name.

    "A) Radiotherapy ... sparing the patient disfiguring surgery" chose A; that its reasons also name both
    words of "Surgery + Radiotherapy" does not make that option a rejected pick (fresh34's truth-1208).
    """
    lettered = letters_named(turn, options) & set(options)
    return lettered or named_options(turn, options)


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


def _closing_pick(options: dict[str, str], model_final: Sequence[str]) -> set[str]:
    """The one option the chatbot's closing turns name positively ("Understood, the answer is D) ..."), if one.

    A letter decides where the words cannot ("B) HSV II" also has the words of "HSV I").
    """
    named = {letter for said in model_final for letter in named_options(said, options, positive_only=True)}
    lettered = named & {letter for said in model_final for letter in letters_named(said, options)}
    return lettered if len(lettered) == 1 else named if len(named) == 1 else set()


def leaning(texts: Sequence[str], options: dict[str, str], beyond: str = "", denied: bool = False) -> set[str]:
    """The options one of whose own words (those no other option has) the texts say outside a negation.

    Weaker than naming an option: "the periodontium" leans to "Periodontal disease" without naming it.
    Words of ``beyond`` (the question, which a memory may repeat) do not count, as written there: another
    form of one ("the mandible" for the question's "Mandibular fossa") is the memory's own. With ``denied``,
    the words the texts say inside a negation count instead ("what you don't see is sensory loss").
    """
    texts = [spell_initials(said, options) for said in texts]
    positive = {
        w
        for said in texts
        for c in CHUNK.split(said)
        for w in (set(words(c)) - set(words(positive_text(c))) if denied else words(positive_text(c)))
    }
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
