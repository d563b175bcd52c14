"""How the home folder is written in what clm-policy shows, and where clm-policy's own folders
are (clm_policy.base.paths)."""

from __future__ import annotations

import os

import pytest

from clm_policy.agents import logfile
from clm_policy.base import privatefiles
from clm_policy.base.paths import (
    XDG_DEFAULTS,
    claude_config_dir,
    claude_user_config,
    home_as_tilde,
    xdg_home,
)
from clm_policy.config import trust
from clm_policy.config.project import project_memory


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


XDG_CALLERS = {
    "XDG_CONFIG_HOME": ("config/clm-policy", trust.store_dir),
    "XDG_CACHE_HOME": ("cache/clm-policy", privatefiles.cache_dir),
    "XDG_DATA_HOME": ("data/clm-policy/projects", lambda: project_memory("/work/shop")),
    "XDG_STATE_HOME": ("state/clm-policy/hook.log", lambda: logfile.log_path("hook.log")),
}


@pytest.mark.parametrize("variable", sorted(XDG_DEFAULTS))
def test_an_xdg_folder_is_taken_only_when_absolute(
    variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As the XDG Base Directory specification asks, an empty or relative value is ignored
    (a relative one would be a folder of whatever project the working folder is in), by the
    one helper and by each of its callers: the trust record, the caches, a project's memory,
    the logs."""
    assert set(XDG_CALLERS) == set(XDG_DEFAULTS)
    monkeypatch.setenv("HOME", "/home/me")
    for name in ("CLM_POLICY_CACHE_DIR", "CLM_POLICY_NO_CACHE"):
        monkeypatch.delenv(name, raising=False)
    default = "/home/me/" + XDG_DEFAULTS[variable].replace(os.sep, "/")
    under, caller = XDG_CALLERS[variable]
    given = "/x/" + under.split("/", 1)[0]
    monkeypatch.setenv(variable, given)
    assert xdg_home(variable) == given
    assert str(caller()).startswith(f"/x/{under}")
    for ignored in ("", "relative/folder", "./here", "~/not-expanded"):
        monkeypatch.setenv(variable, ignored)
        assert xdg_home(variable) == default, ignored
        assert str(caller()).startswith(default + "/" + under.split("/", 1)[1]), ignored
    monkeypatch.delenv(variable)
    assert xdg_home(variable) == default
