"""The evaluator's key-point extraction on a replay client."""

from __future__ import annotations

import json

from autogen_ext.models.replay import ReplayChatCompletionClient

from agents.evaluator import KeyPointExtractor


async def test_key_points_from_the_model_and_a_bad_reply() -> None:
    good = json.dumps({"points": ["A) 0.01", "tropicamide drops are 0.5% to 1%"]})
    client = ReplayChatCompletionClient([good, "nonsense", '{"points": []}'])
    extractor = KeyPointExtractor(client)
    reference = "The answer is A) 0.01. Tropicamide drops are 0.5% to 1%."
    assert await extractor.key_points(reference) == ["A) 0.01", "tropicamide drops are 0.5% to 1%"]
    prompt = str(client.create_calls[0]["messages"][0].content)
    assert "<reference>" in prompt and "Tropicamide drops are 0.5% to 1%." in prompt
    assert await extractor.key_points(reference) is None  # rejected twice: no half-parsed points
    assert len(extractor.failures) == 1
