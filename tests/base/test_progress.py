"""Progress is shown on a terminal only, rewritten in place, and erased at the end."""

from __future__ import annotations

import io

import pytest

from clm_policy.base import progress
from clm_policy.base.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_nothing_is_written_where_no_one_watches() -> None:
    out = io.StringIO()  # not a terminal: a pipe, a file, CI
    with Progress("replaying", 10, stream=out) as p:
        for _ in range(10):
            p.advance()
    assert out.getvalue() == ""
    quiet = Terminal()  # --format json turns it off even on a terminal
    with Progress("replaying", 10, stream=quiet, enabled=False) as p:
        p.advance(10)
    assert quiet.getvalue() == ""


def test_a_terminal_sees_the_count_then_a_clean_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "INTERVAL", 0.0)
    out = Terminal()
    with Progress("replaying", 4, stream=out) as p:
        p.advance()
        p.advance(3)
    text = out.getvalue()
    assert "\rreplaying: 1/4 (25%)" in text
    assert "\rreplaying: 4/4 (100%)" in text
    assert text.endswith("\r" + " " * len("replaying: 4/4 (100%)") + "\r")


def test_an_unknown_total_shows_the_count(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "INTERVAL", 0.0)
    out = Terminal()
    with Progress("reading", stream=out) as p:
        p.advance(1200)
    assert "\rreading: 1,200" in out.getvalue()


def test_a_notice_is_one_terminal_line_shown_once_then_erased() -> None:
    from clm_policy.base.progress import Notice

    out = Terminal()
    notice = Notice("waiting for \x1b[31mthe lock", stream=out)
    notice.say()
    notice.say()
    notice.close()
    notice.close()
    shown = "\rwaiting for \\x1b[31mthe lock"
    assert out.getvalue() == shown + "\r" + " " * (len(shown) - 1) + "\r"
    piped = io.StringIO()
    quiet = Notice("waiting", stream=piped)
    quiet.say()
    quiet.close()
    assert piped.getvalue() == ""
