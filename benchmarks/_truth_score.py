"""Scoring rules of the memory-truth benchmark: plain string rules, independent of mark's code.

The rules are described in ``bench_truth.py``'s docstring; this module holds them so that the runner
stays short and the tests can import the scorer without the model.
"""

from __future__ import annotations

import itertools
import re
import statistics
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

COMMITTED = ("active", "probationary", "pending_review")
PENDING = "pending_review"
SHARED_TYPE = "residual"
QUESTION_TYPE = "user_question"
SPLITS = ("dev", "test", "fresh", *(f"fresh{n}" for n in range(2, 38)))

# -- text rules ----------------------------------------------------------------------------------
_FOLD = str.maketrans("\u2010\u2011\u2012\u2013\u2014\u2212\u2018\u2019\u201c\u201d\u00a0", "------''\"\" ")
_WORD = re.compile(r"[a-z0-9][a-z0-9'+/-]*")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_CLAUSE = re.compile(r";|,\s*and\s|,?\s+but\s|,?\s+whereas\s|,?\s+while\s|,?\s+although\s|,?\s+however\b")
_PHRASE = re.compile(r"[,()\[\]]")
NEGATIONS = frozenset({"not", "never", "neither", "nor", "cannot", "unlike", "except"})
NEGATION_PHRASES = ("rather than", "instead of", "as opposed to", "other than")
AUXILIARIES = frozenset(
    re.findall(r"[a-z]+", "is are was were be been does do did can could will would should may might must has have had")
)
MISTAKES = ("mistak", "wrong", "incorrect", "error", "erroneous", "false", "reject", "misconcept")
# medical terms made of a mistake word, which call nothing a mistake ("the standard error of the mean",
# "graft rejection", "false ribs"); found by fresh31's writer: such a memory could never be credited
TERMS = re.compile(
    r"\b(?:standard|refractive|inborn|sampling|random|systematic|measurement|type\s+(?:i|ii|1|2))\s+errors?\b"
    r"|\berrors?\s+of\s+(?:refraction|metabolism)\b"
    r"|\bfalse[\s-]+(?:positives?|negatives?|aneurysms?|labou?r|ribs?|pelvis|vocal|cysts?|localising|localizing|evidence)\b"
    r"|\brejections?\b"
)
WINDOW_BEFORE, WINDOW_AFTER = 4, 3
STEM_STOPWORDS = frozenset(
    re.findall(
        r"[a-z]+",
        """which following most common commonly seen used true false best these this that with from into what
    will there their they does have least type types cause caused causes patient patients characteristic
    characterised characterized feature features given found done occurs occur shows show associated
    mediated involving called known name about than other more less also only after before during
    between under over case cases condition conditions""",
    )
)


def fold(text: str) -> str:
    """Lower-case, accents and typographic dashes/quotes folded, spaces collapsed."""
    text = unicodedata.normalize("NFKD", text.translate(_FOLD))
    text = "".join(c for c in text if not unicodedata.combining(c))
    return re.sub(r"\s+", " ", text).strip().lower()


def find(text: str, alternative: str) -> list[tuple[int, int]]:
    """Spans of ``alternative`` in folded ``text`` (numbers are not matched inside longer numbers)."""
    alt = fold(alternative)
    spans: list[tuple[int, int]] = []
    start = text.find(alt)
    while alt and start >= 0:
        end = start + len(alt)
        clash_left = alt[0].isdigit() and start > 0 and text[start - 1].isdigit()
        clash_right = alt[-1].isdigit() and end < len(text) and text[end].isdigit()
        if not (clash_left or clash_right):
            spans.append((start, end))
        start = text.find(alt, start + 1)
    return spans


def matches(text: str, groups: Sequence[Sequence[str]]) -> bool:
    """Every group has at least one alternative in ``text`` (already folded)."""
    return bool(groups) and all(any(find(text, alt) for alt in group) for group in groups)


def sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE.split(text) if s.strip()]


def clauses(sentence: str) -> list[str]:
    return [c for c in _CLAUSE.split(sentence) if c.strip()]


