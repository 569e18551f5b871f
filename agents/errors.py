"""Errors of the model clients (kept apart so every client module can raise them)."""

from __future__ import annotations

from autogen_core.models import CreateResult

from mark.errors import UnavailableError


class ProviderError(UnavailableError):
    """The model endpoint cannot be used right now; the message is one line saying why."""


class TruncatedOutputError(ProviderError):
    """A JSON reply stopped at the token limit; ``result`` holds the partial completion."""

    def __init__(self, message: str, result: CreateResult) -> None:
        """Keep the partial ``result`` next to the message."""
        super().__init__(message)
        self.result = result


def truncated_message(limit: object) -> str:
    """The one-line message of a cut-off JSON reply."""
    return f"the model's JSON reply was cut off at max_tokens={limit}: raise MARK_MAX_TOKENS or shorten the prompt"
