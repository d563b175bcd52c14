"""The offline stand-in for Mem0's model: what it extracts, how it embeds, and that it answers
over HTTP as an OpenAI-compatible endpoint on 127.0.0.1."""

from __future__ import annotations

import json
import urllib.request

from clm_policy.memory.mem0_offline import OfflineModel, content_words, embed, extract

PROMPT = """## Summary


## Existing Memories
[{"id": "0", "text": "Implementing partial refunds (part 1)."}]

## New Messages
user: Add partial refunds. The sandbox rejects refunds above 500 EUR; keep fixtures low.
assistant: Implementing partial refunds (part 7).
Ok.
assistant: Noted.

## Observation Date
2026-12-01"""


def test_every_sentence_that_says_something_is_a_fact_once() -> None:
    assert extract(PROMPT) == [
        {"id": "0", "text": "Add partial refunds.", "attributed_to": "user"},
        {
            "id": "1",
            "text": "The sandbox rejects refunds above 500 EUR; keep fixtures low.",
            "attributed_to": "user",
        },
    ]
    assert extract("no sections at all") == []


def test_embeddings_are_word_overlap() -> None:
    assert content_words("The sandbox REJECTS refunds, 5 times") == [
        "sandbox",
        "rejects",
        "refunds",
        "5",
        "times",
    ]
    a, b, c = (
        embed("sandbox rejects refunds", 64),
        embed("refunds rejected by sandbox", 64),
        embed("nightly report query", 64),
    )
    assert a == embed("Sandbox rejects refunds.", 64)
    assert round(sum(x * x for x in a), 9) == 1.0

    def cos(x: list[float], y: list[float]) -> float:
        return sum(p * q for p, q in zip(x, y, strict=True))

    assert cos(a, b) > cos(a, c)
    assert embed("", 8) == [1.0, 0, 0, 0, 0, 0, 0, 0]


def test_it_answers_as_an_openai_compatible_endpoint() -> None:
    with OfflineModel() as model:
        assert model.url.startswith("http://127.0.0.1:")

        def post(path: str, body: dict[str, object]) -> dict[str, object]:
            request = urllib.request.Request(
                model.url + path, json.dumps(body).encode(), {"Content-Type": "application/json"}
            )
            with urllib.request.urlopen(request, timeout=10) as answer:
                return json.loads(answer.read())  # type: ignore[no-any-return]

        vectors = post("/embeddings", {"model": "m", "input": ["a b", "c"], "dimensions": 16})
        assert [len(d["embedding"]) for d in vectors["data"]] == [16, 16]  # type: ignore[index, union-attr]
        chat = post(
            "/chat/completions", {"model": "m", "messages": [{"role": "user", "content": PROMPT}]}
        )
        content = chat["choices"][0]["message"]["content"]  # type: ignore[index]
        assert json.loads(content)["memory"][0]["text"] == "Add partial refunds."
