"""``mark knowledge`` through the real entry point: add, list, search, remove, and every kind of bad file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.knowledge_files import write_pdf
from tests.test_cli_memory import run
from tests.test_cli_startup import MODEL_STACK, loaded_after, top_level

GUIDE = (
    "# Tropicamide\n\nTropicamide 1% dilates the pupil within 20 minutes.\n\n# Atropine\n\nAtropine lasts two weeks.\n"
)


@pytest.fixture
def kb_home(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The CLI home with the relevance floor the hashing embedder needs."""
    monkeypatch.setenv("MARK_KNOWLEDGE_MIN_SIMILARITY", "0.1")
    return home


def test_add_list_search_remove(kb_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "guide.md").write_text(GUIDE, encoding="utf-8")
    write_pdf(tmp_path / "ref.pdf", [["Homatropine lasts one to three days."]])
    code, added, _ = run(capsys, "knowledge", "add", "guide.md", "ref.pdf", "--json")
    assert code == 0 and isinstance(added, list)
    assert [(a["action"], a["source"]["name"], a["source"]["chunks"]) for a in added] == [
        ("added", "guide.md", 2),
        ("added", "ref.pdf", 1),
    ]
    code, again, _ = run(capsys, "knowledge", "add", "guide.md")
    assert code == 0 and again == f"unchanged: guide.md v{added[0]['source']['version'][:12]} (2 passage(s))\n"
    code, listed, _ = run(capsys, "knowledge", "list", "--json")
    assert isinstance(listed, list) and [(s["name"], s["pages"]) for s in listed] == [
        ("guide.md", None),
        ("ref.pdf", 1),
    ]
    code, hits, _ = run(capsys, "knowledge", "search", "how long does atropine last", "--k", "1", "--json")
    assert code == 0 and isinstance(hits, list) and len(hits) == 1
    assert (hits[0]["source"], hits[0]["section"], hits[0]["text"]) == (
        "guide.md",
        "Atropine",
        "Atropine lasts two weeks.",
    )
    assert 0.1 <= hits[0]["similarity"] <= 1.0
    code, shown, _ = run(capsys, "knowledge", "search", "homatropine days")
    assert code == 0 and isinstance(shown, str) and "ref.pdf" in shown and "passage(s)" in shown
    code, removed, _ = run(capsys, "knowledge", "remove", "ref.pdf")
    assert code == 0 and removed == f"removed: ref.pdf v{added[1]['source']['version'][:12]} (1 passage(s))\n"
    code, listed, _ = run(capsys, "knowledge", "list", "--json")
    assert isinstance(listed, list) and [s["name"] for s in listed] == ["guide.md"]


