"""How a memory record is laid out in Chroma: partitions, the search key, and flat metadata.

Chroma stores a document, an embedding and one flat metadata dict per row. These functions are the
only place that layout is written or read; they import nothing from Chroma.
"""

from __future__ import annotations

import hashlib
from typing import Any

from memory.models import SEARCHABLE, SHARED_USER, MemoryRecord, MemoryType, Provenance

_PREFIXED = "meta_"  # user metadata keys, kept apart from the record's own fields


def partition_for(record_type: MemoryType, user_id: str) -> str:
    """Partition key of a memory: the shared domain partition or the owner's."""
    return SHARED_USER if record_type is MemoryType.RESIDUAL else user_id


def search_key(partition: str, memory_type: MemoryType, searchable: bool = True) -> str:
    """One metadata value naming a partition's searchable (or not) memories of one type.

    Chroma keeps all metadata in one SQLite index, and a ``where`` costs time in proportion to the
    rows it matches in the whole database: ``status in (...)`` matches almost everything and is
    slow, one equality on this key matches only what the query needs and is as cheap as no filter.
    """
    digest = hashlib.sha256(partition.encode()).hexdigest()[:16]
    return f"{digest}|{memory_type.value}|{int(searchable)}"


def to_metadata(record: MemoryRecord) -> dict[str, str | int | float | bool]:
    """Flatten a record into Chroma metadata (user metadata keys are prefixed ``meta_``)."""
    data = record.model_dump(mode="json", exclude={"text", "metadata", "provenance", "id"})
    flat: dict[str, str | int | float | bool] = {k: v for k, v in data.items() if v is not None}
    flat["skey"] = search_key(partition_for(record.type, record.user_id), record.type, record.status in SEARCHABLE)
    flat["created_ts"] = record.created_at.timestamp()
    flat["provenance_json"] = record.provenance.model_dump_json()
    for key, value in record.metadata.items():
        flat[_PREFIXED + key] = value
    return flat


def from_metadata(memory_id: str, text: str, meta: dict[str, Any]) -> MemoryRecord:
    """Rebuild a record from Chroma metadata."""
    fields = {
        k: v
        for k, v in meta.items()
        if not k.startswith(_PREFIXED) and k not in {"created_ts", "provenance_json", "skey"}
    }
    fields.setdefault("superseded_by", None)
    return MemoryRecord(
        id=memory_id,
        text=text,
        provenance=Provenance.model_validate_json(str(meta.get("provenance_json", "{}"))),
        metadata={k[len(_PREFIXED) :]: str(v) for k, v in meta.items() if k.startswith(_PREFIXED)},
        **fields,
    )


def metadata_where(filters: dict[str, str]) -> dict[str, Any] | None:
    """A Chroma ``where`` clause for governance filters (agent, department, any metadata key)."""
    clauses: list[dict[str, Any]] = []
    for key, value in filters.items():
        column = key if key in MemoryRecord.model_fields else _PREFIXED + key
        clauses.append({column: value})
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}
