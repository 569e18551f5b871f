"""What a question says about time (memory.timewords), relative to a fixed "now"."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory.timewords import wants_latest, window

NOW = datetime(2024, 3, 14, 15, 0, tzinfo=UTC)  # a Thursday


def _span(question: str) -> tuple[str, str]:
    found = window(question, NOW)
    assert found is not None, question
    return f"{found.start:%Y-%m-%d}", f"{found.end:%Y-%m-%d %H:%M}"


@pytest.mark.parametrize(
    ("question", "span"),
    [
        ("what did I tell you last month about my knee", ("2024-02-01", "2024-03-01 00:00")),
        ("what did I say yesterday", ("2024-03-13", "2024-03-14 00:00")),
        ("anything from last week?", ("2024-03-04", "2024-03-11 00:00")),  # the Monday-to-Monday before
        ("what did I plan this week", ("2024-03-11", "2024-03-14 15:00")),  # Monday until now
        ("what did I buy last year", ("2023-01-01", "2024-01-01 00:00")),
        ("the trip in May", ("2023-05-01", "2023-06-01 00:00")),  # the most recent May before now
        ("the trip in March", ("2024-03-01", "2024-04-01 00:00")),
        ("what I read in 2022", ("2022-01-01", "2023-01-01 00:00")),
        # "three weeks ago" is 21 days back (2024-02-22 15:00), give or take a quarter: 5.25 days = 5 d 6 h
        ("the book I mentioned three weeks ago", ("2024-02-17", "2024-02-27 21:00")),
    ],
)
def test_windows(question: str, span: tuple[str, str]) -> None:
    assert _span(question) == span


def test_no_window_without_a_time_word() -> None:
    assert window("how many postcards have I collected", NOW) is None
    assert window("I may go to Maynooth", NOW) is None  # "may" alone is not a month


def test_a_window_never_holds_an_undated_event() -> None:
    found = window("last month", NOW)
    assert found is not None and not found.holds(None)
    assert found.holds(datetime(2024, 2, 29, 23, 59, tzinfo=UTC)) and not found.holds(NOW)


def test_questions_about_a_current_value() -> None:
    assert wants_latest("How many new postcards have I added since I started collecting again?")
    assert wants_latest("What is my current job title?")
    assert not wants_latest("What breed was the dog I told you about?")
