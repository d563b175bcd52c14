"""``decide`` without click (clm_policy.cli.fast.decide) is the click command, only quicker.

Its option table is the click command's; on every command line it answers, it prints exactly
what click prints; every command line click would refuse, and every error, it hands back.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from clm_policy.cli.decide import decide
from clm_policy.cli.fast import decide as oneshot

from conftest import click_option_table, invoke, message_of, run_process, values_of_kind
from probes import probe_cli

ROOT = Path(__file__).resolve().parents[2]
TRANSCRIPTS = ROOT / "tests" / "fixtures" / "transcripts"
# click's options that only click's path takes (the fast path declines them)
CLICK_ONLY = {"explain", "session", "memory", "help"}


def test_the_option_table_is_the_click_commands() -> None:
    table, defaults = click_option_table(decide, CLICK_ONLY)
    defaults["policy_ref"] = None  # the flag alone; both paths then ask config.setting
    assert table == oneshot.OPTIONS
    assert defaults == oneshot.DEFAULTS


SAME = [
    ["--tokens", "260000"],
    ["-t", "260000"],
    ["-t260000"],
    ["--tokens=260000"],
    ["--tokens", "1_000"],
    ["--tokens", "0"],
    ["--tokens", "360000", "--profile", "research"],
    ["--tokens", "120000", "--window", "200000", "--format", "json"],
    ["--tokens", "300000", "--step", "9", "--last-compact-step", "2"],
    ["--tokens", "300000", "--step", "9", "--last-compact-step", "8"],
    ["--tokens", "10", "--status", "phase_boundary"],
    ["--tokens", "260000", "--signal", "degradation=true"],
    ["--tokens", "260000", "--signal", "degradation=false", "--format=json"],
    ["--tokens", "260000", "--tokens", "10"],  # the last one counts, as in click
    [
        "-p",
        str(ROOT / "policies" / "examples" / "option_b.yaml"),
        "--tokens",
        "300000",
        "--window",
        "400000",
        "--signal",
        "open_subagent_calls=2",
    ],
    [
        "-p",
        str(ROOT / "policies" / "examples" / "option_b.yaml"),
        "--tokens",
        "300000",
        "--window",
        "400000",
        "--signal",
        "open_subagent_calls=2",
        "--force",
    ],
    ["--policy", "claude-code", "--tokens", "150000", "--window", "200000"],
    *(
        [form, "--transcript", str(TRANSCRIPTS / name)]
        for name in (
            "claude_session.jsonl",
            "claude_compact_end.jsonl",
            "claude_truncated.jsonl",
            "codex_rollout.jsonl",
            "codex_compacted.jsonl",
            "openai_with_usage.json",
            "openai_no_usage.json",
        )
        for form in ("--format=text", "--format=json")
    ),
    ["--transcript", str(TRANSCRIPTS / "codex_rollout.jsonl"), "--transcript-format", "codex"],
]


@pytest.mark.parametrize("args", SAME, ids=lambda a: " ".join(a)[-60:])
def test_it_prints_what_click_prints(args: list[str]) -> None:
    quick = oneshot.answer(list(args))
    slow = invoke("decide", *args)
    assert slow.exit_code == 0, slow.stderr
    assert quick is not None
    assert f"{quick}\n" == slow.stdout


def test_the_project_configuration_and_environment_apply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".clm-policy.yaml").write_text("version: 1\npolicy: claude-code\nprofile: coding\n")
    monkeypatch.chdir(tmp_path)
    for env in ({}, {"CLM_POLICY_PROFILE": "research"}, {"CLM_POLICY_POLICY": "default"}):
        with monkeypatch.context() as m:
            for name, value in env.items():
                m.setenv(name, value)
            args = ["--tokens", "150000", "--window", "200000"]
            quick = oneshot.answer(args)
            assert quick is not None
            assert f"{quick}\n" == invoke("decide", *args).stdout


DECLINED = [
    ["--tokens", "-1"],
    ["--tokens", "x"],
    ["--tokens"],
    ["--window", "0", "--tokens", "5"],
    ["--status", "nope", "--tokens", "5"],
    ["--format", "xml", "--tokens", "5"],
    ["--tokens", "5", "--state", "s.json"],
    ["--window", "5"],
    [],
    ["--tokens", "5", "--step", "2", "--last-compact-step", "5"],
    ["--tokens", "5", "--signal", "nonsense"],
    ["--tokens", "5", "--signal", "undeclared=1"],
    ["--tokens", "5", "--explain"],
    ["--tokens", "5", "--force=yes"],
    ["--tokens", "5", "--help"],
    ["--tokens", "5", "extra"],
    ["--tokens", "5", "--tokns", "6"],
    ["--tokens", "5", "--policy", "nosuch"],
    ["--tokens", "5", "--profile", "nosuch"],
    ["--transcript", "/nonexistent/t.jsonl"],
    ["--session", "s1"],
]


@pytest.mark.parametrize("args", DECLINED, ids=lambda a: " ".join(a) or "(none)")
def test_what_it_does_not_answer_click_does(args: list[str]) -> None:
    assert oneshot.answer(list(args)) is None
    if "--help" not in args and "--explain" not in args:
        assert invoke("decide", *args).exit_code == 2


EXAMPLE = ROOT / "docs" / "examples" / "session-state.json"


@pytest.mark.parametrize(
    "state",
    [
        EXAMPLE.read_text(),
        json.dumps({"session_id": "s", "tokens": {"context_tokens": 400_000}}),
        json.dumps({"session_id": "s", "profile": "research", "signals": {"degradation": True}}),
    ],
)
def test_a_plainly_valid_state_is_answered_from_a_file_and_stdin(
    state: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.json"
    path.write_text(state)
    slow = invoke("decide", "--state", str(path))
    assert slow.exit_code == 0, slow.stderr
    assert f"{oneshot.answer(['--state', str(path)])}\n" == slow.stdout
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(state.encode())))
    assert f"{oneshot.answer(['-s', '-'])}\n" == invoke("decide", "-s", "-", stdin=state).stdout


BAD_STATES = [
    "",
    "{",
    json.dumps({"session_id": "s", "tokens": {"context_tokens": "5"}}),
    json.dumps({"session_id": "s", "step_index": 1, "last_compact_step": 2}),
    '{"session_id": "s", "session_id": "t"}',
]
UNDECLARED = json.dumps({"session_id": "s", "signals": {"undeclared": 1}})
"""A state that reads, with a signal the policy refuses: click says so, at its place."""


def test_a_state_the_policy_refuses_goes_to_click(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(UNDECLARED)
    assert oneshot.answer(["--state", str(path)]) is None
    assert invoke("decide", "--state", str(path)).exit_code == 2


@pytest.mark.parametrize("state", BAD_STATES)
def test_a_state_that_cannot_be_read_is_refused_as_click_refuses_it(
    state: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The quick path keeps one error, a state it cannot read: it raises what click's path
    raises (reading a large state twice would double the time the error takes)."""
    from clm_policy.base.errors import InputError

    path = tmp_path / "s.json"
    path.write_text(state)
    clicks = invoke("decide", "--state", str(path))
    assert clicks.exit_code == 2
    with pytest.raises(InputError) as err:
        oneshot.answer(["--state", str(path)])
    assert f"{err.value}\n" == message_of(clicks.stderr)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(state.encode())))
    with pytest.raises(InputError) as err:
        oneshot.answer(["--state", "-"])
    assert f"{err.value}\n" == message_of(clicks.stderr).replace(str(path), "<stdin>")


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_as_a_process_a_bad_state_is_reported_in_clicks_words(fmt: str, tmp_path: Path) -> None:
    for state in [*BAD_STATES, UNDECLARED]:
        path = tmp_path / "s.json"
        path.write_text(state)
        args = ["decide", "--state", str(path), "--format", fmt]
        proc = run_process(*args, cwd=tmp_path)
        clicks = invoke(*args)
        assert (proc.returncode, proc.stdout, proc.stderr) == (
            clicks.exit_code,
            clicks.stdout,
            clicks.stderr,
        ), state