def test_a_named_source_is_replaced_when_its_file_changes(
    kb_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "v1.md"
    path.write_text(GUIDE, encoding="utf-8")
    assert run(capsys, "knowledge", "add", "v1.md", "--source", "Eye guide")[0] == 0
    path.write_text(GUIDE.replace("two weeks", "ten days"), encoding="utf-8")
    code, replaced, _ = run(capsys, "knowledge", "add", "v1.md", "--source", "Eye guide", "--json")
    assert code == 0 and isinstance(replaced, list) and replaced[0]["action"] == "replaced"
    code, hits, _ = run(capsys, "knowledge", "search", "how long does atropine last", "--json")
    assert isinstance(hits, list) and [h["text"] for h in hits if h["section"] == "Atropine"] == [
        "Atropine lasts ten days."
    ]


def _bad_files(folder: Path) -> dict[str, tuple[list[str], str]]:
    """Each bad input: the arguments after ``knowledge add`` and what its error line must say."""
    (folder / "empty.md").write_text("", encoding="utf-8")
    (folder / "menu.html").write_text("<nav>Home | About</nav><script>x()</script>", encoding="utf-8")
    (folder / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (folder / "notes.docx").write_bytes(b"PK\x03\x04")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4 cut short")
    (folder / "docs").mkdir()
    write_pdf(folder / "locked.pdf", [["secret"]], password="pw")
    write_pdf(folder / "scan.pdf", [[]])
    write_pdf(folder / "long.pdf", [["one"], ["two"], ["three"]])
    (folder / "big.txt").write_text("word " * 1000, encoding="utf-8")
    return {
        "missing": (["gone.md"], "gone.md: no such file"),
        "folder": (["docs"], "docs: is a folder"),
        "empty": (["empty.md"], "empty.md: has no text after parsing"),
        "markup only": (["menu.html"], "menu.html: has no text after parsing"),
        "scanned pdf": (["scan.pdf"], "scan.pdf: has no text after parsing: it may hold scanned pages only"),
        "not utf-8": (["latin1.txt"], "latin1.txt: is not UTF-8 text"),
        "unknown type": (["notes.docx"], "notes.docx: unknown file type '.docx'"),
        "malformed pdf": (["broken.pdf"], "broken.pdf: is not a readable PDF"),
        "encrypted": (["locked.pdf"], "locked.pdf: is an encrypted PDF: add an unencrypted copy"),
        "huge": (
            ["big.txt"],
            "big.txt: 5,000 bytes is over the 0.004 MB limit: split it, or raise MARK_KNOWLEDGE_MAX_FILE_MB",
        ),
        "too many pages": (["long.pdf"], "long.pdf: 3 pages is over the 2-page limit"),
        "source for two files": (
            ["--source", "x", "empty.md", "big.txt"],
            "a source name can only be given for one file",
        ),
    }


def test_every_bad_input_is_one_error_line_exit_2_and_nothing_added(
    kb_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MARK_KNOWLEDGE_MAX_FILE_MB", "0.004")  # 4,194 bytes: big.txt has 5,000
    monkeypatch.setenv("MARK_KNOWLEDGE_MAX_PAGES", "2")
    (tmp_path / "guide.md").write_text(GUIDE, encoding="utf-8")
    for case, (args, message) in _bad_files(tmp_path).items():
        code, printed, err = run(capsys, "knowledge", "add", "guide.md", *args)  # a good file first
        assert (code, printed) == (2, ""), case
        assert err.startswith("error: ") and err.endswith("\n") and err.count("\n") == 1, (case, err)
        assert message in err, (case, err)
    code, listed, _ = run(capsys, "knowledge", "list", "--json")
    assert (code, listed) == (0, [])


def test_unknown_source_and_bad_k(kb_home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "knowledge", "remove", "nothing.md")
    assert code == 2 and err == "error: no knowledge source named 'nothing.md': `mark knowledge list` shows them\n"
    code, _, err = run(capsys, "knowledge", "search", "tropicamide", "--k", "0")
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1


def test_knowledge_help_loads_no_store_and_search_no_model_stack(tmp_path: Path) -> None:
    modules = loaded_after(["knowledge", "--help"], home=tmp_path / "home")
    assert "commands.knowledge_cmds" in modules and top_level(modules, ("chromadb", *MODEL_STACK)) == []
    assert "commands.knowledge_cmds" not in loaded_after(["--help"], home=tmp_path / "home")


def test_ask_answers_knowledge_first_and_cites_the_passages(
    kb_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "guide.md").write_text(GUIDE, encoding="utf-8")
    assert run(capsys, "knowledge", "add", "guide.md")[0] == 0
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(["Tropicamide 1% dilates within 20 minutes [K1]."] * 2), encoding="utf-8")
    monkeypatch.setenv("MARK_PROVIDER", "replay")
    monkeypatch.setenv("MARK_REPLAY_FILE", str(replies))
    monkeypatch.setenv("MARK_KNOWLEDGE_INJECT_MIN_SIMILARITY", "0.1")
    code, answer, err = run(capsys, "ask", "how fast does tropicamide dilate the pupil", "--json")
    assert code == 0, err
    assert isinstance(answer, dict) and answer["answer"] == "Tropicamide 1% dilates within 20 minutes [K1]."
    first = answer["citations"][0]
    assert (first["label"], first["source"], first["section"]) == (
        "K1",
        "guide.md",
        "Tropicamide",
    )
    code, shown, _ = run(capsys, "ask", "how fast does tropicamide dilate the pupil")
    assert code == 0 and isinstance(shown, str) and "\nSources: [K1] guide.md, Tropicamide" in shown
