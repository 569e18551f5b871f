"""A source sentence copied whole with its subject swapped for another ("Papain cuts below the hinge ...").

Part of the truth gate's subject checks (:func:`memory.subjects.other_subject` runs it). Written in
session 12 from fresh17's truth-661; the lead-in and the listed word (session 17) from fresh28's truth-1008.
Pure and deterministic.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from memory.wording import normal, sentences, stems

# a memory sentence that copies this share of a source sentence's words after its subject, as they are, copies it
REPLACED_REST = 0.8
# the most words a subject swapped for another has, on either side ("Pepsin" for "Papain")
SUBJECT_WORDS = 3


def replaced_subject(text: str, source: Sequence[str]) -> str | None:
    """The source sentence a memory sentence copies with its opening words swapped for others, if any.

    "Papain cuts below the hinge instead, so you get one bivalent F(ab')2", after the expert said "Pepsin
    cuts below the hinge instead, so you get ...": what follows the subject (REPLACED_REST of the rest of the
    sentence, three words at least) is copied as it is, and the subject it opened with (SUBJECT_WORDS words
    at most, as is the new one) is gone from the memory sentence while the new one is not in the source's.
    A narrower subject is refused too: "Rat bites are ..." copied from "Rodent bites are ..." is not what the
    expert said, though it may follow from it. A pronoun replaced by what it stands for ("It cuts aqueous
    production" as "Timolol cuts aqueous production") is no content word and passes. A source sentence is
    also compared from after its colon ("It's the parotid: the facial nerve enters the gland ..."), an
    opening article is left out, and the new subject may be a word the source sentence has elsewhere, when
    the memory sentence keeps that word there too ("The buccal nerve ... into its ..., buccal, ... branches",
    fresh28's truth-1008), but not the one its lead-in names ("Thyroid hormone does that: T3 increases ...").
    """
    said = [
        (one, _unarticled(piece))
        for turn in source
        for one in sentences(turn)
        for piece in dict.fromkeys([one, *one.split(": ")[1:]])
    ]
    for sentence in sentences(text):
        mine = _unarticled(sentence)
        own = set(stems(sentence))
        for one, theirs in said:
            ops = difflib.SequenceMatcher(None, theirs, mine, autojunk=False).get_opcodes()
            if len(ops) < 2 or ops[0][0] != "replace" or ops[0][1] or ops[0][3] or ops[1][0] != "equal":
                continue
            i2, j2 = ops[0][2], ops[0][4]
            if max(i2, j2) > SUBJECT_WORDS:
                continue
            gone, new = set(stems(" ".join(theirs[:i2]))), set(stems(" ".join(mine[:j2])))
            if not gone or not new or gone & own or not _added(new, stems(sentence), stems(one)):
                continue
            kept = ops[1][2] - ops[1][1]  # the words right after the subject, copied as they are
            if kept >= 3 and kept >= REPLACED_REST * (len(theirs) - i2):
                return one
    return None


def _unarticled(sentence: str) -> list[str]:
    """A sentence's words (:func:`memory.wording.normal`), without an opening article."""
    found = normal(sentence).split()
    return found[1:] if found and found[0] in {"the", "a", "an"} else found


def _added(new: set[str], mine: list[str], theirs: list[str]) -> bool:
    """Whether each stem of a memory's new subject is one the memory has more often than the source sentence."""
    return all(mine.count(w) > theirs.count(w) for w in new)