def test_as_a_process_a_bad_state_on_stdin_is_reported_where_it_is(tmp_path: Path) -> None:
    proc = run_process("decide", "--state", "-", stdin='{"session_id": 5}', cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert message_of(proc.stderr) == "<stdin>:1:16: session_id: expected a string, got integer 5\n"


@pytest.mark.parametrize(
    "args",
    [
        ["--tokens", "260000"],
        ["--state", str(ROOT / "docs" / "examples" / "session-state.json")],
        ["--transcript", str(TRANSCRIPTS / "claude_session.jsonl")],
    ],
    ids=["tokens", "state", "transcript"],
)
def test_as_a_process_it_imports_only_what_the_answer_needs(
    args: list[str], tmp_path: Path
) -> None:
    done = probe_cli("decide", ["decide", *args], cwd=tmp_path, runs=2)  # the first fills the cache
    assert (done.stdout, done.stderr, done.loaded, done.code) == (
        invoke("decide", *args).stdout,
        "",
        [],
        0,
    )


def test_a_closed_pipe_is_no_error(tmp_path: Path) -> None:
    proc = subprocess.run(
        f"{sys.executable} -m clm_policy decide --tokens 260000 --format json | head -c 1",
        shell=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert (proc.stdout, proc.stderr) == ("{", "")


# -- the meaning of the options together, over every combination ----------------------------

# a value for each source and each option that goes with --tokens (the resolver's tables:
# a new one there fails the test below until it has a value here)
SOURCE_ARGS = {
    "state": ["--state", str(ROOT / "docs" / "examples" / "session-state.json")],
    "tokens": ["--tokens", "260000"],
    "session": ["--session", "demo"],
    "transcript": ["--transcript", str(TRANSCRIPTS / "claude_session.jsonl")],
}
FIGURE_ARGS = {
    "window": ["--window", "400000"],
    "step": ["--step", "3"],
    "last_compact_step": ["--last-compact-step", "2"],  # after --step when --step is not given
    "status": ["--status", "phase_boundary"],
    "signals": ["--signal", "degradation=true"],
}


def combinations() -> list[list[str]]:
    import itertools

    names = [*SOURCE_ARGS, *FIGURE_ARGS]
    args = {**SOURCE_ARGS, **FIGURE_ARGS}
    return [
        [word for name, chosen in zip(names, mask, strict=True) if chosen for word in args[name]]
        for mask in itertools.product((False, True), repeat=len(names))
    ]


def test_the_combinations_cover_the_resolvers_tables() -> None:
    from clm_policy.lifecycle.sources import SOURCES, WITH_TOKENS

    assert list(SOURCE_ARGS) == list(SOURCES)
    assert list(FIGURE_ARGS) == list(WITH_TOKENS)
    assert len(combinations()) == 2 ** (len(SOURCES) + len(WITH_TOKENS))


def test_every_combination_means_the_same_on_both_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each combination of the sources and the options that go with --tokens: the quick path
    answers exactly what click answers, or hands the command line to click — and then only one
    click refuses (exit 2), or one with an option only click takes (--session)."""
    monkeypatch.chdir(tmp_path)
    assert invoke("run", "--max-steps", "3").exit_code == 0  # session demo in ./clm-memory
    outcomes: dict[tuple[str, int], int] = {}
    for args in combinations():
        quick = oneshot.answer(list(args))
        slow = invoke("decide", *args)
        if quick is not None:
            assert (slow.exit_code, slow.stdout) == (0, f"{quick}\n"), args
        else:
            assert slow.exit_code == 2 or "--session" in args, (args, slow.stderr)
            assert slow.exit_code in (0, 2), (args, slow.stderr)
        key = ("quick" if quick is not None else "click", slow.exit_code)
        outcomes[key] = outcomes.get(key, 0) + 1
    # every kind happened: answered quickly, refused, and answered by click alone
    assert set(outcomes) == {("quick", 0), ("click", 2), ("click", 0)}, outcomes


# -- each option with the values its kind implies, generated from the table ------------------

STRING_SAMPLES = {  # the table's string options: values a user gives, good and bad
    "policy_ref": ["claude-code", "nosuch", str(ROOT / "policies" / "examples" / "team.yaml")],
    "profile": ["research", "nosuch"],
    "state_src": [str(ROOT / "docs" / "examples" / "session-state.json"), "missing.json"],
    "signals": ["degradation=true", "novalue", "undeclared=1"],
    "transcript": [str(TRANSCRIPTS / "codex_rollout.jsonl"), "missing.jsonl"],
}


def table_command_lines() -> list[list[str]]:
    sources = {"state_src", "transcript"}
    lines = []
    for option, (dest, kind) in oneshot.OPTIONS.items():
        if not option.startswith("--"):
            continue  # a short form parses the same (held by the table test)
        values = values_of_kind(kind, STRING_SAMPLES.get(dest, []))
        base = [] if dest in sources or dest == "tokens" else ["--tokens", "260000"]
        lines += [[*base, option]] if kind == "flag" else [[*base, option, v] for v in values]
    return lines


def test_the_samples_cover_the_tables_strings() -> None:
    strings = {d for d, kind in oneshot.OPTIONS.values() if kind in ("str", "multi")}
    assert strings == set(STRING_SAMPLES)


@pytest.mark.parametrize("args", table_command_lines(), ids=lambda a: " ".join(a)[-50:])
def test_each_value_of_each_option_means_the_same_on_both_paths(
    args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clm_policy.base.errors import InputError

    monkeypatch.chdir(tmp_path)
    slow = invoke("decide", *args)
    if "missing.json" in args:  # a --state it cannot read: it says what click's path says
        with pytest.raises(InputError) as refused:
            oneshot.answer(list(args))
        error = refused.value  # as the one reporter prints it (clm_policy.cli.errors.report)
        said = str(error) if error.location is not None else f"clm-policy: {error}"
        assert (slow.exit_code, message_of(slow.stderr)) == (2, f"{said}\n")
        return
    quick = oneshot.answer(list(args))
    if quick is not None:
        assert (slow.exit_code, slow.stdout) == (0, f"{quick}\n")
    else:
        assert slow.exit_code == 2, slow.stderr
