"""The import probes (tests/probes.py) see what they forbid: a probe that cannot fail would
let a hot path grow slow unnoticed."""

from __future__ import annotations

from probes import FORBIDDEN, LIBRARIES, probe_cli, probe_code


def test_a_forbidden_module_and_its_submodules_are_seen() -> None:
    done = probe_code("decide", "import click.testing\nimport json")
    assert "click" in done.loaded  # by its submodule
    assert set(done.loaded) <= set(FORBIDDEN["decide"])
    assert {"click.testing", "json"} <= set(done.new)
    assert probe_code("decide", "import json").loaded == []


def test_the_exit_code_and_output_of_a_command_come_back() -> None:
    done = probe_cli("decide", ["decide", "--tokens", "5", "--explain"])
    assert done.code == 0
    assert done.stdout.startswith("action:    continue\n")
    assert "pydantic" in done.loaded  # --explain is click's path: the probe says so


def test_every_hot_entry_point_forbids_the_heavy_libraries() -> None:
    for entry in ("hook", "statusline", "decide", "log", "compact"):
        assert set(LIBRARIES) <= set(FORBIDDEN[entry]), entry
    # the first hook after a policy changed reads it with libyaml and checks it with pydantic
    assert set(LIBRARIES) - set(FORBIDDEN["compile"]) == {"pydantic", "ruamel"}
