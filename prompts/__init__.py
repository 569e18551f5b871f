"""Prompt files, one per agent role, rendered strictly: missing or unused variables are errors."""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources

from mark.errors import InputError

_VARIABLE = re.compile(r"\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}")


class PromptError(InputError):
    """A prompt file is missing, or the variables given do not match its placeholders."""


@lru_cache(maxsize=64)
def load(name: str) -> str:
    """The raw text of ``prompts/<name>.md``."""
    resource = resources.files(__name__) / f"{name}.md"
    if not resource.is_file():
        raise PromptError(f"no prompt file prompts/{name}.md")
    return resource.read_text(encoding="utf-8")


def placeholders(name: str) -> set[str]:
    """The ``{{variable}}`` names a prompt expects."""
    return set(_VARIABLE.findall(load(name)))


def render(name: str, **variables: object) -> str:
    """Fill a prompt's ``{{variable}}`` placeholders; every placeholder and no other must be given."""
    expected = placeholders(name)
    missing, extra = expected - variables.keys(), variables.keys() - expected
    if missing or extra:
        raise PromptError(f"prompt {name}: missing {sorted(missing)}, unexpected {sorted(extra)}")
    return _VARIABLE.sub(lambda m: str(variables[m.group(1)]), load(name))
