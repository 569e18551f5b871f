"""Whose claim a memory carries: what the source said of one option is not said of another.

Part of the truth gate (:mod:`memory.grounding` runs these on memories credited to the source). Every
word of "Apo B-100 mutation causes type I hyperlipoproteinaemia" may have been said, but of lipoprotein
lipase deficiency. Each source clause is about the options it names, or, when it opens with a pronoun,
about those named just before it. Written in session 10 from fresh11's truth-429 and fresh12's truth-462;
the mixing check from fresh13's truth-515 and -518. Pure and deterministic.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence

from memory.gate_terms import Evidence, support_sentences
from memory.option_gate import ECHO_MIN_STEMS
from memory.options import named_options, parse_options, question_stem
from memory.wording import clauses, stems, stemset

# a memory clause naming an option whose claim one source clause about other options covers this much of
SWAP_COVER = 0.75
# words of a clause that come only from what the source said of one option, borrowed without naming it
MIX_WORDS = 2


def swapped_subject(text: str, evidence: Evidence, source: Sequence[str]) -> str | None:
    """The source clause about one option that a clause of the memory says of another, if any.

    "Apo B-100 mutation is the most probable cause of type I hyperlipoproteinaemia, with huge amounts of
    chylomicrons", after the expert said that lipoprotein lipase deficiency (another option) gives type I
    hyperlipoproteinaemia with huge amounts of chylomicrons: every word was said, but of another subject.
    The claim (the clause's words beyond the question's stem and the options) comes from one source clause
    that names other options than the memory's, and no clause naming the memory's says as much of it. A
    source clause that opens with a pronoun ("It's hydrophilic") is about the options its sentence or the
    sentence before names.
    """
    options = parse_options(evidence.question)
    if not options:
        return None
    case = case_words(evidence.question, options)
    subjects, _ = _clause_subjects(tuple(source), tuple(options.items()))
    for clause in clauses(text):
        named = named_options(clause, options, positive_only=True)
        if not named:
            continue
        unnamed = " ".join(w for w in clause.split() if not named_options(w, options))  # "RealSeal" too
        claim = " ".join(w for w in dict.fromkeys(stems(unnamed)) if w not in case)
        if len(claim.split()) < ECHO_MIN_STEMS:
            continue
        about = [(share, said, subjects[said]) for share, said in support_sentences(claim, list(subjects))]
        own = max((share for share, _, theirs in about if theirs & named), default=0.0)
        for share, said, theirs in about:
            if share >= SWAP_COVER and share > own and theirs and not theirs & named:
                return said
    return None


def mixed_subjects(text: str, evidence: Evidence, source: Sequence[str]) -> str | None:
    """An option whose own words a clause of the memory borrows while naming another option, or none, if any.

    "Papillon-Lefevre syndrome is a cathepsin C deficiency ... leading to kinky hair, cerebral degeneration
    and subdural haematomas", after the expert gave kinky hair and subdural haematomas to Menkes disease and
    cathepsin C to Papillon-Lefevre: no one source clause says most of it, so the swap check misses it. A
    claim word is an option's own when every source clause that says it is about that option alone; a clause
    that borrows two such words of an option it does not name, while it names another option or borrows
    from a second one as well, joins what the source kept apart.
    """
    options = parse_options(evidence.question)
    if not options:
        return None
    case = case_words(evidence.question, options)
    _, owners = _clause_subjects(tuple(source), tuple(options.items()))
    for clause in clauses(text):
        named = named_options(clause, options, positive_only=True)
        borrowed: dict[str, int] = {}
        for word in set(stems(clause)) - case:
            whose = owners.get(word, frozenset())
            if len(whose) == 1 and len(owner := next(iter(whose))) == 1:
                letter = next(iter(owner))
                borrowed[letter] = borrowed.get(letter, 0) + 1
        sources = {letter for letter, n in borrowed.items() if n >= MIX_WORDS}
        from_others = sources - named
        if from_others and (named or len(sources) >= 2):
            letter = sorted(from_others)[0]
            return f"{letter}) {options[letter]}"
    return None


_PRONOUN = re.compile(r"^(?:it|it's|its|they|they're|their|these|this|those|he|she)\b", re.IGNORECASE)


def case_words(question: str, options: Mapping[str, str]) -> set[str]:
    """The question's own words and the options': restating them is neither side's claim."""
    return set(stems(question_stem(question))) | stemset(options.values())


@functools.lru_cache(maxsize=64)
def _clause_subjects(
    source: tuple[str, ...], items: tuple[tuple[str, str], ...]
) -> tuple[Mapping[str, frozenset[str]], Mapping[str, frozenset[frozenset[str]]]]:
    """Each source clause with the options it is about, and each word with the subjects of the clauses saying it.

    A clause is about the options it names, or, when it opens with a pronoun, the last ones named. Worked out
    once per conversation (both checks ask for every candidate); read only.
    """
    options = dict(items)
    subjects: dict[str, frozenset[str]] = {}
    for text in source:
        last: frozenset[str] = frozenset()
        for clause in clauses(text):
            named = frozenset(named_options(clause, options))
            if not named and _PRONOUN.match(clause):
                named = last
            subjects.setdefault(clause, named)
            last = named or last
    owners: dict[str, set[frozenset[str]]] = {}
    for said, about in subjects.items():
        for word in set(stems(said)):
            owners.setdefault(word, set()).add(about)
    return subjects, {word: frozenset(about) for word, about in owners.items()}
