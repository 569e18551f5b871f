"""Keeping a user's profile current from what they say (semantic memory, MemoryART A3; seed 001 S2).

One structured call reads the user's own lines (never the assistant's) and proposes key-value facts.
Each proposal passes the same truth rule as every memory: its value must be words the user said (the
truth gate, :func:`memory.grounding.check`, reading the value as a user-question memory against the
user's turns only; the key is a label and is not checked). A refused one is audited as a ``reject``
event with its reason and reported. A kept fact is set through :class:`~memory.profiles.Profiles`: a
newer value for a key supersedes the older one (audited), and the same value changes nothing.
"""

from __future__ import annotations

import logging
from datetime import datetime

from autogen_core.models import ChatCompletionClient
from pydantic import BaseModel, ConfigDict, Field

from agents.checks import quote_line
from agents.structured import UsageLog, call_structured, system, user
from mark.errors import InputError
from memory import grounding
from memory.engine import MemoryEngine
from memory.grounding import Evidence
from memory.models import MemoryType
from memory.profiles import ProfileChange, normal_key, owner_of
from prompts import render

log = logging.getLogger(__name__)
MAX_LINES = 40


class ProposedFact(BaseModel):
    """One profile fact the model proposes."""

    model_config = ConfigDict(extra="ignore")

    key: str = Field(max_length=60)
    value: str = Field(max_length=200)


class ProfileReply(BaseModel):
    """The extractor's reply: up to 8 facts (none is a valid answer)."""

    model_config = ConfigDict(extra="ignore")

    facts: list[ProposedFact] = Field(max_length=8)


class ProfileUpdate(BaseModel):
    """What one update set and refused."""

    model_config = ConfigDict(extra="forbid")

    changes: list[ProfileChange] = Field(default_factory=list)
    refused: list[str] = Field(default_factory=list)  # "key = value: reason"
    error: str | None = None


async def update_profile(
    engine: MemoryEngine,
    client: ChatCompletionClient,
    user_id: str,
    said: list[str],
    *,
    now: datetime,
    domain: str = "general",
    provenance: str = "",
    usage: UsageLog | None = None,
) -> ProfileUpdate:
    """Propose facts from ``said`` (the user's own lines), gate them, and set the kept ones."""
    lines = [quote_line(s) for s in said if s.strip()][-MAX_LINES:]
    if not lines:
        return ProfileUpdate()
    prompt = render("extract_profile", domain=domain, lines="\n".join(f"- {line}" for line in lines))
    outcome = await call_structured(
        client, "profile_extractor", [system(prompt), user("Give the facts as JSON.")], ProfileReply, usage
    )
    if outcome.value is None:
        return ProfileUpdate(error=f"profile extractor: {outcome.error}")
    evidence = Evidence(user_said=lines)
    owner = owner_of(user_id=user_id)
    update = ProfileUpdate()
    for fact in outcome.value.facts:
        try:
            key = normal_key(fact.key)
        except InputError as exc:
            update.refused.append(f"{fact.key} = {fact.value}: {exc}")
            continue
        verdict = grounding.check(
            fact.value, MemoryType.USER_QUESTION, evidence
        )  # the key is a label, the value a claim
        if not verdict.ok:
            reason = verdict.describe()
            engine.reject_candidate(
                f"{key} = {fact.value}", MemoryType.USER_QUESTION, user_id, reason, detail={"profile": key}, now=now
            )
            update.refused.append(f"{key} = {fact.value}: {reason}")
            continue
        change = engine.episodes.profiles.set(
            owner, key, fact.value, now=now, actor="profile_extractor", provenance=provenance or "conversation"
        )
        if not change.unchanged:
            update.changes.append(change)
    log.info("profile of %s: %d set, %d refused", user_id, len(update.changes), len(update.refused))
    return update
