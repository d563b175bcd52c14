"""clm-policy statusline: Claude Code's status-line JSON in, one line out, never a failure."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from clm_policy.agents import logfile
from clm_policy.agents import statusline as sl
from clm_policy.base import privatefiles
from clm_policy.models.enums import MAX_COUNT
from clm_policy.models.state import SessionState, TokenSnapshot
from clm_policy.policy import cache
from clm_policy.policy.compile import load_policy

from conftest import REPO, invoke, run_process
from probes import probe_cli

TRANSCRIPTS = REPO / "tests" / "fixtures" / "transcripts"


def payload(
    folder: Path | str = "/nonexistent-project",
    *,
    usage: dict[str, int] | str | None = "default",
    window: int | None = 200_000,
    model: str | None = "claude-sonnet-4-6",
    transcript: str | None = None,
    percent: float | None = None,
) -> dict[str, Any]:
    """A status-line input in the shape Claude Code sends (docs: code.claude.com statusline)."""
    if usage == "default":
        usage = {
            "input_tokens": 2000,
            "output_tokens": 500,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 80000,
        }
    context: dict[str, Any] = {
        "total_input_tokens": 15234,
        "total_output_tokens": 4521,
        "context_window_size": window,
        "used_percentage": percent,
        "remaining_percentage": None if percent is None else 100 - percent,
        "current_usage": usage,
    }
    return {
        "hook_event_name": "Status",
        "session_id": "abc123",
        "transcript_path": transcript,
        "cwd": str(folder),
        "model": {"id": model, "display_name": "Sonnet"},
        "workspace": {"current_dir": str(folder), "project_dir": str(folder)},
        "version": "2.1.0",
        "output_style": {"name": "default"},
        "cost": {"total_cost_usd": 0.01, "total_duration_ms": 45000},
        "context_window": context,
    }


def usage_of(tokens: int) -> dict[str, int]:
    fresh = min(tokens, 100)
    return {
        "input_tokens": fresh,
        "output_tokens": 999,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": tokens - fresh,
    }


def line(data: dict[str, Any] | bytes, *args: str) -> str:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    flags = sl.parse_args(list(args))
    return sl.status_line(raw, flags.get("policy"), flags.get("profile"))


@pytest.fixture(autouse=True)
def _state(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
    monkeypatch.delenv("CLM_POLICY_POLICY", raising=False)
    monkeypatch.delenv("CLM_POLICY_PROFILE", raising=False)


def log_lines() -> list[str]:
    path = Path(logfile.log_path(sl.LOG_NAME))
    if not path.exists():
        return []
    return [text.split(" ", 1)[1] for text in path.read_text().splitlines()]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project configured for the bundled claude-code policy, profile coding."""
    folder = tmp_path / "shop"
    (folder / "src").mkdir(parents=True)
    (folder / ".git").mkdir()  # a repository: its configuration counts in its subfolders
    (folder / ".clm-policy.yaml").write_text("version: 1\npolicy: claude-code\nprofile: coding\n")
    return folder


def digests() -> list[Path]:
    directory = Path(os.environ["CLM_POLICY_CACHE_DIR"])
    return sorted(directory.glob("statusline-*.json")) if directory.exists() else []


# -- what the person sees ------------------------------------------------------------------


def test_without_a_configuration_the_claude_code_policy_speaks() -> None:
    """Not the default policy's tokens (250,000 on a 200,000 window: "compact at 125%"), but
    the bundled claude-code policy's shares of the window."""
    assert line(payload()) == "ctx 46% 82k/180k · compact at 67% · continue · claude-code/coding"
    assert log_lines() == []


def test_the_share_is_the_one_claude_code_shows(project: Path) -> None:
    """Claude Code 2.1.332 shows "89% context used" at 160,000 tokens of a 200,000 window: the
    window less the 20,000 it keeps for the reply. The line shows that figure, and the
    policy's thresholds (60% and 75% of the window: 120,000 and 150,000 tokens) in its terms."""
    assert line(payload(project, usage=usage_of(160_000))) == (
        "ctx 89% 160k/180k · past handoff at 83% · handoff · claude-code/coding"
    )
    assert sl.counted_window(200_000) == 180_000
    assert sl.counted_window(1_000_000) == 980_000
    assert sl.counted_window(30_000) == 30_000  # too small to spare it: whole


