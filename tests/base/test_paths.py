"""How the home folder is written in what clm-policy shows (clm_policy.base.paths)."""

from __future__ import annotations

import pytest

from clm_policy.base.paths import home_as_tilde


def test_home_is_written_as_a_tilde(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/me")
    assert home_as_tilde("/home/me/notes/todo.md") == "~/notes/todo.md"
    assert home_as_tilde("/home/me") == "~"
    assert home_as_tilde("/home/meow/x") == "/home/meow/x"
    monkeypatch.setenv("HOME", "/")
    assert home_as_tilde("/etc/hosts") == "/etc/hosts"
