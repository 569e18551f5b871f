"""``mark knowledge ...``: add documents to the shared knowledge base, list, search and remove them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from commands.common import JsonOpt, open_engine, out, print_json

if TYPE_CHECKING:
    from memory.knowledge import KnowledgeBase

knowledge_app = typer.Typer()  # the commands only: cli.py describes the group and imports this module when it is used


@contextmanager
def open_knowledge() -> Iterator[KnowledgeBase]:
    """The knowledge base beside the configured memory store (one lock, one embedder, one audit log)."""
    from memory.config import load_settings
    from memory.engine import utcnow
    from memory.knowledge import KnowledgeBase

    settings = load_settings()
    with open_engine(settings) as engine:
        yield KnowledgeBase.beside(engine.store, engine.audit, settings.knowledge, utcnow())


@knowledge_app.command("add")
def knowledge_add(
    paths: Annotated[list[Path], typer.Argument(help="Markdown, text, HTML or PDF files.")],
    source: Annotated[str | None, typer.Option(help="Source name (one file only; default: the file's name).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Add files as knowledge sources; a changed file replaces its passages, an unchanged one is left as is."""
    from memory.engine import utcnow

    with open_knowledge() as knowledge:
        results = knowledge.add(paths, source, now=utcnow())
    if as_json:
        print_json([r.model_dump(mode="json") for r in results])
        return
    for r in results:
        pages = f", {r.source.pages} page(s)" if r.source.pages is not None else ""
        out.print(f"{r.action.value}: {r.source.name} v{r.source.version[:12]} ({r.source.chunks} passage(s){pages})")


@knowledge_app.command("list")
def knowledge_list(as_json: JsonOpt = False) -> None:
    """The knowledge sources with their version, passage count and when they were added."""
    from rich.table import Table

    with open_knowledge() as knowledge:
        sources = knowledge.list()
    if as_json:
        print_json([s.model_dump(mode="json") for s in sources])
        return
    table = Table("source", "format", "version", "passages", "pages", "added")
    for s in sources:
        pages = "" if s.pages is None else str(s.pages)
        table.add_row(s.name, s.format.value, s.version[:12], str(s.chunks), pages, f"{s.added_at:%Y-%m-%d %H:%M}")
    out.print(table)
    out.print(f"{len(sources)} source(s), {sum(s.chunks for s in sources)} passage(s)")


@knowledge_app.command("search")
def knowledge_search(
    query: str,
    k: Annotated[int | None, typer.Option(min=1, max=100, help="Passages to return (default 5).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """The passages most similar to QUERY above the relevance floor (MARK_KNOWLEDGE_MIN_SIMILARITY)."""
    from rich.table import Table

    with open_knowledge() as knowledge:
        hits = knowledge.search(query, k)
    if as_json:
        print_json([{**h.chunk.model_dump(mode="json"), "similarity": h.similarity} for h in hits])
        return
    table = Table("similarity", "source", "section", "page", "text", title=f"knowledge for {query!r}")
    for h in hits:
        page = "" if h.chunk.page is None else str(h.chunk.page)
        table.add_row(f"{h.similarity:.3f}", h.chunk.source, h.chunk.section, page, h.chunk.text)
    out.print(table)
    out.print(f"{len(hits)} passage(s)")


@knowledge_app.command("remove")
def knowledge_remove(source: str, as_json: JsonOpt = False) -> None:
    """Remove a source and all its passages (audited)."""
    from memory.engine import utcnow

    with open_knowledge() as knowledge:
        removed = knowledge.remove(source, now=utcnow())
    if as_json:
        print_json(removed.model_dump(mode="json"))
    else:
        out.print(f"removed: {removed.name} v{removed.version[:12]} ({removed.chunks} passage(s))")
