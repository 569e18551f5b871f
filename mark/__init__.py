"""mark's public API in one place: ``from mark import MemoryEngine, MarkMemory, load_settings``.

The design card's folders (``agents``, ``memory``, ``prompts``, ``scenarios``) hold the code; this
facade names what a user may rely on. Names resolve on first use (PEP 562), so ``import mark`` is
cheap and this package imports none of the others when it is loaded: it sits below them in the
import layers and also holds the error root (:mod:`mark.errors`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from mark.errors import InputError, MarkError, NotFoundError, UnavailableError

if TYPE_CHECKING:  # for type checkers and IDEs only; excluded from the import-layer contract
    from agents.building import BuildState, ReviewPolicy, Turn, load_transcript
    from agents.chatbot import MarkMemory, build_chatbot
    from agents.providers import build_client, replay_client
    from agents.team import build_memories
    from memory.config import Settings, load_settings
    from memory.engine import AddResult, MemoryEngine, WriteAction
    from memory.models import MemoryRecord, MemoryType, Source, Status
    from memory.search import SearchHit, SearchResult
    from scenarios.runner import run_lifecycle
    from scenarios.schema import Scenario, load_scenario

# public name -> the module that defines it
_WHERE = {
    "BuildState": "agents.building",
    "ReviewPolicy": "agents.building",
    "Turn": "agents.building",
    "load_transcript": "agents.building",
    "MarkMemory": "agents.chatbot",
    "build_chatbot": "agents.chatbot",
    "build_memories": "agents.team",
    "build_client": "agents.providers",
    "replay_client": "agents.providers",
    "Settings": "memory.config",
    "load_settings": "memory.config",
    "AddResult": "memory.engine",
    "MemoryEngine": "memory.engine",
    "WriteAction": "memory.engine",
    "MemoryRecord": "memory.models",
    "MemoryType": "memory.models",
    "Source": "memory.models",
    "Status": "memory.models",
    "SearchHit": "memory.search",
    "SearchResult": "memory.search",
    "run_lifecycle": "scenarios.runner",
    "Scenario": "scenarios.schema",
    "load_scenario": "scenarios.schema",
}

__all__ = [
    "AddResult",
    "BuildState",
    "InputError",
    "MarkError",
    "MarkMemory",
    "MemoryEngine",
    "MemoryRecord",
    "MemoryType",
    "NotFoundError",
    "ReviewPolicy",
    "Scenario",
    "SearchHit",
    "SearchResult",
    "Settings",
    "Source",
    "Status",
    "Turn",
    "UnavailableError",
    "WriteAction",
    "build_chatbot",
    "build_client",
    "build_memories",
    "load_scenario",
    "load_settings",
    "load_transcript",
    "replay_client",
    "run_lifecycle",
]


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use."""
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'mark' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names."""
    return __all__
