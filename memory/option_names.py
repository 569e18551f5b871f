"""How a text names an option besides its exact words: alike words, and an option's initialism ("CEP").

Words are alike despite endings and spellings. Used by :func:`memory.options.named_options` (initialisms:
session 13, from fresh19's truth-728, where the expert said "CEP" for "Congenital erythropoetic porphyria";
"-al" adjectives: session 14, fresh20's truth-757, "rectum" for "Rectal"). Pure and deterministic.
"""

from __future__ import annotations

import difflib
import functools
import itertools
import re

from memory.wording import exact

_ASIDE = re.compile(r"\(([^()]*)\)")
_CAPITALS = re.compile(r"[A-Z]{2}")
_GENERIC_TAIL = frozenset({"deficiency", "disease", "syndrome", "disorder", "reflex", "test", "sign"})


@functools.lru_cache(maxsize=256)
def _initials(items: tuple[tuple[str, str], ...]) -> tuple[tuple[re.Pattern[str], str], ...]:
    """Each option's initialism ("CEP" for "Congenital erythropoetic porphyria"), where only one option has it."""
    found: dict[str, list[str]] = {}
    for _, text in items:
        parts = re.findall(r"[A-Za-z]+", _ASIDE.sub(" ", text))
        shapes = {"".join(p[0] for p in parts).upper()}
        if len(parts) > 2 and parts[-1].lower() in _GENERIC_TAIL:
            shapes.add("".join(p[0] for p in parts[:-1]).upper())
        for shape in shapes:
            if 2 <= len(shape) <= 5:
                found.setdefault(shape, []).append(text)
    return tuple(
        (re.compile(rf"(?<![\w-]){shape}(?![\w-])"), texts[0]) for shape, texts in found.items() if len(set(texts)) == 1
    )


@functools.lru_cache(maxsize=256)
def _glued(items: tuple[tuple[str, str], ...]) -> tuple[tuple[re.Pattern[str], str], ...]:
    """Each pair of neighbouring words of an option written as one ("McDonald" for "Mc Donald stitch")."""
    found: dict[str, str] = {}
    for _, text in items:
        parts = re.findall(r"[A-Za-z]+", _ASIDE.sub(" ", text))
        for first, second in itertools.pairwise(parts):
            if len(first) + len(second) >= GLUED_MIN:
                found.setdefault(f"{first}{second}".lower(), f"{first} {second}")
    return tuple((re.compile(rf"(?<![\w-]){glued}(?![\w-])", re.IGNORECASE), apart) for glued, apart in found.items())


GLUED_MIN = 6


def spell_initials(text: str, options: dict[str, str]) -> str:
    """``text`` with each option's initialism written out as the option, and its glued words apart.

    "CEP presents ..." names "Congenital erythropoetic porphyria"; capitals only, so "cep" stays as it is.
    "a McDonald purse-string stitch" names "Mc Donald stitch" (fresh27's truth-954).
    """
    items = tuple(options.items())
    for glued, apart in _glued(items):
        text = glued.sub(apart, text)
    if not _CAPITALS.search(text):  # no initialism to spell (most texts): skip the per-option scans
        return text
    for pattern, option in _initials(items):
        text = pattern.sub(option, text)
    return text


# two words are one when they share their first PREFIX letters and neither has more than SLACK after them:
# "phosphorylated" is "phosphorylase", "hydroxylase" "hydroxylation", but "arthrography" is not
# "arthroscopy" (cut to five letters, both were "arthr"), nor "osteoma" "osteosarcoma", nor "auricular"
# "auriculotemporal"; or when, spelt the American way, they share their first STEM letters and differ by
# little more than a spelling ("papilloedema" and "papilledema", "arteriolosclerosis" and
# "arteriosclerosis"), while "hypothyroidism" is not "hyperthyroidism" nor "estriol" "estradiol"; numbers
# must be equal
PREFIX, SLACK = 5, 4
ADJECTIVE_STEM = 4
STEM, SPELLING = 6, 0.9
_BRITISH = re.compile(r"(?<=[a-z])[ao]e|^oe")
# "-ise", "-isation" as "-ize", "-ization": "Ionisation" is "Ionization" (fresh30's truth-1080)
_BRITISH_ISE = re.compile(r"(?<=[a-z]{2})is(?=ation|at|e$|er|$)")


@functools.lru_cache(maxsize=65536)
def alike(a: str, b: str) -> bool:
    """Whether two words (of :func:`memory.wording.words`) are one word for naming options."""
    if a == b:
        return True
    if exact(a) or exact(b):
        return False
    a, b = _BRITISH.sub("e", a), _BRITISH.sub("e", b)
    a, b = _BRITISH_ISE.sub("iz", a), _BRITISH_ISE.sub("iz", b)
    if a == b:
        return True
    shared = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    if shared >= PREFIX and max(len(a), len(b)) - shared <= SLACK:
        return True
    if _adjective_of(a, b) or _adjective_of(b, a):
        return True
    return shared >= STEM and difflib.SequenceMatcher(None, a, b).ratio() >= SPELLING


def _adjective_of(adjective: str, noun: str) -> bool:
    """Whether ``adjective`` is the "-al" adjective of a Latin noun: "rectal" of "rectum", "sacral" of "sacrum".

    Only for a stem of ADJECTIVE_STEM letters or more, where the shared-prefix rule (five letters) cannot
    see them as one word; and only for "-um" nouns ("rectus" is a muscle, not the rectum).
    """
    stem = adjective[:-2]
    return adjective.endswith("al") and len(stem) >= ADJECTIVE_STEM and noun == f"{stem}um"
