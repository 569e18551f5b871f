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
_DRAWN = re.compile(r"^(?P<premise>.+?),\s+so for .+? the (?:right|correct) (?:option|answer) is ", re.IGNORECASE)


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
