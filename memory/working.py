"""Working memory (MemoryART A1): a session's last N turns, first in first out. Pure.

The turns a chat is holding in mind; MemoryART keeps each as (query, response, time). Every turn is
also written to the user's episodic history as it happens (:mod:`memory.episodic`), so a turn that
leaves working memory is never lost: :meth:`WorkingMemory.push` returns what it evicted, and the chat
builds memories from it (:mod:`agents.interactive`).
"""

from __future__ import annotations

from collections import deque
from datetime import datetime

from pydantic import BaseModel, ConfigDict


class WorkingTurn(BaseModel):
    """One turn held in working memory."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    role: str
    text: str
    at: datetime
    index: int  # position in its session


class WorkingMemory:
    """A bounded FIFO of a session's most recent turns."""

    def __init__(self, capacity: int) -> None:
        """Hold at most ``capacity`` turns."""
        if capacity < 1:
            raise ValueError("working memory holds at least one turn")
        self.capacity = capacity
        self._turns: deque[WorkingTurn] = deque()

    def push(self, turn: WorkingTurn) -> list[WorkingTurn]:
        """Add a turn; returns the turns it pushed out (oldest first)."""
        self._turns.append(turn)
        evicted = []
        while len(self._turns) > self.capacity:
            evicted.append(self._turns.popleft())
        return evicted

    def turns(self) -> list[WorkingTurn]:
        """The turns held, oldest first."""
        return list(self._turns)

    def __len__(self) -> int:
        """How many turns are held."""
        return len(self._turns)
