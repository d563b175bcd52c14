"""``log`` without click (clm_policy.cli.fast.log) is the click command, only sooner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clm_policy.cli.fast import log as quicklog
from clm_policy.cli.memory import log

from conftest import (
    as_shown,
    click_option_table,
    from_template,
    git,
    invoke,
    run_process,
    values_of_kind,
)
from probes import probe_cli

CLICK_ONLY = {"help"}


def test_the_option_table_is_the_click_commands() -> None:
    table, defaults = click_option_table(log, CLICK_ONLY)
    defaults["memory"] = None  # the flag alone; both paths then ask config.memory_path
    assert table == quicklog.OPTIONS
    assert defaults == quicklog.DEFAULTS


def _play(mem: Path) -> None:
    assert invoke("run", "--memory", str(mem), "--continue-after-handoff").exit_code == 0
    git(mem, "commit", "-q", "--allow-empty", "-m", "a commit clm-policy did not write")


@pytest.fixture
def trail(tmp_path: Path, _templates: Path) -> Path:
    """A memory repository with two sessions, compactions, a handoff and a foreign commit."""
    return from_template(_templates, "trail", _play, tmp_path / "mem")


ARGS = [
    [],
    ["--format", "json"],
    ["--session", "demo"],
    ["--event", "compact"],
    ["--event=handoff", "--format=json"],
    ["-n", "2"],
    ["--limit", "1", "--all"],
    ["--session", "demo", "--event", "handoff"],
    ["--session", "demo", "--agent", "nosuch"],
]


@pytest.mark.parametrize("args", ARGS, ids=lambda a: " ".join(a) or "(none)")
def test_it_prints_what_click_prints(trail: Path, args: list[str]) -> None:
    quick = quicklog.answer(["--memory", str(trail), *args])
    slow = invoke("log", "--memory", str(trail), *args)
    assert quick is not None
    status, out, err = quick
    assert (status, f"{out}\n" if out else "", f"{err}\n" if err else "") == (
        slow.exit_code,
        slow.stdout,
        slow.stderr,
    )


@pytest.mark.parametrize(
    "args",
    [["--help"], ["--event", "nope"], ["-n", "0"], ["--format", "xml"], ["extra"], ["--limit"]],
)
def test_what_it_does_not_answer_click_does(trail: Path, args: list[str]) -> None:
    assert quicklog.answer(["--memory", str(trail), *args]) is None


def test_a_session_with_no_trace_goes_to_click_which_names_the_sessions(trail: Path) -> None:
    assert quicklog.answer(["--memory", str(trail), "--session", "nosuch"]) is None
    # in JSON too (it answered `[]`, exit 0, where click's path says exit 2)
    json_args = ["--memory", str(trail), "--session", "nosuch", "--format", "json"]
    assert quicklog.answer(json_args) is None
    assert quicklog.answer([*json_args, "--event", "handoff"]) is None
    slow = invoke("log", "--memory", str(trail), "--session", "nosuch")
    assert (slow.exit_code, slow.stdout) == (2, "")
    assert slow.stderr.endswith(": no session 'nosuch' recorded (sessions: demo, demo-2)\n")


def test_a_folder_that_is_not_plainly_a_repository_goes_to_click(tmp_path: Path) -> None:
    for folder in (tmp_path / "nowhere", tmp_path):
        assert quicklog.answer(["--memory", str(folder)]) is None
        result = invoke("log", "--memory", str(folder))
        assert result.exit_code == 2


def test_as_a_process_it_loads_no_click(trail: Path) -> None:
    done = probe_cli("log", ["log", "--memory", str(trail), "--format", "json"])
    assert (done.loaded, done.code) == ([], 0)
    assert json.loads(done.stdout) == json.loads(
        invoke("log", "--memory", str(trail), "--format", "json").stdout
    )


# -- generated from the table: every option with the values its kind implies, and every
# combination of the options with a valid value ------------------------------------------------

STRING_SAMPLES = {
    "session": ["demo", "nosuch", "../x"],
    "agent": ["a1b2c3", "nosuch", "../x"],
    "memory": [],
}  # memory: the trail's


def table_command_lines() -> list[list[str]]:
    lines = []
    for option, (dest, kind) in quicklog.OPTIONS.items():
        if not option.startswith("--") or dest == "memory":
            continue
        assert kind != "str" or dest in STRING_SAMPLES, dest  # a new string option needs samples
        values = values_of_kind(kind, STRING_SAMPLES.get(dest, []))
        lines += [[option]] if kind == "flag" else [[option, v] for v in values]
    return lines


def combinations() -> list[list[str]]:
    import itertools

    valid = {
        "--session": "demo",
        "--event": "compact",
        "--agent": "main",
        "--all": None,
        "--limit": "2",
    }
    valid["--format"] = "json"
    assert {o for o, (d, _) in quicklog.OPTIONS.items() if o.startswith("--")} == {
        *valid,
        "--memory",
    }
    out = []
    for mask in itertools.product((False, True), repeat=len(valid)):
        args: list[str] = []
        for chosen, (option, value) in zip(mask, valid.items(), strict=True):
            if chosen:
                args += [option] if value is None else [option, value]
        out.append(args)
    return out


def test_every_option_and_combination_means_the_same_on_both_paths(trail: Path) -> None:
    answered = 0
    for args in [*table_command_lines(), *combinations()]:
        quick = quicklog.answer(["--memory", str(trail), *args])
        slow = invoke("log", "--memory", str(trail), *args)
        if quick is None:
            assert slow.exit_code == 2, (args, slow.stderr)
            continue
        answered += 1
        status, out, err = quick
        assert (status, f"{out}\n" if out else "", f"{err}\n" if err else "") == (
            slow.exit_code,
            slow.stdout,
            slow.stderr,
        ), args
    assert answered >= len(combinations())


def _damaged(memory: Path, how: str) -> None:
    """Damage ``memory``: HEAD's file garbage, or every commit object unreadable."""
    if how == "head":
        (memory / ".git" / "HEAD").write_text("garbage\n")
        return
    for obj in (memory / ".git" / "objects").glob("??/*"):
        obj.chmod(0o644)
        obj.write_bytes(b"x\n")


