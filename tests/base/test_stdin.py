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


def test_standard_input_is_read_by_this_module_alone() -> None:
    """lifecycle/sources.py had a reader of its own beside this one (bounded too, and keeping
    what it read); now it calls read_stdin_kept here. No other module reads the stream."""
    import re

    from conftest import REPO

    reads = re.compile(r"getattr\(sys\.stdin, \"buffer\"|sys\.stdin\.buffer\.read|stdin\.read\(")
    readers = sorted(
        str(path.relative_to(REPO))
        for path in (REPO / "clm_policy").rglob("*.py")
        if reads.search(path.read_text(encoding="utf-8"))
    )
    assert readers == ["clm_policy/base/stdin.py"]


def test_kept_standard_input_is_read_once_and_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from clm_policy.base.stdin import read_stdin_kept

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"0123456789")))
    assert read_stdin_kept(3) == b"0123"
    assert read_stdin_kept(100) == b"0123456789"  # the rest, read once
    assert read_stdin_kept(100) == b"0123456789"
    monkeypatch.setattr(sys, "stdin", None)
    assert read_stdin_kept(10) is None
