"""clm_policy.cli.options: a flag several commands take reads the same in each (its short form,
its metavar, the name the command receives), whichever command it is on."""

from __future__ import annotations

from collections.abc import Iterator

import click

from clm_policy.cli.main import cli

SHARED = {
    "--memory": (["--memory", "-m"], "memory", "DIR"),
    "--policy": (["--policy", "-p"], "policy_ref", "PATH|NAME"),
    "--profile": (["--profile"], "profile", "NAME"),
    "--session": (["--session"], "session", "ID"),
    "--state": (["--state", "-s"], "state_src", "FILE|-"),
    "--output": (["--output", "-o"], "output", "FILE"),
}


def commands(group: click.Group, prefix: str = "") -> Iterator[tuple[str, click.Command]]:
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        if isinstance(command, click.Group):
            yield from commands(command, f"{prefix}{name} ")
        else:
            yield f"{prefix}{name}", command


def test_a_shared_flag_reads_the_same_on_every_command() -> None:
    seen: dict[str, list[str]] = {flag: [] for flag in SHARED}
    for name, command in commands(cli):
        for param in command.params:
            if not isinstance(param, click.Option):
                continue
            flag = param.opts[0]
            if flag in SHARED:
                opts, dest, metavar = SHARED[flag]
                assert (param.opts, param.name, param.metavar) == (opts, dest, metavar), name
                seen[flag].append(name)
            if flag == "--format":
                assert param.name == "fmt", name
                assert isinstance(param.type, click.Choice), name
                # text first and the default, wherever there is text (export writes data only)
                assert param.default == param.type.choices[0], name
                assert param.default == "text" or "text" not in param.type.choices, name
    assert all(len(names) >= 2 for names in seen.values()), seen  # shared indeed


def test_the_memory_repository_is_found_alike() -> None:
    """Every command that reads an existing memory repository finds the project's the same
    way (flag, $CLM_POLICY_MEMORY, .clm-policy.yaml); `run` creates one at its own default and
    the hooks resolve the project's themselves."""
    own = {"run", "hook claude-code", "hook codex"}
    for name, command in commands(cli):
        for param in command.params:
            if isinstance(param, click.Option) and param.opts[0] == "--memory":
                assert (param.envvar == "CLM_POLICY_MEMORY") is (name not in own), name