def _phrase_around(text: str, start: int, end: int) -> tuple[str, str]:
    """The text of the phrase before and after the span (phrases end at commas and brackets)."""
    left = max((m.end() for m in _PHRASE.finditer(text, 0, start)), default=0)
    right = next((m.start() for m in _PHRASE.finditer(text, end)), len(text))
    return text[left:start], text[end:right]


def _negated_before(words: list[str]) -> bool:
    window = words[-WINDOW_BEFORE:]
    if words and words[-1] == "no":
        return True
    if any(w in NEGATIONS or w.startswith("avoid") or w.endswith("n't") for w in window):
        return True
    joined = " ".join(window)
    return any(p in joined for p in NEGATION_PHRASES)


def _negated_after(words: list[str]) -> bool:
    window = words[:WINDOW_AFTER]
    if any(w == "cannot" or w.endswith("n't") or w.startswith("avoid") for w in window):
        return True
    return any(a in AUXILIARIES and b in {"not", "never"} for a, b in itertools.pairwise(window))


def has_mistake_word(text: str) -> bool:
    """The text calls something a mistake: a mistake word outside the medical terms made of one."""
    return any(w.startswith(MISTAKES) for w in _WORD.findall(TERMS.sub(" ", text)))


def framed(scope: str, start: int, end: int, mistake_scope: str) -> bool:
    """The occurrence ``scope[start:end]`` is negated, or its ``mistake_scope`` calls it a mistake."""
    before, after = _phrase_around(scope, start, end)
    return (
        _negated_before(_WORD.findall(before))
        or _negated_after(_WORD.findall(after))
        or has_mistake_word(mistake_scope)
    )


def supports(memory: str, groups: Sequence[Sequence[str]]) -> bool:
    """The memory states the fact: all groups match and its subject (group 0) occurs unframed."""
    text = fold(memory)
    if not matches(text, groups):
        return False
    for sentence in sentences(text):
        for clause in clauses(sentence):
            for alt in groups[0]:
                if any(not framed(clause, s, e, clause) for s, e in find(clause, alt)):
                    return True
    return False


def asserts(memory: str, groups: Sequence[Sequence[str]]) -> bool:
    """The memory states the false claim: one clause matches every group and none of it is framed."""
    text = fold(memory)
    for sentence in sentences(text):
        for clause in clauses(sentence):
            if not matches(clause, groups):
                continue
            spans = [span for group in groups for alt in group for span in find(clause, alt)]
            if not any(framed(clause, s, e, sentence) for s, e in spans):
                return True
    return False


def stem_words(question: str) -> list[str]:
    """Distinctive words of the question stem (the text before " A) ")."""
    stem = fold(question).split(" a) ", 1)[0]
    words = [w.strip("'-+/") for w in re.findall(r"[a-z][a-z'-]+", stem)]
    return sorted({w for w in words if len(w) >= 4 and w not in STEM_STOPWORDS})


def about_question(memory: str, words: Sequence[str]) -> bool:
    """At least two (all, if fewer) of the stem's distinctive words occur in the memory."""
    if not words:
        return False
    text = fold(memory)
    return sum(w in text for w in words) >= min(2, len(words))


# -- scoring ----------------------------------------------------------------------------------------
def fact_keywords(conv: dict[str, Any], i: int) -> list[list[str]]:
    """The keyword groups of asserted fact ``i``; the corrected fact's (0) also take the key option as written.

    A memory may name the answer in the dataset's own spelling ("Mineralocoicoids") where the writer's
    keywords have the usual one; an option shorter than five letters ("IA") would match inside words.
    """
    groups = [list(group) for group in conv["asserted"][i]["keywords"]]
    answer = fold(conv["options"][conv["key"]]) if i == 0 and "options" in conv else ""
    if len(answer) >= 5 and answer not in groups[0]:
        groups[0].append(answer)
    return groups


