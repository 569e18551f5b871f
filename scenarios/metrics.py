"""MARK evaluation metrics (paper section 2.2): ICS, KPCS, AICS, the alpha sweep, answer parsing, stats.

Pure and framework-free: no AutoGen, no store, no clock. Embeddings come from an ``embed`` callable
(a batch of texts in, one vector per text out), so tests pass a tiny deterministic fake.

* ``ICS = (1/N_GR) * sum_i HS_i / N_ER``: for each generated sentence i, ``HS_i`` counts the expected
  sentences whose cosine similarity with it is at least the threshold (default 0.7).
* ``KPCS = N_CKP / N_ERKP``: the share of expected key points found in the generated text, either
  literally (case-insensitive, whitespace-normalised) or by cosine >= threshold (default 0.6) with
  some generated sentence.
* ``AICS = alpha*ICS + (1-alpha)*KPCS``; the paper sweeps alpha < 0.5 and picks 0.1.

Note on the sweep: the gap between mean AICS of correct and incorrect rows is linear in alpha
(``alpha*dICS + (1-alpha)*dKPCS``), so the largest gap always lies at an end of the swept range.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

Embed = Callable[[list[str]], list[list[float]]]
"""Embed a batch of texts: one vector per input text, in order."""

DEFAULT_ALPHAS: tuple[float, ...] = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)
_EPS = 1e-9  # cosine values within this of the threshold count as reaching it (float noise)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_CLAUSE_END = re.compile(r"[.!?;]\s+|[;]|,\s+|\n+")
_SPACES = re.compile(r"\s+")
_MARKDOWN = re.compile(r"[*`_]+")


def split_sentences(text: str) -> list[str]:
    """Split text into sentences at ``.``/``!``/``?`` followed by whitespace, and at line breaks.

    Decimals such as ``0.01`` stay whole (no space after the dot). Pieces without any letter or digit
    (stray bullets, lone punctuation) are dropped, as are empty ones.
    """
    pieces = (p.strip() for p in _SENTENCE_END.split(text or ""))
    return [p for p in pieces if any(ch.isalnum() for ch in p)]


def cosine(u: Sequence[float], v: Sequence[float]) -> float:
    """Cosine similarity of two vectors; 0.0 when either has zero length."""
    if len(u) != len(v):
        raise ValueError(f"vectors differ in length: {len(u)} != {len(v)}")
    dot = sum(a * b for a, b in zip(u, v, strict=True))
    norm = math.sqrt(sum(a * a for a in u)) * math.sqrt(sum(b * b for b in v))
    return dot / norm if norm > 0.0 else 0.0


def _embed_checked(embed: Embed, texts: list[str]) -> list[list[float]]:
    vectors = embed(texts)
    if len(vectors) != len(texts):
        raise ValueError(f"embed returned {len(vectors)} vectors for {len(texts)} texts")
    return vectors


def ics(generated: str, expected: str, embed: Embed, threshold: float = 0.7) -> float:
    """Information Coverage Score: mean over generated sentences of (similar expected sentences / N_ER).

    Returns 0.0 when either text has no sentence. One ``embed`` call covers both texts.
    """
    gen, exp = split_sentences(generated), split_sentences(expected)
    if not gen or not exp:
        return 0.0
    vectors = _embed_checked(embed, gen + exp)
    gen_vecs, exp_vecs = vectors[: len(gen)], vectors[len(gen) :]
    total = 0.0
    for g in gen_vecs:
        highly_similar = sum(1 for e in exp_vecs if cosine(g, e) >= threshold - _EPS)
        total += highly_similar / len(exp)
    return total / len(gen)


def normalise(text: str) -> str:
    """Lower-case, drop markdown emphasis marks, collapse whitespace: the form used for literal matches."""
    return _SPACES.sub(" ", _MARKDOWN.sub("", text or "")).strip().lower()


def kpcs(generated: str, key_points: Sequence[str], embed: Embed, threshold: float = 0.6) -> float:
    """Key Point Coverage Score: covered key points / all key points (0.0 when there are none).

    A key point is covered when its normalised text occurs in the normalised generated text, or when
    its embedding has cosine >= threshold with some generated sentence. ``embed`` is called once, and
    only for key points not already found literally.
    """
    points = [p for p in key_points if p and p.strip()]
    if not points:
        return 0.0
    haystack = normalise(generated)
    literal = [bool(haystack) and normalise(p) in haystack for p in points]
    missing = [p for p, hit in zip(points, literal, strict=True) if not hit]
    sentences = split_sentences(generated)
    semantic = 0
    if missing and sentences:
        vectors = _embed_checked(embed, missing + sentences)
        point_vecs, sent_vecs = vectors[: len(missing)], vectors[len(missing) :]
        semantic = sum(1 for p in point_vecs if any(cosine(p, s) >= threshold - _EPS for s in sent_vecs))
    return (sum(literal) + semantic) / len(points)


def derive_key_points(key_letter: str, option_text: str, explanation: str, max_points: int = 4) -> list[str]:
    """Fallback key points for a record without any: the option text, its lettered form, then clauses.

    Order: ``option_text``, ``"<letter>) <option_text>"``, then the clauses of the explanation (split at
    sentence ends, ``;`` and ``", "``; trailing punctuation stripped; clauses of one word skipped).
    Duplicates (compared normalised) are dropped; at most ``max_points`` are returned.
    """
    candidates: list[str] = []
    option = option_text.strip()
    if option:
        candidates.append(option)
        if key_letter.strip():
            candidates.append(f"{key_letter.strip()}) {option}")
    for clause in _CLAUSE_END.split(explanation or ""):
        clause = clause.strip().rstrip(".!?:;,").strip()
        if len(clause.split()) >= 2:
            candidates.append(clause)
    points: list[str] = []
    seen: set[str] = set()
    for candidate in candidates:
        key = normalise(candidate)
        if key and key not in seen:
            seen.add(key)
            points.append(candidate)
    return points[: max(max_points, 0)]


def aics(ics: float, kpcs: float, alpha: float) -> float:
    """Average Information Capture Score: ``alpha*ICS + (1-alpha)*KPCS``; alpha must lie in [0, 1]."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    return alpha * ics + (1.0 - alpha) * kpcs


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def alpha_sweep(
    rows: Sequence[tuple[float, float, bool]], alphas: Sequence[float] = DEFAULT_ALPHAS
) -> list[dict[str, Any]]:
    """Mean AICS of correct and incorrect rows for each alpha (the paper's Figure 2).

    A row is ``(ics, kpcs, correct)``. Each result is ``{"alpha", "correct", "incorrect", "gap",
    "n_correct", "n_incorrect"}`` where ``gap = correct - incorrect``; a mean over no rows is None, and
    so is the gap when either mean is None.
    """
    sweep: list[dict[str, Any]] = []
    for alpha in alphas:
        good = [aics(i, k, alpha) for i, k, ok in rows if ok]
        bad = [aics(i, k, alpha) for i, k, ok in rows if not ok]
        mean_good, mean_bad = _mean(good), _mean(bad)
        gap = mean_good - mean_bad if mean_good is not None and mean_bad is not None else None
        sweep.append(
            {
                "alpha": alpha,
                "correct": mean_good,
                "incorrect": mean_bad,
                "gap": gap,
                "n_correct": len(good),
                "n_incorrect": len(bad),
            }
        )
    return sweep


