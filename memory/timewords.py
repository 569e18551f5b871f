"""What a question says about time: a window it points at ("last month") or a wish for the newest value. Pure.

``window("what did I tell you last month about my knee", now)`` is the calendar month before ``now``;
"yesterday", "last week", "N days/weeks/months/years ago", "this week/month/year", "in May" (the most
recent May before ``now``) and "in 2023" are read the same way. ``wants_latest`` spots questions about
a current value ("how many ... now", "currently", "the latest", "since I started", "still"), for which
the newest of several conflicting statements is the answer. Time is an argument: nothing reads a clock.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict

_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "couple of": 2, "few": 3}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}
_AGO = re.compile(
    r"\b(\d+|a|an|one|two|three|four|five|six|couple of|few)\s+(day|week|month|year)s?\s+ago\b", re.IGNORECASE
)
_LAST = re.compile(r"\b(last|past|previous|this)\s+(day|week|month|year|weekend)\b", re.IGNORECASE)
_IN_MONTH = re.compile(r"\b(?:in|during|on|back in|since)\s+(" + "|".join(_MONTHS) + r")\b", re.IGNORECASE)
_IN_YEAR = re.compile(r"\b(?:in|during|since)\s+((?:19|20)\d\d)\b", re.IGNORECASE)
_LATEST = re.compile(
    r"\b(?:now|currently|current|latest|most recent|recently|nowadays|these days|still|anymore|so far"
    r"|since i|at the moment|today|new|newest|updated?)\b",
    re.IGNORECASE,
)


class TimeWindow(BaseModel):
    """A span of time a question points at, and the words that said so."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    start: datetime
    end: datetime
    cue: str

    def holds(self, at: datetime | None) -> bool:
        """Whether ``at`` falls inside the window (an undated event never does)."""
        return at is not None and self.start <= at < self.end


def _day(now: datetime) -> datetime:
    return now.replace(hour=0, minute=0, second=0, microsecond=0)


def _month_start(year: int, month: int, like: datetime) -> datetime:
    return like.replace(year=year, month=month, day=1, hour=0, minute=0, second=0, microsecond=0)


def _next_month(start: datetime) -> datetime:
    return start.replace(year=start.year + 1, month=1) if start.month == 12 else start.replace(month=start.month + 1)


def _ago(match: re.Match[str], now: datetime) -> TimeWindow:
    count = match.group(1).lower()
    n = int(count) if count.isdigit() else _NUMBERS[count]
    days = n * _UNIT_DAYS[match.group(2).lower()]
    centre = now - timedelta(days=days)
    slack = timedelta(days=max(1.0, days * 0.25))  # "three weeks ago" is about, not exactly, 21 days
    return TimeWindow(start=centre - slack, end=centre + slack, cue=match.group(0))


def _last(match: re.Match[str], now: datetime) -> TimeWindow:
    which, unit = match.group(1).lower(), match.group(2).lower()
    today = _day(now)
    if unit == "day":
        return TimeWindow(start=today - timedelta(days=1), end=now, cue=match.group(0))
    if unit in {"week", "weekend"}:
        monday = today - timedelta(days=today.weekday())
        if which == "this":
            return TimeWindow(start=monday, end=now, cue=match.group(0))
        return TimeWindow(start=monday - timedelta(days=7), end=monday, cue=match.group(0))
    if unit == "month":
        first = _month_start(now.year, now.month, now)
        if which == "this":
            return TimeWindow(start=first, end=now, cue=match.group(0))
        before = _month_start(now.year - 1, 12, now) if now.month == 1 else first.replace(month=now.month - 1)
        return TimeWindow(start=before, end=first, cue=match.group(0))
    first = _month_start(now.year, 1, now)
    if which == "this":
        return TimeWindow(start=first, end=now, cue=match.group(0))
    return TimeWindow(start=first.replace(year=now.year - 1), end=first, cue=match.group(0))


def window(question: str, now: datetime) -> TimeWindow | None:
    """The span of time ``question`` points at, relative to ``now`` (None when it names none)."""
    text = question.lower()
    if "yesterday" in text:
        start = _day(now) - timedelta(days=1)
        return TimeWindow(start=start, end=start + timedelta(days=1), cue="yesterday")
    for pattern, read in ((_AGO, _ago), (_LAST, _last)):
        found = pattern.search(text)
        if found:
            return read(found, now)
    month = _IN_MONTH.search(text)
    if month:
        number = _MONTHS[month.group(1).lower()]
        year = now.year if number <= now.month else now.year - 1  # the most recent such month
        start = _month_start(year, number, now)
        return TimeWindow(start=start, end=_next_month(start), cue=month.group(0))
    year_found = _IN_YEAR.search(text)
    if year_found:
        start = _month_start(int(year_found.group(1)), 1, now)
        return TimeWindow(start=start, end=start.replace(year=start.year + 1), cue=year_found.group(0))
    return None


def wants_latest(question: str) -> bool:
    """Whether ``question`` asks for a current value (the newest of conflicting statements wins)."""
    return bool(_LATEST.search(question))
