"""Erase what an embedded Chroma store's SQLite file keeps of records after Chroma deleted them.

Chroma 1.5's embedded store is one SQLite file, ``chroma.sqlite3``. Every write is first appended to
its log table ``embeddings_queue`` (an upsert's row holds the document as ``chroma:document`` in its
``metadata`` column, next to the vector), then applied to the segments: ``embeddings`` and
``embedding_metadata`` (the document is the ``chroma:document`` value), the trigram FTS5 index
``embedding_fulltext_search`` (with its ``_content``, ``_data`` and ``_idx`` tables) and the HNSW
folders (vectors only). ``collection.delete`` removes a record from the segments and appends a text-free
DELETE row to the log, but three copies of the text outlive it:

1. the log rows of the record's writes, kept until Chroma prunes the log (for a collection with fewer
   writes than its HNSW sync threshold, never);
2. the deleted document's trigrams in the FTS5 index, kept until its segments merge;
3. the freed pages themselves: Chroma's SQLite does not overwrite deleted content.

:func:`scrub_forgotten` removes all three. It is mark's only write to a Chroma table, and only ever
for an embedded store whose folder this process holds under its lock (a Chroma server's files are not
mark's to touch).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence
from pathlib import Path

log = logging.getLogger(__name__)
_CHUNK = 500  # ids per DELETE (well under SQLite's variable limit)
# a log row's topic ends with its collection's id; a row is applied when it is at or before the point
# Chroma recorded in max_seq_id for every tracked segment of that collection (none recorded: not applied)
_DELETE_APPLIED = """
DELETE FROM embeddings_queue WHERE id IN ({marks}) AND seq_id < ? AND seq_id <= (
    SELECT COALESCE(MIN(m.seq_id), 0) FROM segments s JOIN max_seq_id m ON m.segment_id = s.id
    WHERE s.collection = substr(embeddings_queue.topic, -36)
)
"""


def scrub_forgotten(database: Path, ids: Sequence[str]) -> int:
    """Delete the forgotten records' applied log rows, compact the FTS index, rewrite free pages; returns rows deleted.

    ``ids`` are records Chroma has already deleted, in any collection (a dropped collection's log rows
    are deleted by Chroma itself). Record ids are unique across mark's collections (random or hashed).

    Why deleting log rows is safe: Chroma applies a write to every segment before the call that made
    it returns, and records how far it applied each collection's log in ``max_seq_id``; on open it
    replays only rows past that point (the HNSW index replays from its own, possibly earlier,
    point). Only rows at or before the collection's applied point are deleted, so nothing is lost to
    the metadata segment; a replaying HNSW index simply never sees the forgotten ids, the state the
    delete left anyway. The log's last row is never deleted, because Chroma numbers the next write
    after it (the DELETE row of a forget is usually that row, and it holds no text). FTS5's
    ``optimize`` rewrites the index without the deleted entries, and ``VACUUM`` (Chroma proposes
    ``chroma vacuum`` for the same purpose) rewrites the file so no free page keeps old content; its
    temporary copy is kept in memory, not in a temporary file.
    """
    db = sqlite3.connect(str(database), timeout=30.0, isolation_level=None)
    try:
        db.execute("PRAGMA secure_delete=ON")
        db.execute("PRAGMA temp_store=MEMORY")
        deleted = 0
        db.execute("BEGIN IMMEDIATE")
        try:
            last = db.execute("SELECT MAX(seq_id) FROM embeddings_queue").fetchone()[0] or 0
            for start in range(0, len(ids), _CHUNK):
                part = list(ids[start : start + _CHUNK])
                cursor = db.execute(_DELETE_APPLIED.format(marks=",".join("?" * len(part))), [*part, last])
                deleted += cursor.rowcount
            if _has_table(db, "embedding_fulltext_search"):
                db.execute("INSERT INTO embedding_fulltext_search(embedding_fulltext_search) VALUES ('optimize')")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("VACUUM")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # a no-op in Chroma's rollback-journal mode
    finally:
        db.close()
    log.debug("scrubbed %s: %d log row(s) of forgotten records deleted, file vacuumed", database, deleted)
    return deleted


def _has_table(db: sqlite3.Connection, name: str) -> bool:
    return db.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None