def best_alpha(sweep: Sequence[Mapping[str, Any]]) -> float | None:
    """The alpha with the largest gap (ties within 1e-9 go to the smaller alpha); None if no gap exists."""
    best: tuple[float, float] | None = None
    for row in sorted((r for r in sweep if r.get("gap") is not None), key=lambda r: float(r["alpha"])):
        alpha, gap = float(row["alpha"]), float(row["gap"])
        if best is None or gap > best[1] + _EPS:
            best = (alpha, gap)
    return None if best is None else best[0]


def describe(values: Sequence[float]) -> dict[str, Any]:
    """Count, mean, std, min, max, like pandas' ``describe``.

    ``std`` is the sample standard deviation (ddof=1), as pandas and the paper's Tables 4 and 6 use;
    it is 0.0 for a single value. ``min`` and ``max`` keep the input's type (ints stay ints). An empty
    sequence gives count 0 and None for everything else.
    """
    if not values:
        return {"count": 0, "mean": None, "std": None, "min": None, "max": None}
    data = [float(v) for v in values]
    std = statistics.stdev(data) if len(data) > 1 else 0.0
    return {"count": len(data), "mean": statistics.fmean(data), "std": std, "min": min(values), "max": max(values)}


# --- which option did a reply choose -------------------------------------------------------------

_LETTER = r"(?P<open>[\[(])?\s*(?P<letter>[A-Za-z])\s*(?P<close>[\])])?(?![\w'])"
_NOT_CHOSEN = r"(?!\s*[\])]?\s*(?:is|was|are|would\s+be)\s+(?:not|wrong|incorrect|false|unlikely|excluded))"
_FILLER = (
    r"(?:[\s:=\-–—]+|\b(?:is|would|will|be|should|must|here|then|therefore|thus|clearly|definitely|"
    r"probably|likely|correct|right|best|final|the|option|choice|letter)\b)*"
)
_STATED = re.compile(
    r"\b(?:answer|choose|chose|select|selected|pick|picked|go\s+with|going\s+with)\b" + _FILLER + _LETTER + _NOT_CHOSEN,
    re.IGNORECASE,
)
_MENTIONED = re.compile(r"\b(?:option|choice)\b" + _FILLER + _LETTER + _NOT_CHOSEN, re.IGNORECASE)
_IS_CORRECT = re.compile(
    r"(?<![\w'])(?P<open>[\[(])?(?P<letter>[A-Z])(?P<close>[\])])?\s+(?:is|would\s+be|seems)\s+"
    r"(?:the\s+)?(?:correct|right|best)\b"
)
_LEADING = re.compile(r"^\s*(?P<letter>[A-Za-z])\s*(?P<close>[\]).:]|$)")
_PARENTHESISED = re.compile(r"(?P<open>[\[(])\s*(?P<letter>[A-Za-z])\s*[\])]")
_ALTERNATIVE = re.compile(r"\s*(?:or|and|/|,)\s*(?:option\s+)?" + _LETTER + _NOT_CHOSEN, re.IGNORECASE)
_BEFORE_PUNCTUATION = ("", ".", ",", ";", ":", "!", "?")


