"""A scripted stand-in for the LLM behind every role, for deterministic lifecycle tests.

It answers a multiple-choice question with the option a memory names for it ("answer is X) text" or
"answer is text"), found by the option's text so that re-lettered options still match, and otherwise
with the LAST option (wrong unless the key is last). Extractors return memories built
from the SME's words; the judge says "contradicts" for two different preferences; fact checks say 1;
the profile extractor reads "I am a X" as the person's occupation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from autogen_core.models import LLMMessage, SystemMessage, UserMessage
from pydantic import BaseModel

from agents.fakes import FunctionChatClient
from agents.schemas import Extraction, ResidualExtraction, ResponseExtraction

_ANSWER = re.compile(r"answer is ([A-D])\) (.+?)(?=[,:;]|\.\s|\.$|\.'|$)", re.I | re.M)
_OPTION = re.compile(r"^([A-D])\) (.+)$", re.M)
_FIRST_OPTION = re.compile(r"\s+A\) ", re.I)


def _extract(prompt: str, model: type[BaseModel]) -> str:
    conversation = prompt.split("<conversation>")[-1]
    said = [line.split(": ", 1)[1] for line in conversation.splitlines() if line.startswith(("User: ", "Expert: "))]
    question = _FIRST_OPTION.split(said[0])[0] if said else "the question"  # a turn is one line: stop at "A) "
    found = _ANSWER.search(conversation)
    answer = f"{found.group(1)}) {found.group(2).strip()}" if found else "unknown"
    if model is ResidualExtraction:
        return json.dumps(
            {"corrected_fact": (" ".join(said[1:]) or "The expert clarified the topic.")[:290], "more_facts": []}
        )
    if model is ResponseExtraction:
        return json.dumps(
            {
                "topic": f"the question '{question[:120]}'",
                "final_answer": answer,
                "reason": "the expert explained it",
                "avoid": "",
            }
        )
    return json.dumps(
        {"memories": [{"text": f"The user checks answers to questions like: {question}"[:380], "category": "fact"}]}
    )


def _answer(messages: Sequence[LLMMessage]) -> str:
    question = next(str(m.content) for m in reversed(messages) if isinstance(m, UserMessage))
    options = dict(_OPTION.findall(question))
    if not options:
        return "Noted."
    memories = " ".join(str(m.content) for m in messages if isinstance(m, SystemMessage))
    for letter, text in options.items():  # by the option's text: a paraphrase may re-letter the options
        if re.search(rf"answer is (?:[A-E]\) )?{re.escape(text.strip())}(?!\w)", memories, re.I):
            return f"Answer: {letter}. A refined memory from an expert says so."
    last = sorted(options)[-1]
    return f"Answer: {last}. This is my best guess."


def _judge(prompt: str) -> str:
    old = prompt.split("OLD: ")[-1].split("\n")[0].lower()
    new = prompt.split("NEW: ")[-1].split("\n")[0].lower()
    same_attribute = old == new or ("prefer" in old and "prefer" in new)
    return json.dumps(
        {"old_about": old[:40], "new_about": new[:40], "same_attribute": same_attribute, "same_value": old == new}
    )


_PROFILE = re.compile(r"\bI(?:'m| am) (?:an? )?([a-z][a-z -]{2,40}?)(?:[.,;]|$)", re.I)


def _profile(prompt: str) -> str:
    """Profile facts from the person's lines: "I am a nurse" gives occupation = nurse (the newest wins)."""
    lines = prompt.split("<lines>")[-1].split("</lines>")[0]
    found = [m.group(1).strip() for m in _PROFILE.finditer(lines)]
    return json.dumps({"facts": [{"key": "occupation", "value": found[-1]}] if found else []})


def reply(messages: Sequence[LLMMessage], model: type[BaseModel] | None) -> str:
    """The scripted society's reply to one call."""
    system = str(messages[0].content) if messages else ""
    if model in (Extraction, ResidualExtraction, ResponseExtraction):
        return _extract(system, model)
    if model is not None and model.__name__ == "JudgeReply":
        return _judge(system)
    if model is not None and model.__name__ == "ProfileReply":
        return _profile(system)
    if model is not None and model.__name__.startswith("FactChecks"):
        count = len(re.findall(r"^\d+\. ", system.split("<memories>")[-1], re.M))
        return json.dumps(
            {"checks": [{"n": n, "score": 1, "reason": "the expert said so"} for n in range(1, count + 1)]}
        )
    return _answer(messages)


def society() -> FunctionChatClient:
    """A fresh scripted client."""
    return FunctionChatClient(reply)
