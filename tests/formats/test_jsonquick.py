"""``jsonquick.loads`` (clm_policy.formats.jsonquick) answers as ``json.loads`` does — the
same value, or the same error with the same message — without importing ``json`` or ``re``
when the document is JSON.

Held on every JSON and JSON Lines file of the project, on the hook inputs and cache entries
it reads in practice, on broken and oddly encoded documents, and on random cuts and edits of
valid ones (a transcript's last line is often cut short).
"""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from clm_policy.formats.jsonquick import loads

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted(
    p
    for pattern in ("**/*.json", "**/*.jsonl")
    for p in ROOT.glob(pattern)
    if ".venv" not in p.parts and ".git" not in p.parts
)


def outcome(function: Any, data: str | bytes) -> tuple[str, Any]:
    """What ``function(data)`` gives: ("value", a comparable value) or ("error", its type
    and message)."""
    try:
        value = function(data)
    except Exception as exc:
        return "error", (type(exc).__name__, str(exc))
    return "value", json.dumps(value, sort_keys=True, allow_nan=True) + repr(type(value))


def same(data: str | bytes) -> None:
    assert outcome(loads, data) == outcome(json.loads, data), data


DOCUMENTS: list[str | bytes] = [
    '{"a": [1, 2.5, -0.0, 1e400, -1E-3, true, false, null, "x\\u00e9\\ud83d\\ude00"]}',
    '  \n\t[1, {"b": {}}, []]\r\n ',
    '{"a": 1, "a": 2}',  # the last of two equal keys, as json keeps it
    "[NaN, Infinity, -Infinity]",
    '"just a string"',
    "12",
    "true",
    "null",
    "",
    "   ",
    "{",
    '{"a": 1',
    '{"a": 1} x',
    '{"a": 1}{"b": 2}',
    "[1,]",
    '{"a" 1}',
    '["tab\there"]',  # a control character in a string: strict, as json's default
    '["\\x"]',
    '["unterminated',
    "\ufeff{}",
    "[" * 100 + "]" * 100,
    b'{"a": "\xc3\xa9"}',
    b"\xef\xbb\xbf{}",  # a UTF-8 byte order mark
    "{}".encode("utf-16"),
    "{}".encode("utf-16-le"),
    "[1]".encode("utf-32"),
    b'"\xed\xa0\x80"',  # a lone surrogate, as json decodes it (surrogatepass)
    b'["\xff"]',
    b"\x00",
    b"{",
    b"  [1] ",
    b"7",
]


@pytest.mark.parametrize("data", DOCUMENTS, ids=range(len(DOCUMENTS)))
def test_it_answers_as_json_does(data: str | bytes) -> None:
    same(data)


def test_nan_is_a_float_as_json_reads_it() -> None:
    value = loads("[NaN]")[0]
    assert isinstance(value, float)
    assert math.isnan(value)


def test_deep_nesting_fails_as_json_does() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(RecursionError):
        json.loads(deep)
    with pytest.raises(RecursionError):
        loads(deep)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_json_file_of_the_project(path: Path) -> None:
    data = path.read_bytes()
    same(data)
    same(data.decode("utf-8", "surrogatepass"))
    for line in data.splitlines()[:200]:
        same(line)


def test_random_cuts_and_edits() -> None:
    rng = random.Random(17)
    sample = json.dumps(
        {
            "type": "assistant",
            "message": {"content": [{"type": "text", "text": 'é \\ " \n'}], "n": [1, 2.5]},
            "usage": {"input_tokens": 5, "cache_read_input_tokens": 40_000},
        }
    )
    for _ in range(3000):
        text = sample[: rng.randrange(len(sample) + 1)]
        if rng.random() < 0.5 and text:
            at = rng.randrange(len(text))
            text = text[:at] + rng.choice('{}[]",:\\ 0e-x\x00\u00e9') + text[at + 1 :]
        same(text)
        same(text.encode("utf-8"))


def test_a_document_is_read_without_json_or_re() -> None:
    code = (
        "import sys\n"
        "from clm_policy.formats.jsonquick import loads\n"
        "assert loads(b'{\"a\": [1, 2.5, \"x\"]}') == {'a': [1, 2.5, 'x']}\n"
        "assert loads('  [true, null] ') == [True, None]\n"
        "print(sorted(m for m in ('json', 're') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (done.returncode, done.stdout, done.stderr) == (0, "[]\n", "")