def _named(match: re.Match[str], text: str, keys: Mapping[str, str]) -> str | None:
    """The option key a letter match names; a bare lower-case letter counts only before punctuation."""
    letter = match.group("letter")
    if letter.upper() not in keys:
        return None
    groups = match.groupdict()
    bracketed = bool(groups.get("open") or groups.get("close"))
    if letter.islower() and not bracketed and text[match.end() : match.end() + 1] not in _BEFORE_PUNCTUATION:
        return None  # "the answer is a drug ..." names no option
    return keys[letter.upper()]


def _letters(text: str, patterns: Sequence[re.Pattern[str]], keys: Mapping[str, str]) -> set[str]:
    """Option keys named by any of ``patterns``, plus alternatives joined on ("A or B" names both)."""
    found: set[str] = set()
    for pattern in patterns:
        for match in pattern.finditer(text):
            key = _named(match, text, keys)
            if key is None:
                continue
            found.add(key)
            alternative = _ALTERNATIVE.match(text, match.end())
            alt_key = _named(alternative, text, keys) if alternative else None
            if alt_key is not None:
                found.add(alt_key)
    return found


def _by_option_text(text: str, options: Mapping[str, str]) -> set[str]:
    """Options whose text occurs in the reply as a whole phrase, dropping ones inside a longer match."""
    hay = normalise(text)
    hits: dict[str, str] = {}
    for key, value in options.items():
        needle = normalise(value)
        if needle and re.search(r"(?<![\w.])" + re.escape(needle) + r"(?!\w)", hay):
            hits[key] = needle
    return {k for k, v in hits.items() if not any(v != w and v in w for w in hits.values())}


_RULES: tuple[tuple[re.Pattern[str], ...], ...] = (
    (_STATED,),
    (_LEADING,),
    (_MENTIONED, _IS_CORRECT),
    (_PARENTHESISED,),
)


def answer_letter(text: str, options: Mapping[str, str]) -> str | None:
    """The option key a reply chose, or None when it names none or several.

    Rules are tried in order and the first that finds anything decides (several distinct keys -> None):

    1. a stated answer: "Answer: B", "the answer is b)", "I'd choose option (C)", "I'll go with A";
    2. a leading letter: "D) ...", "D. ...", "D: ...", or just "D";
    3. an option mentioned as chosen: "the correct option is C", "B is correct";
    4. a parenthesised letter anywhere: "(C)", "[C]";
    5. the text of exactly one option appearing in the reply (a match inside a longer one is ignored).

    Statements like "option A is wrong" or "the answer is not A" name nothing; "A or B" names both.
    Keys are single letters, matched case-insensitively; a lower-case letter counts only when bracketed
    or followed by punctuation or the end ("the answer is a drug" is not option A). Markdown ``*``,
    ``_`` and backticks are ignored.
    """
    keys = {k.upper(): k for k in options if len(k) == 1 and k.isalpha()}
    clean = _MARKDOWN.sub("", text or "").strip()
    if not clean:
        return None
    for patterns in _RULES:
        found = _letters(clean, patterns, keys)
        if found:
            return found.pop() if len(found) == 1 else None
    found = _by_option_text(clean, options)
    return found.pop() if len(found) == 1 else None


# --- counts and rates ----------------------------------------------------------------------------


def accuracy(flags: Sequence[bool]) -> float | None:
    """Share of True flags; None for no flags."""
    return sum(1 for f in flags if f) / len(flags) if flags else None


def distribution(flags: Sequence[bool]) -> dict[str, int]:
    """Correct / incorrect counts (the paper's Figure 5)."""
    correct = sum(1 for f in flags if f)
    return {"correct": correct, "incorrect": len(flags) - correct}


def persistence_rate(asks: Sequence[tuple[str, bool]], corrected: Collection[str]) -> float | None:
    """Share of stage-4 asks about corrected records that were answered correctly.

    ``asks`` holds ``(record_id, correct)`` pairs; asks about records outside ``corrected`` are ignored.
    None when no ask concerns a corrected record.
    """
    return accuracy([ok for record, ok in asks if record in corrected])


def turns_to_correct(flags: Sequence[bool]) -> int | None:
    """1-based index of the first correct turn (the paper's "turns to reach the correct response")."""
    return next((i for i, ok in enumerate(flags, start=1) if ok), None)
