"""The docs tell the truth: their examples load and run, their name table is complete."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

from clm_policy import SessionState, TokenSnapshot, load_policy
from clm_policy.policy.names import PROFILE_NAMES, STATE_NAMES

from conftest import POLICIES, REPO, invoke


def _blocks(path: Path, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", path.read_text(), flags=re.S)


def test_readme_team_policy_loads_and_decides(tmp_path: Path) -> None:
    (block,) = [b for b in _blocks(REPO / "README.md", "yaml") if "name: team" in b]
    (tmp_path / "team.yaml").write_text(block)
    policy = load_policy(tmp_path / "team.yaml")
    s = SessionState(
        session_id="s",
        tokens=TokenSnapshot(context_tokens=175_000),
        blockers=["flaky test"],
        signals={"open_subagent_calls": 1},
    )
    d = policy.decide(s)
    assert (d.action.value, d.trigger, d.rationale) == (
        "handoff",
        "early_handoff",
        "88% full with 1 open blocker(s)",
    )
    c = policy.decide(
        SessionState(
            session_id="s",
            tokens=TokenSnapshot(context_tokens=160_000),
            signals={"open_subagent_calls": 2},
        ),
        force=True,
    )
    assert (c.action.value, c.forced, c.overridden[0].message) == (
        "compact",
        True,
        "2 subagent calls still open",
    )


def test_readme_python_example_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (block,) = [b for b in _blocks(REPO / "README.md", "python") if "load_policy" in b]
    monkeypatch.chdir(REPO)
    exec(compile(block, "README.md", "exec"), {})
    assert (
        capsys.readouterr().out == "compact soft_compact context 170000 >= soft limit 160000 []\n"
    )


def test_readme_console_example_is_current() -> None:
    (block,) = [
        b
        for b in _blocks(REPO / "README.md", "console")
        if b.startswith("$ clm-policy decide --tokens 260000\n")
    ]
    first = block.split("$ ")[1]
    command, *expected = first.rstrip("\n").split("\n")
    assert command == "clm-policy decide --tokens 260000"
    assert invoke("decide", "--tokens", "260000").stdout.splitlines() == expected


def test_policy_doc_lists_every_name() -> None:
    text = (REPO / "docs" / "policy.md").read_text()
    for name in [*STATE_NAMES, *PROFILE_NAMES]:
        assert f"| `{name}` |" in text, name


def test_readme_explain_excerpt_is_current() -> None:
    (block,) = [b for b in _blocks(REPO / "README.md", "console") if "rules, in order" in b]
    command, *excerpt = block.rstrip("\n").split("\n")
    assert command == "$ clm-policy decide --tokens 260000 --explain"
    result = invoke("decide", "--tokens", "260000", "--explain")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    # each run of lines between "..." lines is in the output, in that order
    runs: list[list[str]] = [[]]
    for line in excerpt:
        if line.strip() == "...":
            runs.append([])
        else:
            runs[-1].append(line)
    at = 0
    for run in (r for r in runs if r):
        found = next(i for i in range(at, len(lines)) if lines[i : i + len(run)] == run)
        at = found + len(run)
    # and it starts with the real first rule
    header = lines.index("rules, in order (the first that holds decides):")
    assert excerpt[excerpt.index(lines[header]) + 1] == lines[header + 1]


def test_readme_team_policy_is_the_shipped_one() -> None:
    """The README shows policies/examples/team.yaml (without its header comment), which the
    examples use, `.ci/run` lints strictly and policies/tests/team.test.yaml covers fully."""
    (block,) = [b for b in _blocks(REPO / "README.md", "yaml") if "name: team" in b]
    shipped = (POLICIES / "examples" / "team.yaml").read_text()
    assert block == shipped[shipped.index("version: 1") :]


def test_test_help_example_selects_cases(monkeypatch: pytest.MonkeyPatch) -> None:
    help_text = invoke("test", "--help").stdout
    (example,) = [
        line.strip()
        for line in help_text.splitlines()
        if line.strip().startswith("clm-policy test") and " -k " in line
    ]
    monkeypatch.chdir(REPO)
    result = invoke(*shlex.split(example)[1:])
    assert result.exit_code == 0, result.stderr
    passed = int(result.stdout.splitlines()[-1].split(" passed")[0])
    assert passed >= 1


def test_ci_doc_installs_from_a_place_that_exists() -> None:
    text = (REPO / "docs" / "ci.md").read_text()
    installs = re.findall(r'pip install ("[^"]+"|\.(?=[\s`]|$)|\S+)', text)
    assert installs
    for spec in installs:
        # clm-policy is on no public index: a git URL, or a checkout
        assert "git+" in spec or spec.strip() == ".", spec


def test_mcp_doc_shows_the_descriptions_the_model_sees() -> None:
    pytest.importorskip("mcp.server.mcpserver")
    from clm_policy.agents.mcp.server import DESCRIPTIONS, INSTRUCTIONS

    (block,) = [
        b
        for b in _blocks(REPO / "docs" / "mcp.md", "text")
        if b.startswith("status:") or b.startswith("instructions:")
    ]
    shown = dict(line.split(": ", 1) for line in block.splitlines())
    assert shown == {"instructions": INSTRUCTIONS, **DESCRIPTIONS}


def test_mcp_doc_lists_every_tool_and_the_readme_names_the_commands() -> None:
    from clm_policy.agents.mcp.server import DESCRIPTIONS
    from clm_policy.cli.main import COMMANDS

    text = (REPO / "docs" / "mcp.md").read_text()
    for name in DESCRIPTIONS:
        assert f"| `{name}` |" in text, name
    readme = (REPO / "README.md").read_text()
    for command in ("mcp", "migrate"):
        assert command in COMMANDS
        assert f"clm-policy {command}" in readme, command


def test_verification_doc_s_summary_says_what_its_figures_table_says() -> None:
    """The handoff figures' summary ("What the figures say") is read on its own: its ranges
    and counts are those of the table above it, which is what bench_handoff.py prints (it said
    46-52 % and "all 47 sessions" after the table had moved to 58.2 % and 95.7 %)."""
    text = (REPO / "docs" / "verification.md").read_text()
    sizes = re.search(r"\| \| tune half \((\d+)\) \| check half \((\d+)\) \|", text)
    assert sizes is not None
    halves = [int(sizes.group(1)), int(sizes.group(2))]

    def row(label: str) -> list[float]:
        found = re.search(
            rf"^\| {re.escape(label)}[^|]* \| ([\d.]+) %[^|]*\| ([\d.]+) %", text, re.M
        )
        assert found is not None, label
        return [float(found.group(1)), float(found.group(2))]

    summary = text.split("What the figures say:")[1].split("\n\n")[0]
    record = row("transcript only")
    assert f"record carries\n{round(min(record))}\u2013{round(max(record))} %" in summary
    model = row("**with a model**")
    halves_said = (
        f"{model[0]} % on each half" if model[0] == model[1] else f"{model[0]} % and {model[1]} %"
    )
    steps = row("next step right or close / stale or wrong, with a model")
    right = sum(round(share / 100 * n) for share, n in zip(steps, halves, strict=True))
    said = f"{right} of {sum(halves)} sessions" if right < sum(halves) else "all"
    tail = summary.split("writes them:")[1].replace("\n", " ")
    assert tail == f" {halves_said}, the next step right or close in {said}."


def test_every_option_of_every_command_is_in_the_docs() -> None:
    """A user reads the docs, not only ``--help``: each long option is named somewhere in the
    README or docs/ (decide's --step, --last-compact-step and --status, log's --limit and
    experiment's --seed and --bootstrap were in no page)."""
    from clm_policy.cli.main import cli

    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    text = "\n".join(page.read_text() for page in pages)
    missing = [
        f"{name} {flag}"
        for name, command in _commands(cli)
        for param in command.params
        for flag in param.opts + param.secondary_opts
        if flag.startswith("--")
        and flag != "--help"
        and re.search(re.escape(flag) + r"(?![\w-])", text) is None
    ]
    assert missing == []


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    ctx = click.Context(group)
    found: list[tuple[str, click.Command]] = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if isinstance(command, click.Group):
            found += _commands(command, f"{prefix}{name} ")
        elif command is not None:
            found.append((f"{prefix}{name}", command))
    return found
