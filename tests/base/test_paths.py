"""How a file an agent touched is named in what clm-policy commits (clm_policy.base.paths)."""

from __future__ import annotations

import pytest

from clm_policy.base.paths import home_as_tilde, relative_to_project


@pytest.mark.parametrize(
    ("path", "project", "expected"),
    [
        ("/work/shop/calc.py", "/work/shop", "calc.py"),
        ("/work/shop/src/../calc.py", "/work/shop/", "calc.py"),
        ("/work/shop", "/work/shop", "."),
        ("/work/shopping/list.txt", "/work/shop", "/work/shopping/list.txt"),  # not inside
        ("/etc/hosts", "/work/shop", "/etc/hosts"),
        ("calc.py", "/work/shop", "calc.py"),  # relative already (a Codex patch's path)
        ("./src//calc.py", "/work/shop", "src/calc.py"),
        ("../other/x.py", "/work/shop", "../other/x.py"),
        ("/work/shop/calc.py", None, "/work/shop/calc.py"),
        ("/work/shop/calc.py", "shop", "/work/shop/calc.py"),  # a relative project: unknown
        ("  /work/shop/calc.py ", "/work/shop", "calc.py"),
        ("", "/work/shop", ""),
    ],
)
def test_relative_to_project(path: str, project: str | None, expected: str) -> None:
    assert relative_to_project(path, project) == expected
    # idempotent: a committed name stays what it is
    assert relative_to_project(expected, project) == expected


def test_home_is_written_as_a_tilde(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/me")
    assert relative_to_project("/home/me/notes/todo.md", "/home/me/src/shop") == "~/notes/todo.md"
    assert relative_to_project("/home/me/src/shop/a.py", "/home/me/src/shop") == "a.py"
    assert relative_to_project("~/x.md", "/home/me/src/shop") == "~/x.md"
    assert home_as_tilde("/home/me") == "~"
    assert home_as_tilde("/home/meow/x") == "/home/meow/x"
    monkeypatch.setenv("HOME", "/")
    assert home_as_tilde("/etc/hosts") == "/etc/hosts"