@pytest.mark.parametrize(
    ("tokens", "expected"),
    [
        (82_000, "ctx 46% 82k/180k · compact at 67% · continue · claude-code/coding"),
        (120_000, "ctx 67% 120k/180k · handoff at 83% · compact · claude-code/coding"),
        (149_999, "ctx 83% 150k/180k · handoff at 83% · compact · claude-code/coding"),
        (150_000, "ctx 83% 150k/180k · past handoff at 83% · handoff · claude-code/coding"),
        # all zeros: what Claude Code 2.1.332 sends right after /compact — no figure yet (an
        # estimate from the summary would leave out the system prompt and the tools)
        (0, "ctx n/a (just compacted) · compact at 67% · claude-code/coding"),
    ],
)
def test_a_project_of_the_claude_code_policy(project: Path, tokens: int, expected: str) -> None:
    assert line(payload(project, usage=usage_of(tokens))) == expected  # a miss
    assert line(payload(project, usage=usage_of(tokens))) == expected  # a hit


def test_the_session_folder_finds_the_configuration_above_it(project: Path) -> None:
    shown = line(payload(project / "src"))
    assert shown == "ctx 46% 82k/180k · compact at 67% · continue · claude-code/coding"


def test_flags_and_environment_override_the_configuration(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert line(payload(project), "--profile", "research").endswith(
        "compact at 72% · continue · claude-code/research"
    )
    assert line(payload(project), "--profile=tool_heavy", "-p", "default").endswith(
        "compact at 125% · continue · default/tool_heavy"
    )
    monkeypatch.setenv("CLM_POLICY_PROFILE", "multi_agent")
    assert line(payload(project)).endswith("compact at 56% · continue · claude-code/multi_agent")


def test_a_one_million_window_and_output_tokens_left_out(project: Path) -> None:
    data = payload(project, usage=usage_of(700_000), window=1_000_000)
    assert line(data) == "ctx 71% 700k/980k · handoff at 77% · compact · claude-code/coding"


# -- missing figures -----------------------------------------------------------------------


def test_null_usage_before_the_first_call_or_after_compact(project: Path) -> None:
    assert line(payload(project, usage=None)) == (
        "ctx n/a (no usage yet) · compact at 67% · claude-code/coding"
    )


def test_null_usage_falls_back_to_the_transcript(project: Path) -> None:
    after_compact = str(TRANSCRIPTS / "claude_compact_end.jsonl")
    assert line(payload(project, usage=None, transcript=after_compact)) == (
        "ctx n/a (just compacted) · compact at 67% · claude-code/coding"
    )
    measured = str(TRANSCRIPTS / "claude_session.jsonl")
    assert line(payload(project, usage=None, transcript=measured)) == (
        "ctx 10% 19k/180k · compact at 67% · continue · claude-code/coding"
    )
    missing = str(project / "not-written-yet.jsonl")
    assert line(payload(project, usage=None, transcript=missing)).startswith("ctx n/a")
    assert log_lines() == []


def test_used_percentage_when_usage_is_null(project: Path) -> None:
    assert line(payload(project, usage=None, percent=42.5)).startswith("ctx 47% 85k/180k · ")


def test_no_window_in_the_input_takes_the_policy_window_for_the_model(project: Path) -> None:
    assert line(payload(project, window=None)) == (
        "ctx 46% 82k/180k · compact at 67% · continue · claude-code/coding"
    )


def test_no_window_known_at_all(tmp_path: Path) -> None:
    team = tmp_path / "team.yaml"
    team.write_text(
        "version: 1\nname: team\nextends: default\n"
        "profiles:\n  coding: {soft_compact: 60%, hard_handoff: 75%}\n"
    )
    data = payload(tmp_path, window=None, model=None)
    assert line(data, "--policy", str(team)) == "ctx 82k · no window known · team/coding"


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"context_window": None, "model": "x", "workspace": []},
        {"context_window": {"current_usage": {"input_tokens": "many"}}},
        {
            "context_window": {
                "current_usage": {"input_tokens": -5, "cache_read_input_tokens": True}
            }
        },
    ],
)
def test_missing_or_odd_fields(data: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir("/")
    assert line(data) == "ctx n/a (no usage yet) · no window known · claude-code/coding"


# -- never a visible failure ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "logged"),
    [
        (b"not json", "stdin: not JSON at line 1 col 1"),
        (b"", "stdin: empty (expected Claude Code's status-line JSON)"),
        (b"[1, 2]", "stdin: expected a JSON object, got list"),
        (b'{"a": "\xff"}', "stdin: not JSON"),
        (b"[" * 100_000, "stdin: not JSON (nested too deep)"),  # was an "internal error"
        (b" " * (sl.STDIN_LIMIT + 1), f"stdin: more than {sl.STDIN_LIMIT} bytes"),
    ],
)
def test_garbage_on_stdin(raw: bytes, logged: str) -> None:
    assert line(raw) == "clm-policy: ?"
    assert log_lines() == [logged]


