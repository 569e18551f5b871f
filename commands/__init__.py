"""Typer command groups composed by ``cli.py`` (kept apart so no CLI module grows large)."""
