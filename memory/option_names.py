"""How a text names an option besides its words and letter: an option's capital initialism ("CEP").

Used by :func:`memory.options.named_options` (session 13, from fresh19's truth-728, where the expert said
"CEP" for "Congenital erythropoetic porphyria"). Pure and deterministic.
"""

from __future__ import annotations

import functools
import re

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


def spell_initials(text: str, options: dict[str, str]) -> str:
    """``text`` with each option's initialism written out as the option.

    "CEP presents ..." names "Congenital erythropoetic porphyria"; capitals only, so "cep" stays as it is.
    """
    if not _CAPITALS.search(text):  # no initialism to spell (most texts): skip the per-option scans
        return text
    for pattern, option in _initials(tuple(options.items())):
        text = pattern.sub(option, text)
    return text
