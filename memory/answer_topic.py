"""Where an answer memory is filed and what it draws the answer from (truth gate, session 14).

An LLM-response memory names the topic it is filed under, and the residual extractor's answer sentence
names the premise it draws the answer from: both must be about the question asked. Pure and deterministic.
"""

from __future__ import annotations

import re

from memory.gate_terms import Evidence, GateReason, GateVerdict
from memory.options import about_topic, parse_options, question_stem
from memory.wording import stems, stemset

# the topic an LLM-response memory is filed under ("For <topic>, the accepted answer is ...", "On <topic>: ...",
# "On <topic>, avoid this mistake: ...", as agents.schemas composes them)
_FILED = re.compile(r"^(?:For|On) (?P<topic>.+?)(?:, the accepted answer is |, avoid this mistake: |: )")


def filed_elsewhere(text: str, evidence: Evidence) -> GateVerdict | None:
    """A memory filed under a topic the question neither asks nor offers is refused.

    "On the location of the foramen caecum, avoid this mistake: ..." for "The lateral lingual swellings and
    tuberculum impar give rise to: ...": the foramen caecum came up in the talk, but a later reader looks the
    mistake up under a question nobody asked. A topic shares one content word at least with the question's
    stem or its options.
    """
    found = _FILED.match(text)
    if found is None:
        return None
    asked = set(stems(question_stem(evidence.question))) | stemset(parse_options(evidence.question).values())
    topic = found.group("topic")
    if not asked or set(stems(topic)) & asked:
        return None
    detail = f"filed under {topic!r}, which the question neither asks nor offers"
    return GateVerdict(ok=False, reason=GateReason.OFF_TOPIC, detail=detail)


# "<premise>, so for <what the question asks> the right option is <option>", the extractor's answer sentence
# (its topic is the question that sentence says it answers)
_DRAWN = re.compile(
    r"^(?P<premise>.+?),\s+so for (?P<topic>.+?),? the (?:right|correct) (?:option|answer) is ", re.IGNORECASE
)


def answers_another_question(text: str, evidence: Evidence) -> GateVerdict | None:
    """An answer sentence that says it answers a question mostly not the one asked is refused.

    "..., so for the drug of choice in gingiva the right option is Pyogenic granuloma" for "Local irritating
    factors in gingiva is most likely give rise to" (fresh35's truth-1246): the extractor kept its worked
    example's question and changed one word. More than half the content words of the question it names must
    be the asked question's or its options' ("the master switch in iron metabolism" answers "the regulator of
    iron metabolism"); where only half are, the others must not be the example's.
    """
    found = _DRAWN.match(text.strip())
    if found is None:
        return None
    asked = set(stems(question_stem(evidence.question))) | stemset(parse_options(evidence.question).values())
    topic = set(stems(found.group("topic")))
    foreign = topic - asked
    copied = foreign & stemset([evidence.example])
    if not asked or len(foreign) * 2 < len(topic) or (len(foreign) * 2 == len(topic) and not copied):
        return None
    detail = f"answers {found.group('topic')!r}, which is not the question asked"
    return GateVerdict(ok=False, reason=GateReason.OFF_TOPIC, detail=detail, unsupported=sorted(foreign))


def answer_drawn_from_elsewhere(text: str, evidence: Evidence) -> str | None:
    """The premise of an answer sentence that is not about the question, if it is not.

    "Nickel titanium is the first wire we use for aligning, so for the most elastic wire the right option is
    nickel titanium": the expert said the wire is used first because it is the most elastic, and the memory
    draws the answer from the consequence. A premise that gives the answer says so in the question's words
    (two of them at least, or all if it has fewer): "Hepcidin is the master switch for iron metabolism, so
    for ..." answers "regulator of iron metabolism".
    """
    found = _DRAWN.match(text.strip())
    if found is None or not stems(question_stem(evidence.question)):
        return None
    premise = found.group("premise")
    return None if about_topic(premise, question_stem(evidence.question)) else premise
