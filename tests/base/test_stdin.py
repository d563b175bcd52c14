"""Standard input is read with a bound, never to its end (clm_policy/base/stdin.py); the
commands and hooks that read it are held to it in tests/cli/test_bounded_stdin.py."""

from __future__ import annotations

import io
import sys

import pytest

from clm_policy.base.stdin import read_stdin

from conftest import Endless


def test_at_most_one_byte_past_the_limit_is_read() -> None:
    stream = Endless()
    assert read_stdin(1000, io.BufferedReader(stream, 64)) == b"a" * 1001  # type: ignore[arg-type]
    assert stream.given <= 1001 + 64


def test_standard_input_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"{}\n")))
    assert read_stdin(10) == b"{}\n"
    assert read_stdin(10) == b""  # read once: the rest is the caller's


def test_no_standard_input_or_an_unreadable_one_reads_as_empty(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "stdin", None)
    assert read_stdin(10) == b""
    closed = io.BytesIO(b"x")
    closed.close()
    assert read_stdin(10, closed) == b""
