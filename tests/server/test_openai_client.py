"""The README's two lines: an OpenAI client pointed at a running ``mark serve`` gets answers with memory."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from openai import OpenAI

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from _service_load import free_port, make_keys, process, wait_until_up  # noqa: E402

MARK = str(Path(sys.executable).with_name("mark"))


def test_an_openai_client_switches_to_mark_by_its_base_url(tmp_path: Path) -> None:
    home = tmp_path / "home"
    keys = make_keys(home, 2)
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps(["Tropicamide drops are used at 0.5% to 1%."]), encoding="utf-8")
    env = {
        "MARK_HOME": str(home),
        "MARK_EMBEDDER": "hashing",
        "MARK_PROVIDER": "replay",
        "MARK_REPLAY_FILE": str(replies),
        "MARK_LOG_LEVEL": "warning",
    }
    port = free_port()
    with process([MARK, "serve", "--port", str(port)], env, tmp_path / "serve.log"):
        wait_until_up(f"http://127.0.0.1:{port}/health")
        owner = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key=keys["u00"])
        added = owner.post("/memories", body={"text": "u00 takes tropicamide strengths as percentages"}, cast_to=object)
        # the README's lines, with this test's port and key
        client = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key=keys["u00"])
        reply = client.chat.completions.create(
            model="mark", messages=[{"role": "user", "content": "Tropicamide strength as percentages?"}]
        )
        assert reply.choices[0].message.content == "Tropicamide drops are used at 0.5% to 1%."
        extra = reply.model_extra or {}
        assert extra["mark"]["memories"] == [added["record"]["id"]]  # type: ignore[index]
        # another key's user sees none of u00's memories
        other = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key=keys["u01"])
        found = other.get("/memories/search", options={"params": {"q": "tropicamide percentages"}}, cast_to=object)
        assert found == []
