"""How the home folder is written in what clm-policy shows (clm_policy.base.paths)."""

from __future__ import annotations

import pytest

from clm_policy.base.paths import claude_config_dir, claude_user_config, home_as_tilde


def test_home_is_written_as_a_tilde(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/me")
    assert home_as_tilde("/home/me/notes/todo.md") == "~/notes/todo.md"
    assert home_as_tilde("/home/me") == "~"
    assert home_as_tilde("/home/meow/x") == "/home/meow/x"
    monkeypatch.setenv("HOME", "/")
    assert home_as_tilde("/etc/hosts") == "/etc/hosts"


def test_claude_code_s_folders_follow_claude_config_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/me")
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    assert claude_config_dir() == "/home/me/.claude"
    assert claude_user_config() == "/home/me/.claude.json"  # beside ~/.claude, not in it
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "")  # empty: as unset
    assert claude_config_dir() == "/home/me/.claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "~/cc")
    assert claude_config_dir() == "/home/me/cc"
    assert claude_user_config() == "/home/me/cc/.claude.json"
    assert claude_config_dir({"CLAUDE_CONFIG_DIR": "/etc/cc"}) == "/etc/cc"  # an env given
    assert claude_config_dir({}) == "/home/me/.claude"
