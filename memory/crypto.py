"""Optional encryption at rest of memory text and audit details (Fernet, key from ``MARK_ENCRYPTION_KEY``).

When a key is set, the two places that keep memory text in mark's own words seal it before writing:
the memory store's Chroma documents (:mod:`memory.store.memories`) and the audit log's event details
(:mod:`memory.audit`). A sealed value is ``mark-fernet:`` followed by a Fernet token (AES-128-CBC and
HMAC-SHA256, with the write time inside it). Vectors and metadata (ids, types, scores, times) are not
sealed, so searching still works; history events and profiles (``history.sqlite3``) are not sealed.

The key is a urlsafe base64 encoding of 32 random bytes. Make one with::

    python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"

It is not an API key of ``mark keys`` (those name callers of the server). Keep it outside the store:
whoever holds the key and the files can read the text; losing the key loses the text.

Reading is lenient in one direction only: a value written before the key was set is plain text and
is read as it is (turning encryption on seals what is written from then on). A sealed value read with
no key, or with another key, is an :class:`EncryptionKeyError`, one line saying which.
"""

from __future__ import annotations

import binascii
import logging

from cryptography.fernet import Fernet, InvalidToken

from mark.errors import InputError, MarkError

log = logging.getLogger(__name__)
PREFIX = "mark-fernet:"
KEY_HINT = 'make one with: python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"'


class EncryptionKeyError(MarkError):
    """The store holds sealed text that the configured key (or its absence) cannot open."""


class KeyFormatError(InputError):
    """``MARK_ENCRYPTION_KEY`` is not a Fernet key."""


class TextCipher:
    """Seals and opens text with one Fernet key; without a key, passes plain text through."""

    def __init__(self, key: str | None = None) -> None:
        """Use ``key`` (urlsafe base64 of 32 bytes); None or "" leaves text in the clear."""
        self._fernet: Fernet | None = None
        if key:
            try:
                self._fernet = Fernet(key.strip().encode("ascii"))
            except (ValueError, binascii.Error, UnicodeEncodeError) as exc:
                raise KeyFormatError(
                    f"MARK_ENCRYPTION_KEY is not a Fernet key (urlsafe base64 of 32 bytes); {KEY_HINT}"
                ) from exc

    @property
    def enabled(self) -> bool:
        """Whether text is sealed when written."""
        return self._fernet is not None

    def seal(self, text: str) -> str:
        """``text`` as it is to be stored: sealed when a key is set, else unchanged."""
        if self._fernet is None:
            return text
        return PREFIX + self._fernet.encrypt(text.encode("utf-8")).decode("ascii")

    def unseal(self, stored: str, where: str) -> str:
        """The text of a stored value (plain text is returned as it is); ``where`` names the file for errors."""
        if not stored.startswith(PREFIX):
            return stored
        if self._fernet is None:
            raise EncryptionKeyError(f"{where} holds encrypted text: set MARK_ENCRYPTION_KEY to the key that wrote it")
        try:
            return self._fernet.decrypt(stored[len(PREFIX) :].encode("ascii")).decode("utf-8")
        except (InvalidToken, UnicodeError) as exc:
            raise EncryptionKeyError(
                f"{where} holds text encrypted with another key: MARK_ENCRYPTION_KEY is not the key that wrote it"
            ) from exc