def score_memory(memory: dict[str, Any], conv: dict[str, Any]) -> dict[str, Any]:
    """Verdicts for one stored memory against one conversation's facts and false claims."""
    text = memory["text"]
    supported_by = [i for i in range(len(conv["asserted"])) if supports(text, fact_keywords(conv, i))]
    false_by = [i for i, f in enumerate(conv["false_claims"]) if asserts(text, f["keywords"])]
    on_question = memory["type"] == QUESTION_TYPE and about_question(text, stem_words(conv["question"]))
    supported = bool(supported_by) or on_question
    return {
        **memory,
        "committed": memory["status"] in COMMITTED,
        "shared": memory["type"] == SHARED_TYPE,
        "supported_by": supported_by,
        "about_question": on_question,
        "supported": supported,
        "false_by": false_by,
        "false": bool(false_by),
        "correct": supported and not false_by,
    }


def score_conversation(
    conv: dict[str, Any], memories: Iterable[dict[str, Any]], refused: Iterable[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """Per-memory verdicts and the conversation's counts (committed memories only).

    ``refused`` are the candidates the build refused (``state.report()["rejected"]``): scored with the
    same rules, to count the refusals that threw away a correct memory or stopped a false one.
    """
    verdicts = [score_memory(m, conv) for m in memories]
    refusals = [score_memory({**r, "status": "refused"}, conv) for r in refused or []]
    committed = [v for v in verdicts if v["committed"]]
    shared = [v for v in committed if v["shared"]]
    recall = [v for v in committed if v["correct"] and 0 in v["supported_by"]]
    return {
        "memories": verdicts,
        "committed": len(committed),
        "committed_shared": len(shared),
        "pending_review": sum(v["status"] == PENDING for v in committed),
        "correct": sum(v["correct"] for v in committed),
        "correct_shared": sum(v["correct"] for v in shared),
        "false": sum(v["false"] for v in committed),
        "false_shared": sum(v["false"] for v in shared),
        "recall": bool(recall),
        "recall_shared": any(v["shared"] for v in recall),
        "refused": refusals,
        "refused_correct": sum(v["correct"] for v in refusals),
        "refused_false": sum(v["false"] for v in refusals),
    }


def _ratio(num: float, den: float) -> float | None:
    return round(num / den, 3) if den else None


def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Aggregate scored conversations (each with ``score``, ``usage``, ``wall_s``, ``rejected``)."""
    if not rows:
        return {"conversations": 0}
    scores = [r["score"] for r in rows]
    total = {k: sum(s[k] for s in scores) for k in ("committed", "committed_shared", "correct", "correct_shared")}
    calls = [r["usage"].get("calls", 0) for r in rows]
    tokens = [r["usage"].get("prompt_tokens", 0) + r["usage"].get("completion_tokens", 0) for r in rows]
    walls = [r["wall_s"] for r in rows if r.get("wall_s") is not None]
    rejected = [len(r["rejected"]) for r in rows if r.get("rejected") is not None]
    return {
        "conversations": len(rows),
        "committed": total["committed"],
        "committed_shared": total["committed_shared"],
        "precision_shared": _ratio(total["correct_shared"], total["committed_shared"]),
        "precision_all": _ratio(total["correct"], total["committed"]),
        "recall": _ratio(sum(s["recall"] for s in scores), len(rows)),
        "recall_shared": _ratio(sum(s["recall_shared"] for s in scores), len(rows)),
        "false_claim_memories": sum(s["false"] for s in scores),
        "false_claim_memories_shared": sum(s["false_shared"] for s in scores),
        "pending_review": sum(s["pending_review"] for s in scores),
        "rejected_candidates": sum(rejected) if rejected else None,
        "rejected_correct": sum(s.get("refused_correct", 0) for s in scores) if rejected else None,
        "rejected_false": sum(s.get("refused_false", 0) for s in scores) if rejected else None,
        "calls_mean": round(statistics.fmean(calls), 2),
        "calls_max": max(calls),
        "tokens_mean": round(statistics.fmean(tokens), 1),
        "wall_s_median": round(statistics.median(walls), 2) if walls else None,
        "wall_s_p95": round(float(np.percentile(walls, 95)), 2) if walls else None,
        "errors": sum(len(r.get("errors", [])) for r in rows),
    }


def summarise_splits(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = {split: summarise([r for r in rows if r["split"] == split]) for split in SPLITS}
    out["all"] = summarise(rows)
    return out


# -- data -------------------------------------------------------------------------------------------
