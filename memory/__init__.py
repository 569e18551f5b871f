"""The memory engine: records, store, scoring, conflicts, veracity, audit (no AutoGen here)."""
