"""Knowledge base speed: ingest throughput, and search latency at N passages beside memory.

Run:  nice -n 10 .venv/bin/python benchmarks/bench_knowledge.py [--quick] [--files F] [--pages P]
      [--chunks N] [--memory-users U] [--queries Q] [--embed-threads T] [--skip-ingest] [--skip-search]

(1) Ingest: F generated Markdown files (default 200) of P pages each (default 3; a page is about 500
    words under one ``##`` heading, sentences from the benchmark's medical sentence generator), added
    one file per ``KnowledgeBase.add`` call on an empty embedded store with the real ONNX MiniLM
    (every passage embedded: nothing is cached). Reported: pages/s and passages/s over the whole run,
    per-file latency (median / p95), and where the time goes (read + parse + chunk, embedding,
    Chroma writes, the rest: the source entry and the audit event). Then the same files again
    (all unchanged: sha256 only, nothing embedded).
(2) Search: a store with N passages (default 10,000; ``--chunks 100000`` for the issue's size) in
    sources of 50 passages, bulk-loaded with SYNTHETIC vectors (real MiniLM vectors of 2,000 generated
    passages, jittered per passage, as ``bench_search.py`` does for memories), plus U users x 90
    personal memories + U x 10 residual ones (default U = 100, i.e. 10,000 memories; 0: none).
    Per query, interleaved, each with its own unique question (so the query embedding is never cached):
      base  BASELINE: a bare Chroma ``collection.query`` of the passages collection for a precomputed
            vector (n_results = 2k, documents + metadatas + distances), as ``KnowledgeBase`` asks;
      vec   ``KnowledgeBase.search_vectors`` for that vector (+ the current-version check, floor, models);
      embed the query embedding alone (ONNX MiniLM);
      kb    ``KnowledgeBase.search(question, k)``: embedding + search;
      both  ``KnowledgeBase.search`` then ``MemoryEngine.search`` for the same question and a random user
            (the engine's embedding is then a cache hit): the retrieval of one knowledge-first answer.
    Median / p95 and the ratio to ``base`` of the same run.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from _common import (
    NOW,
    CallTimer,
    dir_mb,
    machine_info,
    print_table,
    rss_mb,
    say,
    summarize,
    temp_home,
    timed,
    write_results,
)
from _dataset import SentenceMaker, VectorPool, build_dataset, bulk_load

from memory.config import EmbedderConfig, EmbedderKind, load_settings
from memory.embedder import build_embedder
from memory.engine import MemoryEngine
from memory.knowledge import KnowledgeBase
from memory.knowledge_models import KnowledgeChunk, KnowledgeSource, SourceFormat, source_id
from memory.models import MemoryType

K = 5
PAGE_WORDS = 500
PER_SOURCE = 50


def page_text(maker: SentenceMaker, words: int) -> str:
    """Paragraphs of generated domain sentences, about ``words`` words in all."""
    paragraphs: list[str] = []
    total = 0
    while total < words:
        sentences = [maker.sentence(MemoryType.RESIDUAL) for _ in range(int(maker.rng.integers(3, 7)))]
        paragraph = " ".join(sentences)
        paragraphs.append(paragraph)
        total += len(paragraph.split())
    return "\n\n".join(paragraphs)


def write_corpus(folder: Path, files: int, pages: int, seed: int) -> list[Path]:
    """``files`` Markdown guides of ``pages`` pages each."""
    maker = SentenceMaker(seed)
    paths = []
    for i in range(files):
        parts = [f"# Guide {i}"]
        for p in range(pages):
            parts.append(f"## Part {p + 1}: {maker.sentence(MemoryType.RESIDUAL)[:40]}")
            parts.append(page_text(maker, PAGE_WORDS))
        path = folder / f"guide-{i:04d}.md"
        path.write_text("\n\n".join(parts) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def ingest(args: argparse.Namespace) -> dict[str, Any]:
    """(1): add the generated corpus file by file; throughput and where the time goes."""
    with temp_home("knowledge-ingest") as home:
        corpus = home / "corpus"
        corpus.mkdir()
        paths = write_corpus(corpus, args.files, args.pages, seed=11)
        settings = load_settings(env={"MARK_HOME": str(home / "home")})
        embedder = build_embedder(EmbedderConfig(kind=EmbedderKind.ONNX, threads=args.embed_threads, cache_size=0))
        engine = MemoryEngine.open(settings, embedder=embedder)
        try:
            kb = KnowledgeBase.beside(engine.store, engine.audit, settings.knowledge, NOW)
            kb.search("warm up the embedder and the tokenizer")
            timer = CallTimer()
            timer.wrap(kb, "prepare", "read + parse + chunk")
            timer.wrap(kb.embedder, "embed", "embedding")
            timer.wrap(kb.store, "put_chunks", "Chroma writes")
            per_file: list[float] = []
            chunks = 0
            start = time.perf_counter()
            for n, path in enumerate(paths, start=1):
                seconds, results = timed(kb.add, [path], now=NOW)
                per_file.append(seconds)
                chunks += results[0].source.chunks
                if n % 50 == 0:
                    say(f"  added {n} / {len(paths)} files, {chunks:,} passages ({time.perf_counter() - start:.0f} s)")
            total = time.perf_counter() - start
            timer.restore()
            start = time.perf_counter()
            unchanged = [timed(kb.add, [path], now=NOW)[0] for path in paths]
            again = time.perf_counter() - start
            disk = dir_mb(home / "home")
        finally:
            engine.close()
    pages = args.files * args.pages
    parts = {name: round(seconds, 2) for name, seconds in timer.seconds.items()}
    parts["rest (source entry, audit, old-version check)"] = round(total - sum(timer.seconds.values()), 2)
    return {
        "files": args.files,
        "pages": pages,
        "passages": chunks,
        "seconds": round(total, 2),
        "pages_per_s": round(pages / total, 2),
        "passages_per_s": round(chunks / total, 2),
        "per_file": summarize(per_file),
        "parts_s": parts,
        "unchanged_readd_s": round(again, 2),
        "unchanged_per_file": summarize(unchanged),
        "disk_mb": disk,
    }


def passage_pool(kb: KnowledgeBase, maker: SentenceMaker, size: int) -> tuple[list[str], np.ndarray]:
    """``size`` generated passages (about 120 words) and their real MiniLM vectors."""
    texts = [page_text(maker, 110).replace("\n\n", " ") for _ in range(size)]
    return texts, np.asarray(kb.embedder.embed(texts), dtype=np.float32)


def load_passages(kb: KnowledgeBase, total: int, pool: tuple[list[str], np.ndarray], seed: int) -> float:
    """Bulk-load ``total`` passages (jittered pool vectors) in sources of 50; returns seconds."""
    rng = np.random.default_rng(seed)
    texts, vectors = pool
    start = time.perf_counter()
    for first in range(0, total, PER_SOURCE):
        name = f"synthetic-{first // PER_SOURCE:05d}.md"
        sid, version = source_id(name), f"{first:064x}"
        picks = rng.integers(len(texts), size=min(PER_SOURCE, total - first))
        noise = rng.standard_normal((len(picks), vectors.shape[1])).astype(np.float32) * (0.48 / np.sqrt(384))
        jittered = vectors[picks] + noise
        jittered /= np.linalg.norm(jittered, axis=1, keepdims=True)
        chunks = [
            KnowledgeChunk(
                id=f"{sid}-{version[:16]}-{i:06d}",
                source_id=sid,
                source=name,
                path=f"/synthetic/{name}",
                section=f"Part {i // 10 + 1}",
                version=version,
                index=i,
                text=texts[int(p)],
            )
            for i, p in enumerate(picks)
        ]
        kb.store.put_chunks(chunks, jittered)
        entry = KnowledgeSource(
            id=sid,
            name=name,
            path=f"/synthetic/{name}",
            format=SourceFormat.MARKDOWN,
            version=version,
            chunks=len(chunks),
            bytes=0,
            revision=1,
            added_at=NOW,
            updated_at=NOW,
        )
        kb.store.put_source(entry)
        if (first // PER_SOURCE) % 200 == 199:
            say(f"    loaded {first + PER_SOURCE:,} / {total:,} passages ({time.perf_counter() - start:.0f} s)")
    return time.perf_counter() - start


def question(maker: SentenceMaker) -> str:
    """A unique question in the generated domain."""
    return "What does the guideline say? " + maker.unique(MemoryType.USER_QUESTION)


def search(args: argparse.Namespace) -> dict[str, Any]:
    """(2): knowledge search latency at ``--chunks`` passages beside ``--memory-users`` x 100 memories."""
    with temp_home("knowledge-search") as home:
        settings = load_settings(env={"MARK_HOME": str(home)})
        embedder = build_embedder(EmbedderConfig(kind=EmbedderKind.ONNX, threads=args.embed_threads))
        engine = MemoryEngine.open(settings, embedder=embedder)
        try:
            kb = KnowledgeBase.beside(engine.store, engine.audit, settings.knowledge, NOW)
            maker = SentenceMaker(23)
            say(f"  embedding a pool of {args.pool:,} generated passages (real MiniLM)...")
            load_s = load_passages(kb, args.chunks, passage_pool(kb, maker, args.pool), seed=5)
            user_ids: list[str] = []
            memories = 0
            if args.memory_users:
                say(f"  bulk loading {args.memory_users * 100:,} memories...")
                vectors = VectorPool(embedder.inner.embed, maker, args.pool)  # type: ignore[attr-defined]
                records, vecs, user_ids = build_dataset(vectors, args.memory_users, 90, args.memory_users * 10, 7)
                memories = len(records)
                load_s += bulk_load(engine.store, records, vecs)
                engine.store.cache.clear()
            footprint = {"disk_mb": dir_mb(home), **rss_mb()}
            result = measure(engine, kb, maker, user_ids, args)
        finally:
            engine.close()
    result.update({"passages": args.chunks, "memories": memories, "load_s": round(load_s, 1), "footprint": footprint})
    return result


def measure(
    engine: MemoryEngine, kb: KnowledgeBase, maker: SentenceMaker, user_ids: list[str], args: argparse.Namespace
) -> dict[str, Any]:
    """The interleaved per-query loop of (2)."""
    rng = np.random.default_rng(3)
    inner = kb.embedder.inner  # type: ignore[attr-defined]  # the uncached OnnxMiniLM
    collection = kb.store._passages(create=False)
    assert collection is not None
    for _ in range(5):  # the first queries load the HNSW index
        kb.search(question(maker), K)
    rows: dict[str, list[float]] = {name: [] for name in ("base", "vec", "embed", "kb", "both")}
    kept: list[int] = []
    for _ in range(args.queries):
        seconds, vector = timed(inner.embed, [question(maker)])
        rows["embed"].append(seconds)
        probe = np.asarray(vector, dtype=np.float32)
        rows["base"].append(
            timed(
                collection.query,
                query_embeddings=probe,
                n_results=2 * K,
                include=["documents", "metadatas", "distances"],
            )[0]
        )
        seconds, hits = timed(kb.search_vectors, vector, K)
        rows["vec"].append(seconds)
        kept.append(len(hits[0]))
        rows["kb"].append(timed(kb.search, question(maker), K)[0])
        if user_ids:
            text, user = question(maker), str(rng.choice(user_ids))
            start = time.perf_counter()
            kb.search(text, K)
            engine.search(text, user, k=1, now=NOW)
            rows["both"].append(time.perf_counter() - start)
    stats = {name: summarize(samples) for name, samples in rows.items() if samples}
    base = stats["base"]
    for name, s in stats.items():
        if name != "base":
            s["ratio_median_to_base"] = round(s["median_ms"] / base["median_ms"], 2)
            s["ratio_p95_to_base"] = round(s["p95_ms"] / base["p95_ms"], 2)
    stats["hits_above_floor_median"] = float(np.median(kept))
    return stats


def report(results: dict[str, Any]) -> None:
    if "ingest" in results:
        r = results["ingest"]
        say(
            f"\ningest: {r['files']} files, {r['pages']} pages, {r['passages']:,} passages in {r['seconds']} s: "
            f"{r['pages_per_s']} pages/s, {r['passages_per_s']} passages/s"
        )
        print_table(
            ["per file", "median ms", "p95 ms"], [["add (new)", r["per_file"]["median_ms"], r["per_file"]["p95_ms"]]]
        )
        print_table(["part", "seconds"], [[k, v] for k, v in r["parts_s"].items()])
        say(f"re-adding all {r['files']} unchanged files: {r['unchanged_readd_s']} s")
    if "search" in results:
        s = results["search"]
        say(f"\nsearch: {s['passages']:,} passages + {s['memories']:,} memories (loaded in {s['load_s']} s)")
        names = {
            "base": "BASELINE bare Chroma query",
            "vec": "search_vectors (no embedding)",
            "embed": "query embedding (ONNX)",
            "kb": "KnowledgeBase.search",
            "both": "knowledge + memory search",
        }
        rows = []
        for key, label in names.items():
            if key in s:
                st = s[key]
                rows.append(
                    [
                        label,
                        st["median_ms"],
                        st["p95_ms"],
                        st.get("ratio_median_to_base", 1.0),
                        st.get("ratio_p95_to_base", 1.0),
                    ]
                )
        print_table(["", "median ms", "p95 ms", "x base (median)", "x base (p95)"], rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: 20 files, 2,000 passages, 1,000 memories")
    parser.add_argument("--files", type=int, default=200, help="Markdown files to ingest (default 200)")
    parser.add_argument("--pages", type=int, default=3, help="pages per file, about 500 words each (default 3)")
    parser.add_argument("--chunks", type=int, default=10_000, help="passages in the search store (default 10,000)")
    parser.add_argument("--memory-users", type=int, default=100, help="users x 100 memories beside them (default 100)")
    parser.add_argument("--queries", type=int, default=200, help="measured queries (default 200)")
    parser.add_argument("--pool", type=int, default=2_000, help="real-embedded passages behind the vectors")
    parser.add_argument("--embed-threads", type=int, default=1, help="ONNX MiniLM threads (default 1)")
    parser.add_argument("--skip-ingest", action="store_true")
    parser.add_argument("--skip-search", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.files, args.chunks, args.memory_users, args.queries, args.pool = 20, 2_000, 10, 50, 300
    results: dict[str, Any] = {"machine": machine_info(), "args": vars(args)}
    say(f"machine: {results['machine']['cores']} cores, load {results['machine']['loadavg_at_start']}")
    if not args.skip_ingest:
        say(f"(1) ingest: {args.files} files x {args.pages} pages")
        results["ingest"] = ingest(args)
    if not args.skip_search:
        say(f"(2) search: {args.chunks:,} passages, {args.memory_users * 100:,} memories, {args.queries} queries")
        results["search"] = search(args)
    report(results)
    path = write_results("knowledge_quick" if args.quick else f"knowledge_{args.chunks}", results)
    say(f"\nresults: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
