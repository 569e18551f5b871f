"""The review queue and the human-readable (not ``--json``) output of the memory commands, through ``cli.main``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import cli


def text(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """What ``mark ARGS`` printed; the command must succeed."""
    code = cli.main(list(args))
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return captured.out


def words(output: str) -> str:
    """Output with rich's wrapping at the console width undone."""
    return " ".join(output.split())


def pending_residual(capsys: pytest.CaptureFixture[str], claim: str) -> str:
    """Add a user's domain claim (it waits for review) and return its id."""
    args = ["memory", "add", "--user", "ann", "--type", "residual", "--source", "user", "--json", claim]
    added = json.loads(text(capsys, *args))
    assert added["record"]["status"] == "pending_review"
    return str(added["record"]["id"])


def test_review_queue_list_show_edit_approve_reject(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edited = pending_residual(capsys, "Tropicamide drops are 5 percent.")
    approved = pending_residual(capsys, "Atropine is a long acting cycloplegic.")
    rejected = pending_residual(capsys, "Phenylephrine is a beta blocker.")

    listing = text(capsys, "review", "list")
    assert all(memory_id in listing for memory_id in (edited, approved, rejected))
    assert listing.splitlines()[-1] == "3 pending"

    shown = text(capsys, "review", "show", edited)
    assert shown.splitlines()[0] == "Tropicamide drops are 5 percent."
    assert f"id {edited} type residual user ann status pending_review v1" in words(shown)

    fixed = "Tropicamide drops are 0.5 to 1 percent."
    assert words(text(capsys, "review", "edit", edited, fixed, "--reviewer", "rita")) == (
        f"edited and approved {edited}: {fixed}"
    )
    assert words(text(capsys, "review", "approve", approved)) == f"approved {approved}"
    assert (
        words(text(capsys, "review", "reject", rejected, "--reason", "it is an alpha agonist"))
        == f"rejected {rejected}"
    )
    assert text(capsys, "review", "list") == "0 pending\n"

    history = text(capsys, "memory", "show", edited)
    assert history.splitlines()[0] == fixed
    assert "status active v2" in words(history) and "rita" in history


def test_memory_search_and_list_print_tables(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["memory", "add", "--user", "bob", "--json"]
    first = json.loads(text(capsys, *args, "Tropicamide dilates the pupil for four to six hours"))["record"]["id"]
    second = json.loads(text(capsys, *args, "I prefer short answers"))["record"]["id"]

    found = text(capsys, "memory", "search", "tropicamide dilates the pupil", "--user", "bob")
    assert "memories for 'bob'" in found and first[:12] in found
    assert second[:12] not in found  # no word in common with the query: below the relevance floor

    listed = text(capsys, "memory", "list", "--user", "bob")
    assert first[:12] in listed and second[:12] in listed