def test_a_broken_configuration_shows_the_context_alone(project: Path) -> None:
    (project / ".clm-policy.yaml").write_text("version: 1\npolcy: claude-code\n")
    assert (
        line(payload(project))
        == "ctx 46% 82k/180k · clm-policy: .clm-policy.yaml:2 invalid (see log)"
    )
    assert log_lines() == [
        f"{project}/.clm-policy.yaml:2:1: unknown key 'polcy'; did you mean 'policy'? "
        "(known: version, policy, profile, memory, remote, memory.backend)"
    ]


def test_an_unknown_profile_or_policy(project: Path) -> None:
    assert line(payload(project), "--profile", "codng") == (
        "ctx 46% 82k/180k · clm-policy: unknown profile 'codng'"
    )
    assert line(payload(project), "--policy", "nope") == (
        "ctx 46% 82k/180k · clm-policy: no bundled policy named 'nope'"
    )
    first, second = log_lines()
    assert first.startswith("clm-policy: unknown profile 'codng'; did you mean 'coding'?")
    assert second.startswith("clm-policy: no bundled policy named 'nope'")


def test_a_broken_policy_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: 1\nname: bad\nrules: [\n")
    assert line(payload(tmp_path), "-p", str(bad)) == (
        "ctx 46% 82k/180k · clm-policy: bad.yaml:4 invalid (see log)"
    )
    assert log_lines()[0].startswith(f"{bad}:")


def test_arguments_the_status_line_does_not_know() -> None:
    assert sl.fast_main(["--verbose"], None) == "clm-policy: ?"
    assert sl.fast_main(["--policy"], None) == "clm-policy: ?"
    assert log_lines() == [
        "statusline: unexpected argument '--verbose'",
        "statusline: --policy needs a value",
    ]
    assert sl.fast_main(["--help"], None) is None  # click answers it


def test_the_log_is_bounded() -> None:
    for _ in range(2 * sl.LOG_LIMIT // 40 + 10):
        sl.log_problem("x" * 40)
    path = Path(logfile.log_path(sl.LOG_NAME))
    assert path.stat().st_size <= sl.LOG_LIMIT + 100
    assert Path(f"{path}.1").stat().st_size > sl.LOG_LIMIT
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


# -- the digest ------------------------------------------------------------------------------


def test_a_miss_writes_a_private_digest_and_a_hit_reads_only_it(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = "ctx 46% 82k/180k · compact at 67% · continue · claude-code/coding"
    assert line(payload(project)) == expected
    (entry,) = digests()
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
    assert stat.S_IMODE(entry.parent.stat().st_mode) == 0o700
    data = json.loads(entry.read_text())
    assert {k: data[k] for k in ("policy", "profile", "window", "soft", "hard")} == {
        "policy": "claude-code",
        "profile": "coding",
        "window": 200_000,
        "soft": 120_000,
        "hard": 150_000,
    }
    assert [Path(p).name for p, _, _ in data["deps"]] == ["default.yaml", "claude-code.yaml"]

    def no_policy(*_: object) -> None:
        raise AssertionError("a hit must not load the policy")

    monkeypatch.setattr(sl, "_miss", no_policy)
    assert line(payload(project, usage=usage_of(130_000))) == (
        "ctx 72% 130k/180k · handoff at 83% · compact · claude-code/coding"
    )
    assert log_lines() == []


def test_an_edit_to_the_configuration_or_the_policy_is_a_miss(project: Path) -> None:
    team = project / "team.yaml"
    team.write_text("version: 1\nname: team\nextends: claude-code\n")
    conf = project / ".clm-policy.yaml"
    conf.write_text("version: 1\npolicy: team.yaml\nprofile: coding\n")
    assert line(payload(project)).endswith("compact at 67% · continue · team/coding")
    team.write_text(
        "version: 1\nname: team\nextends: claude-code\n"
        "profiles:\n  coding: {soft_compact: 40%, hard_handoff: 80%}\n"
    )
    assert line(payload(project)).endswith("handoff at 89% · compact · team/coding")
    conf.write_text("version: 1\npolicy: team.yaml\nprofile: research\n")
    assert line(payload(project)).endswith("compact at 72% · continue · team/research")
    assert len(digests()) == 1  # one entry per project, flags and window: rewritten in place


def test_a_digest_that_was_tampered_with_is_read_only_from_a_private_directory(
    project: Path,
) -> None:
    line(payload(project))
    (entry,) = digests()
    data = json.loads(entry.read_text())
    entry.write_text(json.dumps({**data, "profile": "planted", "soft": 1, "hard": 2}))
    assert line(payload(project)).endswith("past handoff at 0% · handoff · claude-code/planted")
    entry.parent.chmod(0o777)  # now anyone could have written it: never read, never written
    expected = "ctx 46% 82k/180k · compact at 67% · continue · claude-code/coding"
    assert line(payload(project)) == expected
    assert json.loads(entry.read_text())["profile"] == "planted"
    entry.parent.chmod(0o700)
    entry.chmod(0o666)  # an entry others may write is not read either
    assert line(payload(project)) == expected


def test_a_digest_of_another_user_is_ignored(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    line(payload(project))
    (entry,) = digests()
    entry.write_text(json.dumps({**json.loads(entry.read_text()), "profile": "planted"}))
    entry.chmod(0o600)
    monkeypatch.setattr(os, "geteuid", lambda: os.getuid() + 1)  # the files are not "ours"
    assert line(payload(project)).endswith("· claude-code/coding")
    assert json.loads(entry.read_text())["profile"] == "planted"  # and not overwritten


@pytest.mark.parametrize(
    "tampered",
    [
        {"soft": "1"},
        {"window": -1},
        {"deps": [["/nonexistent", 1, 2]]},
        {"config": None},
        {"profile": None},
        {"deps": "x"},
    ],
)
def test_a_stale_or_malformed_digest_is_a_miss(project: Path, tampered: dict[str, Any]) -> None:
    line(payload(project))
    (entry,) = digests()
    entry.write_text(json.dumps({**json.loads(entry.read_text()), **tampered}))
    assert line(payload(project)).endswith("compact at 67% · continue · claude-code/coding")


def test_no_cache_means_no_digest(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLM_POLICY_NO_CACHE", "1")
    assert line(payload(project)).endswith("claude-code/coding")
    assert digests() == []


# -- the fast path equals what it speeds up (STYLE 11) ------------------------------------------


def test_the_copies_equal_their_sources() -> None:
    assert sl.MAX_COUNT == MAX_COUNT


def test_the_fast_options_are_the_click_command_options() -> None:
    from clm_policy.cli.main import cli
    from clm_policy.cli.statusline import statusline

    declared = {
        opt: (param.name or "").removesuffix("_ref")
        for param in statusline.params
        for opt in param.opts
    }
    assert declared == sl.OPTIONS
    assert set(sl.HELP) == set(cli.context_settings["help_option_names"])


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"HOME": "/h"}, "/h/.cache/clm-policy"),
        ({"XDG_CACHE_HOME": "/x/cache"}, "/x/cache/clm-policy"),
        ({"CLM_POLICY_CACHE_DIR": "/y/c"}, "/y/c"),
        ({"CLM_POLICY_NO_CACHE": "1", "CLM_POLICY_CACHE_DIR": "/y/c"}, None),
    ],
)
def test_the_cache_directory(
    env: dict[str, str], expected: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The status line's digests live with the compiled policies (one function says where)."""
    for name in ("XDG_CACHE_HOME", "CLM_POLICY_CACHE_DIR", "CLM_POLICY_NO_CACHE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert privatefiles.cache_dir() == expected
    assert sl.cache_dir is privatefiles.cache_dir is cache.cache_dir


@pytest.mark.parametrize("name", ["default", "claude-code"])
@pytest.mark.parametrize("window", [200_000, 1_000_000])
def test_the_thresholds_verdict_is_the_bundled_policies_decision(name: str, window: int) -> None:
    policy = load_policy(name)
    for prof in policy.profiles.values():
        soft = prof.soft_compact.resolve(window)
        hard = prof.hard_handoff.resolve(window)
        assert soft is not None
        assert hard is not None
        digest = sl.Digest(name, prof.name, window, soft, hard)
        for tokens in (0, soft - 1, soft, (soft + hard) // 2, hard - 1, hard, 3 * hard):
            figures = TokenSnapshot(context_tokens=tokens, context_window=window)
            state = SessionState(session_id="s", tokens=figures)
            decided = policy.decide(state, prof.name).action.value
            assert digest.verdict(tokens) == decided, (prof.name, tokens)


@pytest.mark.parametrize(
    ("n", "text"),
    [(0, "0"), (999, "999"), (1000, "1k"), (82_345, "82k"), (999_499, "999k"), (999_500, "1M")],
)
def test_tokens_text(n: int, text: str) -> None:
    assert sl.tokens_text(n) == text
    assert sl.tokens_text(1_500_000) == "1.5M"


# -- the command ------------------------------------------------------------------------------


def test_the_click_command_prints_the_same_line(project: Path) -> None:
    stdin = json.dumps(payload(project))
    result = invoke("statusline", stdin=stdin)
    assert (result.exit_code, result.stdout, result.stderr) == (
        0,
        "ctx 46% 82k/180k · compact at 67% · continue · claude-code/coding\n",
        "",
    )
    assert "Print one status line for Claude Code" in invoke("statusline", "--help").stdout


def test_the_help_names_the_policy_used_when_none_is_configured(tmp_path: Path) -> None:
    """Once the help said "else default"; without a configuration the line is the bundled
    claude-code policy's (docs/claude-code.md)."""
    import re

    shown = " ".join(invoke("statusline", "--help").stdout.split()).replace("- ", "-")
    said = re.search(r"--policy PATH\|NAME .*?\[default: (.+?)\]", shown)
    assert said is not None
    assert said[1].startswith("$CLM_POLICY_POLICY, the project's (.clm-policy.yaml), else ")
    named = said[1].rsplit(" ", 1)[1]
    proc = run_process("statusline", stdin=json.dumps(payload(tmp_path)), cwd=tmp_path)
    assert proc.returncode == 0
    assert proc.stdout.rstrip("\n").rsplit(" · ", 1)[1] == f"{named}/coding"


def test_the_help_s_example_prints_the_line_the_help_shows(tmp_path: Path) -> None:
    # (once the help promised "ctx 41% 82k/200k · compact at 60%", a figure of an older version)
    import re
    import shlex

    shown = invoke("statusline", "--help").stdout
    promised = re.search(r"^\s+(ctx .+)$", shown, re.M)
    example = re.search(r"echo ('.+?') \| clm-policy statusline", shown, re.S)
    assert promised is not None
    assert example is not None
    stdin = shlex.split(" ".join(example[1].split()))[0]
    proc = run_process("statusline", stdin=stdin, cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (0, promised[1] + "\n")


def test_as_a_process(project: Path) -> None:
    stdin = json.dumps(payload(project, usage=usage_of(130_000)))
    for _ in range(2):  # a miss, then a hit
        proc = run_process("statusline", stdin=stdin, cwd=project)
        assert (proc.returncode, proc.stdout, proc.stderr) == (
            0,
            "ctx 72% 130k/180k · handoff at 83% · compact · claude-code/coding\n",
            "",
        )
    proc = run_process("statusline", "--bogus", stdin="{", cwd=project)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "clm-policy: ?\n", "")
    proc = run_process("statusline", stdin="garbage", cwd=project)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "clm-policy: ?\n", "")
    proc = run_process("statusline", "--help", cwd=project)
    assert proc.returncode == 0
    assert "Usage: clm-policy statusline [OPTIONS]" in proc.stdout


def test_a_missing_policy_says_so_in_the_footer(project: Path) -> None:
    """`statusline -p missing.yaml` printed a bare `clm-policy: ?`: the footer now says what
    is wrong in a few words, and the status line still exits 0 (it never breaks the footer)."""
    stdin = json.dumps(payload(project))
    for args, said in (
        (("-p", "missing.yaml"), "policy missing.yaml not found"),
        (("-p", "my policies/team.yaml"), "policy team.yaml not found"),
        (("--profile", "codng"), "unknown profile 'codng'"),
    ):
        proc = run_process("statusline", *args, stdin=stdin, cwd=project)
        assert (proc.returncode, proc.stdout, proc.stderr) == (
            0,
            f"ctx 46% 82k/180k · clm-policy: {said}\n",
            "",
        ), args
        assert len(proc.stdout) < 80  # a footer's few words; the log has the whole message


@pytest.fixture
def warm(project: Path) -> str:
    """A status-line input whose digest is written (by a first run)."""
    stdin = json.dumps(payload(project))
    run_process("statusline", stdin=stdin, cwd=project)
    return stdin


def test_a_hit_imports_neither_click_nor_the_policy_engine(project: Path, warm: str) -> None:
    done = probe_cli("statusline", ["statusline"], stdin=warm, cwd=project)
    assert (done.stdout, done.loaded) == (
        "ctx 46% 82k/180k · compact at 67% · continue · claude-code/coding\n",
        [],
    )
