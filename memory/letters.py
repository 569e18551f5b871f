"""Option letters in a memory, spelt out (issue 11: a paraphrase of the question may re-letter the options).

Pure and deterministic.
"""

from __future__ import annotations

import functools
import re


def unletter(text: str, options: dict[str, str]) -> str:
    """Drop option letters next to their option's text, and spell out a bare letter with its text.

    A memory must carry the corrected content: a paraphrase of the question may re-letter the options.
    """
    if not options:
        return text
    for letter, option in options.items():
        escaped = re.escape(option)
        text = re.sub(rf"(?<![A-Za-z0-9°º])\(?{letter}\)\s*(?={escaped})", "", text, flags=re.IGNORECASE)
        text = re.sub(rf"(?<![A-Za-z0-9°º])\(?{letter}\)(?!\s*[A-Za-z0-9])", option, text, flags=re.IGNORECASE)
        # "the answer is A" spelt out, but not "the answer is A child with ..." (the option's own first word)
        text = re.sub(
            rf"\b(answer|option|choice)(\s+is|:)?\s+(?!{escaped})\(?{letter}\)?(?![A-Za-z0-9'-])",
            functools.partial(_spelt, option),
            text,
        )
    return " ".join(text.split())


def _spelt(option: str, found: re.Match[str]) -> str:
    """The matched "answer is" (or "option:") followed by the option's text in place of its letter."""
    return f"{found.group(1)}{found.group(2) or ''} {option}"