@pytest.mark.parametrize("how", ["head", "objects"])
def test_a_damaged_repository_is_said_not_shown_empty(memory: Path, how: str) -> None:
    """A history git cannot read is an error (exit 2, git's words, how to check), on both
    paths, for show and for migrate: it once read as no commits (log, exit 0) and no
    documents (migrate: "no documents yet; nothing to migrate", exit 0)."""
    _damaged(memory, how)
    root = str(memory)
    assert quicklog.answer(["--memory", root]) is None
    for args in (["log"], ["log", "--format", "json"], ["show", "HEAD"], ["migrate", "--dry-run"]):
        done = run_process(*args, "--memory", root)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        said = json.loads(done.stdout)["error"]["message"] if "json" in args else done.stderr
        said = said.removeprefix("clm-policy: ")
        shown = as_shown(root)  # from the working folder, else with ~
        assert said.startswith(f"{shown}: git cannot read the history: "), said
        assert said.rstrip("\n").endswith(
            f"(the repository may be damaged: git -C {shown} fsck checks it)"
        )
    # given as a relative folder, it is named so (it once was the absolute root)
    for args in (["log"], ["show", "HEAD"]):
        done = run_process(*args, "--memory", memory.name, cwd=memory.parent)
        assert done.stderr.startswith(f"clm-policy: {memory.name}: git cannot read"), done.stderr


def test_a_branch_with_no_commit_yet_is_an_empty_history(tmp_path: Path) -> None:
    """A repository whose branch has no commit yet: no commits (exit 0), as before."""
    mem = tmp_path / "mem"
    mem.mkdir()
    git(mem, "init", "-q")
    (mem / ".clm-memory").write_text("format: 1\n")
    done = run_process("log", "--memory", str(mem))
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "no matching commits\n")
    shown = run_process("show", "--memory", str(mem), "sessions/s1/handoffs/001.md")
    assert (shown.returncode, shown.stderr) == (
        2,
        f"clm-policy: {mem}: no file sessions/s1/handoffs/001.md on any branch (it has no "
        "commit yet)\n",
    )
    head = run_process("show", "--memory", str(mem), "HEAD")
    assert (head.returncode, head.stderr) == (
        2,
        f"clm-policy: {mem}: no commit or file named 'HEAD' (it has no commit yet)\n",
    )
