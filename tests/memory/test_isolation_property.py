"""Property: for random users and texts, nobody ever sees another user's personal memories."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.engine import MemoryEngine
from memory.models import MemoryType
from tests.conftest import NOW

WORDS = ["dose", "tropicamide", "eye", "drops", "allergy", "penicillin", "prefers", "short", "answers", "mg"]
_run = itertools.count()


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    writes=st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=3),
            st.sampled_from([MemoryType.USER_QUESTION, MemoryType.LLM_RESPONSE, MemoryType.RESIDUAL]),
            st.lists(st.sampled_from(WORDS), min_size=2, max_size=6),
        ),
        min_size=1,
        max_size=8,
    ),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
)
def test_personal_memories_never_cross_users(engine: MemoryEngine, writes, query) -> None:  # type: ignore[no-untyped-def]
    prefix = f"run{next(_run)}-"
    users = [prefix + str(i) for i in range(4)]
    for user_index, memory_type, words in writes:
        engine.add(" ".join(words), memory_type, users[user_index], now=NOW)
    for user in users:
        hits = engine.search(" ".join(query), user, now=NOW, k=20, risk="low").all_hits()
        assert all(h.record.shared or h.record.user_id == user for h in hits)
        assert all(r.shared or r.user_id == user for r in engine.list(user))
