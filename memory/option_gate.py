"""What a memory may say of a multiple-choice question's options, and of the chatbot's rejected reasoning.

Part of the truth gate (:mod:`memory.grounding` runs these checks): a memory names the accepted option,
or another one only where the source said the same; a shared memory says what the answer answers; a
clause that copies the chatbot's rejected answer, or restates its rejected reasoning, is refused even
when each of its words occurs somewhere in what the source said. Pure and deterministic.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence

from memory.gate_terms import UNSAID_SHARE, Evidence, GateReason, GateVerdict, support_sentences
from memory.letters import letters_left
from memory.negatives import reversed_answer
from memory.options import (
    Answers,
    answers,
    leaning,
    named_options,
    negative_question,
    parse_options,
    part_of,
    question_stem,
)
from memory.wording import CHUNK, NEGATION, clauses, exact, normal, sentences, stems, stemset, words

# a clause of a memory whose claim (its words beyond the question's stem) one rejected chatbot clause
# covers this much of, and no source clause within this margin of it, is the chatbot's rejected reasoning
ECHO_COVER, ECHO_MARGIN, ECHO_MIN_STEMS = 0.8, 0.3, 3
# a clause of a memory that names a rejected option, that one chatbot clause naming it covers this much of
# and that no clause of the source covers as much of, is the chatbot's rejected answer, copied
COPY_COVER, COPY_MIN_STEMS = 0.8, 2


def known_answers(evidence: Evidence) -> Answers:
    """The accepted and rejected options of the conversation's question (none without options).

    Every check of a candidate asks; the answer is worked out once per conversation.
    """
    said = (tuple(evidence.source_said), tuple(evidence.model_rejected), tuple(evidence.model_final))
    return _known_answers(evidence.question, *said)


@functools.lru_cache(maxsize=64)
def _known_answers(
    question: str, source_said: tuple[str, ...], model_rejected: tuple[str, ...], model_final: tuple[str, ...]
) -> Answers:
    options = parse_options(question)
    if not options:
        return Answers(accepted=frozenset(), rejected=frozenset())
    return answers(source_said, model_rejected, options, model_final, negative_question(question))


def names_accepted(text: str, evidence: Evidence) -> bool:
    """Whether the memory names an option the source accepted: outside a negation, or written out whole."""
    options, accepted = parse_options(evidence.question), known_answers(evidence).accepted
    return bool(named_options(text, options, positive_only=True) & accepted) or _written_out(
        text, [options[letter] for letter in accepted]
    )


def _written_out(text: str, options: Iterable[str]) -> bool:
    """Whether one of the options stands in the text word for word ("II", "t(11,22)": too short for stems)."""
    flat = f" {normal(text)} "
    return any(f" {normal(option)} " in flat for option in options if normal(option))


def answer_without_topic(text: str, evidence: Evidence) -> bool:
    """A shared memory that names an option and little else, or names it as the answer to part of the question.

    "The correct answer is X." says nothing of what X answers. "The risk of transmission of Hep. B in child is
    20%" answers "A mother is HBsAg positive and anti-HBe positive. Risk of transmission of Hep. B in child
    is": without the case the question sets out first, the figure reads as a general one. A memory whose
    only words beyond the option are the question's keeps one word at least of the case.
    """
    options = parse_options(evidence.question)
    if not options or not named_options(text, options, positive_only=True):
        return False
    option_words = stemset(options.values())
    rest = {w for w in stems(text) if w not in option_words}
    parts: list[str] = []
    for piece in sentences(question_stem(evidence.question)):
        if parts and len(stems(piece)) < 3:  # "Hep. B in child is:" is one sentence
            parts[-1] += " " + piece
        elif stems(piece):
            parts.append(piece)
    case = stemset(parts[:-1]) - set(stems(parts[-1])) - option_words if parts else set()
    return len(rest) < 2 or (bool(case) and rest <= stemset(parts) and not rest & case)


def says_nothing_new(text: str, evidence: Evidence) -> bool:
    """A memory that names no option and adds under two content words to the question's own.

    "On sleep apnea syndrome: the expert corrected the assistant's mistake by providing the correct
    answer" is about the conversation and true, and tells a later reader nothing.
    """
    options = parse_options(evidence.question)
    if options and named_options(text, options, positive_only=True):
        return False
    if _written_out(text, options.values()):
        return False  # an option too short for stems ("II") or split by its own commas
    asked = set(stems(question_stem(evidence.question)))
    return len([w for w in set(stems(text)) if w not in asked]) < 2


def rejected_answer_copy(text: str, evidence: Evidence) -> str | None:
    """The chatbot's rejected answer sentence that a clause of the memory copies, if any.

    "The dose is 1 ml in 1:1000, that is 1 mg of adrenaline intramuscularly", stored after the expert
    said 0.5 ml: each chunk of it may be vouched for by some clause of the expert's (who discussed the
    wrong dose to explain why it is wrong), but the clause as a whole asserts the rejected option. A
    clause the source itself said as much of ("You're right that HDL carries cholesterol back to the
    liver") is the source's.
    """
    options = parse_options(evidence.question)
    if not options or not evidence.model_rejected:
        return None
    rejected = known_answers(evidence).rejected
    if not rejected:
        return None
    pitched = [
        (c, set(stems(c)))
        for said in evidence.model_rejected
        for c in clauses(said)
        if named_options(c, options, positive_only=True) & rejected
    ]
    for clause in clauses(text):
        mine = set(stems(clause))
        if len(mine) < COPY_MIN_STEMS or not named_options(clause, options, positive_only=True) & rejected:
            continue
        copied = next((said for said, theirs in pitched if len(mine & theirs) >= COPY_COVER * len(mine)), None)
        backed = support_sentences(clause, evidence.source_said)
        if copied is not None and (not backed or backed[0][0] < COPY_COVER):
            return copied
    return None


def rejected_in_other_words(text: str, evidence: Evidence) -> str | None:
    """The rejected option a clause of the memory says is the answer in other words, if any.

    "The Greene and Vermillion index grades the state of the periodontium", after the expert rejected
    "Periodontal disease" for "Oral hygiene": the clause is about the question's subject (half its words at
    least), leans to the rejected option ("periodontium") and not to the accepted one, and no clause of the
    source says as much of it. A source clause that does ("You're right that pulsatile GnRH starts
    puberty") makes it the source's.
    """
    options = parse_options(evidence.question)
    if not options or not evidence.model_rejected:
        return None
    known = known_answers(evidence)
    topic = set(stems(question_stem(evidence.question)))
    if not known.accepted or not known.rejected or not topic:
        return None
    # and chunk by chunk: "The mandibular fossa is a part of the mandible, so ... the right option is Temporal
    # bone" (fresh27's truth-948) gives the rejected answer before its comma, the accepted one after it
    whole = clauses(text)
    for clause in dict.fromkeys([*whole, *(chunk for c in whole for chunk in CHUNK.split(c) if chunk.strip())]):
        if 2 * len(set(stems(clause)) & topic) < len(topic):
            continue
        leans = leaning([clause], options, beyond=question_stem(evidence.question))
        if leans & known.accepted or not leans & known.rejected:
            continue
        backed = support_sentences(clause, evidence.source_said)
        if not backed or backed[0][0] < COPY_COVER:
            letter = sorted(leans & known.rejected)[0]
            return f"{letter}) {options[letter]}"
    return None


def rejected_echo(text: str, evidence: Evidence, source: Sequence[str]) -> str | None:
    """The rejected chatbot clause that a clause of the memory restates, where the source never said it.

    "Pre-renal azotemia: 36 hours without urine ... means the tubules have been damaged" glues the
    accepted answer to the reasoning the expert rejected; each word may occur somewhere in what the
    expert said, but the clause is the chatbot's. The case's own words (the question without its options)
    and the accepted answer's are left out of the comparison: restating them is neither side's claim.
    """
    if not evidence.model_rejected:
        return None
    options = parse_options(evidence.question)
    accepted = known_answers(evidence).accepted
    case = set(stems(question_stem(evidence.question))) | stemset(options[a] for a in accepted)
    for clause in clauses(text):
        claim = [w for w in dict.fromkeys(stems(clause)) if w not in case]
        if len(claim) < ECHO_MIN_STEMS:
            continue
        words = " ".join(claim)
        echoed = support_sentences(words, evidence.model_rejected)
        if echoed and echoed[0][0] >= ECHO_COVER:
            backed = support_sentences(words, source)
            if not backed or backed[0][0] <= echoed[0][0] - ECHO_MARGIN:
                return echoed[0][1]
    return _rejected_sentence_copy(text, evidence, source, accepted, options)


def _rejected_sentence_copy(
    text: str, evidence: Evidence, source: Sequence[str], accepted: frozenset[str], options: dict[str, str]
) -> str | None:
    """A rejected chatbot sentence the memory copies as a whole, which no source clause says as much of.

    "The gland lies between its two bellies, which split it into a superficial and a deep part" is the
    chatbot's reasoning for the rejected digastric; the expert's clauses share the question's words with
    it, which hides the copy from the clause-by-clause comparison. A memory that names the accepted
    option is about the answer, not a copy.
    """
    claim = set(stems(text)) - set(stems(question_stem(evidence.question)))
    if len(claim) < ECHO_MIN_STEMS or named_options(text, options, positive_only=True) & accepted:
        return None
    echoed = support_sentences(text, evidence.model_rejected)
    backed = support_sentences(text, source)
    if echoed and echoed[0][0] >= COPY_COVER and (not backed or backed[0][0] < COPY_COVER):
        return echoed[0][1]
    return None


# a chunk that gives an option as the answer ("the accepted answer is X", "the right option is X"): only the
# accepted option may be given so, even where the source said something else of X
_GIVES_ANSWER = re.compile(r"\b(?:answer|option)\s+(?:is|was)\b", re.IGNORECASE)


def _rejected_list(text: str, options: dict[str, str], known: Answers, source: Sequence[str]) -> str | None:
    """A rejected option of several comma-separated parts that a sentence of the memory writes out whole.

    The chunks the other checks read end at commas, so they never see such an option whole: "The APGAR
    acronym stands for Activity, pulse pressure, grimace, appearance, rate of respiration, so ... the right
    option is Appearance, pulse, grimace, activity, respiration" (fresh29's truth-1032) asserts the
    rejected list. A sentence that denies something, or an option the source itself wrote out, is left.
    """
    for letter in sorted(known.rejected - known.accepted):
        name = f" {normal(options[letter])} "
        alike = [other for other in options if other != letter and f" {normal(options[other])} " == name]
        if "," not in options[letter] or alike or any(name in f" {normal(said)} " for said in source):
            continue  # "CD 5+, CD 23+" and "CD 5+, CD 23-" are alike in plain words
        if any(name in f" {normal(s)} " and not NEGATION.search(s) for s in sentences(text)):
            return letter
    return None


def option_check(text: str, evidence: Evidence, source: Sequence[str]) -> GateVerdict | None:
    """A memory may name an option other than the accepted one only where the source said the same.

    Checked chunk by chunk (a chunk ends at a comma, colon, semicolon or sentence end): the chunk that
    names the option must be said by a source clause that names it too, in full when the option is
    the rejected answer. An option mentioned in a negation ("not timolol") needs no support when it is
    the rejected answer, but one the source never mentioned at all is a claim nobody made.
    """
    options = parse_options(evidence.question)
    if not options:
        return None
    misread = _lettered_or_reversed(text, evidence)
    if misread is not None:
        return misread
    text = unquoted(text, evidence.question)
    known = known_answers(evidence)
    listed = _rejected_list(text, options, known, source)
    if listed is not None:
        detail = f"states the rejected answer {listed}) {options[listed]}, written out whole"
        return GateVerdict(ok=False, reason=GateReason.REJECTED_ANSWER, detail=detail)
    source_clauses = [c for s in source for c in clauses(s)]
    # in a negative question ("... does NOT provide:") "X does not ..." asserts X as the answer
    negated_ask = bool(NEGATION.search(question_stem(evidence.question)))
    for chunk in (c for c in CHUNK.split(text) if c.strip()):
        for letter in sorted(named_options(chunk, options, positive_only=not negated_ask) - known.accepted):
            whole = _within_accepted(letter, text, options, known.accepted)
            if whole is not None:  # part of an accepted option of several parts
                if whole:
                    continue
                wider = next(a for a in sorted(known.accepted) if part_of(options[letter], options[a]))
                return GateVerdict(
                    ok=False,
                    reason=GateReason.OTHER_OPTION,
                    detail=f"names {letter}) {options[letter]}, only part of the accepted {wider}) {options[wider]}",
                )
            if _GIVES_ANSWER.search(chunk) and letter not in known.rejected:  # fresh25's truth-914
                detail = f"gives {letter}) {options[letter]} as the answer, which the source did not accept"
                return GateVerdict(ok=False, reason=GateReason.OTHER_OPTION, detail=detail)
            said_with = [c for c in source_clauses if letter in named_options(c, options)]
            if letter in known.rejected:
                said_with = [w for c in said_with for w in _around(c, letter, options)]
            best = support_sentences(chunk, said_with)
            needed = 1.0 if letter in known.rejected else 1 - UNSAID_SHARE
            if best and best[0][0] >= needed:
                continue
            if letter in known.rejected:
                return GateVerdict(
                    ok=False,
                    reason=GateReason.REJECTED_ANSWER,
                    detail=f"states the rejected answer {letter}) {options[letter]}",
                )
            return GateVerdict(
                ok=False,
                reason=GateReason.OTHER_OPTION,
                detail=f"names {letter}) {options[letter]}, which the source never stated",
            )
    return _negated_options(text, options, source, negated_ask, known)


def _lettered_or_reversed(text: str, evidence: Evidence) -> GateVerdict | None:
    """A memory that calls an option by its letter, or says a negative question's answer the other way round."""
    lettered = letters_left(text)
    if lettered:
        detail = f"calls an option by its letter or place ({lettered[0]!r}): another lettering moves it"
        return GateVerdict(ok=False, reason=GateReason.OTHER_OPTION, detail=detail)
    reversed_part = reversed_answer(text, evidence.question, known_answers(evidence).accepted)
    if reversed_part is not None:
        detail = f"says the accepted answer is what the question asks it is not: {reversed_part!r}"
        return GateVerdict(ok=False, reason=GateReason.NEGATED, detail=detail)
    return None


def _negated_options(
    text: str, options: dict[str, str], source: Sequence[str], negative: bool, known: Answers
) -> GateVerdict | None:
    """What a memory denies of an option the source never spoke of.

    An option the source never mentioned is a claim nobody made. So is "4% HF is not used for etching
    porcelain" after a bare "That is not right": the rejected option was refused as the answer, and
    nothing more was said of it, unless the memory sets it against the accepted one ("9.6% HF, not 4%").
    """
    mentioned = {letter for s in source for c in clauses(s) for letter in named_options(c, options)}
    positive = named_options(text, options, positive_only=True)
    denied = named_options(text, options) - positive
    for letter in sorted(denied - known.accepted - known.rejected - mentioned):
        return GateVerdict(
            ok=False,
            reason=GateReason.OTHER_OPTION,
            detail=f"says something of {letter}) {options[letter]}, which the source never mentioned",
        )
    if not negative and not positive & known.accepted:
        spoken_of = {letter for s in source for letter in named_options(s, options)}
        for letter in sorted(denied & known.rejected - spoken_of):
            detail = (
                f"a claim of its own against {letter}) {options[letter]}: the source only said it is not the answer"
            )
            return GateVerdict(ok=False, reason=GateReason.UNSAID, detail=detail)
    return None


_QUOTED = re.compile(r"(?<![A-Za-z])'(.{8,}?)'(?=[,:;.]?(?:\s|$))")  # "Patient's lab value" inside is kept


def unquoted(text: str, question: str) -> str:
    """``text`` without the question it quotes ("For the question '...', the answer is 12.").

    The question's own words and numbers name no option: "Calcium 10" in a quoted case is no "C) 10".
    A quote counts when each of its parts (a long question is cut with "...") is in the question.
    """
    asked = f" {normal(question)} "

    def quoted(match: re.Match[str]) -> str:
        parts = [normal(p) for p in match.group(1).split("...")]
        return "'the question'" if all(f" {p} " in asked for p in parts if p) else match.group(0)

    return _QUOTED.sub(quoted, text)


def _around(clause: str, letter: str, options: dict[str, str]) -> list[str]:
    """Each stretch of ``clause`` from the chunk before one that names ``letter`` to the chunk after it.

    What the source said of a rejected option is said near it: in "resistant to sulfadoxine-pyrimethamine,
    so AS+SP, the ACT used in the rest of India, was replaced" the ACT is AS+SP, not the rejected option.
    """
    chunks = [c for c in CHUNK.split(clause) if c.strip()]
    return [
        " ".join(chunks[max(0, i - 1) : i + 2]) for i, c in enumerate(chunks) if letter in named_options(c, options)
    ]


def _within_accepted(letter: str, text: str, options: dict[str, str], accepted: frozenset[str]) -> bool | None:
    """For an option whose words are all inside an accepted option's: whether ``text`` names that one in full.

    None when no accepted option contains it. "Potassium oxalate" inside the accepted "Potassium oxalate +
    sodium fluoride": a memory with both parts speaks of the accepted answer, one with the first part
    alone names another option. An option that differs only by a number is another quantity, not a part
    ("1 ml in 1:1000" is not part of "0.5 ml in 1:1000").
    """
    wider = [
        a
        for a in accepted
        if part_of(options[letter], options[a])
        and not all(exact(w) for w in set(words(options[a])) - set(words(options[letter])))
    ]
    if not wider:
        return None
    return any(named_options(text, {a: options[a]}) for a in wider)


def accepted_option(evidence: Evidence) -> tuple[str, str] | None:
    """The option the source accepted (letter, text), when exactly one is clear."""
    options = parse_options(evidence.question)
    accepted = known_answers(evidence).accepted
    if len(accepted) != 1:
        return None
    letter = next(iter(accepted))
    return letter, options[letter]
