"""A memory sentence spliced from two source sentences where they share a phrase (truth gate, session 15).

"The Parkland volume is titrated against the urine output through a catheter: aim for 0.5 mL/kg/h ..." runs
along "In burns, too, the Parkland volume is titrated against the urine output." up to "urine output", then
along "The simplest and most reliable bedside guide is hourly urine output through a catheter: aim for ..."
(fresh24's truth-883). Each half is the expert's, word for word; the claim they make together is not: the
urine targets were given for resuscitation in general, not for the Parkland volume. Pure and deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence

from memory.wording import normal, sentences

# the fewest words each half must add beyond the shared phrase, so a repeated article is no splice
SPLICE_SIDE = 2


def spliced(text: str, source: Sequence[str]) -> str | None:
    """The first memory sentence that runs along one source sentence and on along another, if any.

    The two runs overlap by one word at least (the phrase the splice turns on), each adds SPLICE_SIDE words
    of its own, and no one source sentence holds the whole memory sentence, even with words left out between
    ("The extrinsic pathway goes through Fas ..." of "the extrinsic, death-receptor pathway goes through Fas
    ...", truth-518, is that sentence shortened).
    """
    heard = [normal(sentence).split() for turn in source for sentence in sentences(turn)]
    heard = [words for words in heard if words]
    for sentence in sentences(text):
        words = normal(sentence).split()
        if len(words) < 2 * SPLICE_SIDE + 1 or any(_within(one, words) for one in heard):
            continue
        tails = [_longest_run(words, other, from_start=False) for other in heard]
        for i, one in enumerate(heard):
            head = _longest_run(words, one, from_start=True)
            if head < SPLICE_SIDE + 1:
                continue
            for j, tail in enumerate(tails):
                if j == i:
                    continue
                shared = head + tail - len(words)
                if shared >= 1 and head - shared >= SPLICE_SIDE and tail - shared >= SPLICE_SIDE:
                    return sentence
    return None


def _within(one: list[str], words: list[str]) -> bool:
    """Whether ``words`` appear in ``one`` in their order, with other words between them allowed."""
    rest = iter(one)
    return all(word in rest for word in words)


def _holds(one: list[str], words: list[str]) -> bool:
    n = len(words)
    return any(one[k : k + n] == words for k in range(len(one) - n + 1))


def _longest_run(words: list[str], one: list[str], *, from_start: bool) -> int:
    """How many of ``words``' first (or last) words appear in ``one`` as one run."""
    for n in range(len(words), 0, -1):
        part = words[:n] if from_start else words[-n:]
        if _holds(one, part):
            return n
    return 0
