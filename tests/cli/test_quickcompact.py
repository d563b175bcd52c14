"""``compact --state`` without click (clm_policy.cli.fast.compact) is the click command, only
quicker.

Its option table is the click command's; on every command line it answers it prints what
click prints and commits what click commits; what it does not take on it hands back before
anything is written; an error is told in click's words; as a process it imports neither click
nor pydantic.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from clm_policy.cli.fast import compact as quick
from clm_policy.cli.pipelines import compact
from clm_policy.memory.init import init_memory
from clm_policy.policy.cache import load_policy_cached

from conftest import click_option_table, git, invoke, run_process, state_file
from probes import probe_cli

# click's options that only click's path takes (the quick path declines them)
CLICK_ONLY = {"session", "transcript", "transcript_format", "help"}


def test_the_option_table_is_the_click_commands() -> None:
    table, defaults = click_option_table(compact, CLICK_ONLY)
    # the flags alone: both paths then find the value (clm_policy.config.project)
    defaults.update(memory=None, policy_ref=None)
    assert table == quick.OPTIONS
    assert defaults == quick.DEFAULTS


def same_text(text: str) -> str:
    """``text`` without what differs between two repositories: commit and blob ids, the time
    (a second may pass between the two)."""
    text = re.sub(r"\b[0-9a-f]{40}\b|\b[0-9a-f]{12}\b", "<commit>", text)
    text = re.sub(r"(?m)^index [0-9a-f]+\.\.[0-9a-f]+", "index <blobs>", text)
    text = re.sub(r"\d{8}T\d{6}Z", "<now>", text)  # a manifest's name
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "<now>", text)


def committed(memory: Path) -> str:
    """What the last commit says and holds."""
    return same_text(git(memory, "show", "--format=%B", "HEAD"))


def both(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> tuple[tuple[int | None, str, str, str], tuple[int, str, str, str]]:
    """``compact ARGS`` (``{mem}`` standing for a new memory repository) by the quick path and
    by click, each in a repository of its own: exit code, output, errors, the commit."""
    results = []
    for side in ("quick", "click"):
        memory = init_memory(tmp_path / side).path
        given = [a.replace("{mem}", str(memory)) for a in args]
        if side == "quick":
            capsys.readouterr()
            code = quick.answer(given)
            out, err = capsys.readouterr()
        else:
            done = invoke("compact", *given)
            code, out, err = done.exit_code, done.stdout, done.stderr
        results.append((code, same_text(out.replace(str(memory), "{mem}")), err, committed(memory)))
    return results[0], results[1]


def test_it_prints_and_commits_what_click_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    messages = [{"role": "user", "content": f"step {i}: fixed test_{i}"} for i in range(12)]
    path = state_file(tmp_path, messages=messages, constraints=["keep the API"])
    windowed = tmp_path / "windowed.json"
    data = json.loads(path.read_text())
    windowed.write_text(json.dumps({**data, "tokens": {"context_tokens": 1, "context_window": 9}}))
    for args in [
        ["--memory", "{mem}", "--state", str(path)],
        ["-m", "{mem}", "-s", str(path), "--format", "json"],
        ["--memory={mem}", f"--state={path}", "--format=json"],
        ["-m{mem}", f"-s{path}", "--profile", "research", "--policy", "default"],
        ["-m", "{mem}", "-s", str(windowed), "-p", "claude-code"],
        ["-m", "{mem}", "-s", str(path), "--summarizer", "deterministic"],
    ]:
        fast, slow = both(tmp_path / str(len(list(tmp_path.iterdir()))), capsys, args)
        assert fast == slow
        assert fast[0] == 0, fast
        assert "clm(compact): s1 step 3" in fast[3]


@pytest.mark.parametrize(
    ("messages", "said"), [(1, "1 recent message kept"), (0, "0 recent messages kept")]
)
def test_the_messages_kept_are_counted_in_words(tmp_path: Path, messages: int, said: str) -> None:
    memory = init_memory(tmp_path / "mem").path
    path = state_file(tmp_path, messages=[{"role": "user", "content": "hi"}] * messages)
    done = invoke("compact", "-m", str(memory), "-s", str(path))
    assert done.exit_code == 0, done.stderr
    assert done.stdout.splitlines()[2].endswith(f"tokens (estimated), {said}")


def test_a_compaction_under_min_recall_hands_off_alike(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from clm_policy.lifecycle.compaction import DeterministicSummarizer

    # a summary that keeps nothing: the compaction's recall is under min_recall (0.9)
    monkeypatch.setattr(DeterministicSummarizer, "summarize", lambda self, state: "nothing")
    path = state_file(tmp_path, decisions=["use bearer tokens"], verified=["login works"])
    fast, slow = both(tmp_path / "run", capsys, ["-m", "{mem}", "-s", str(path), "-p", "default"])
    assert fast == slow
    assert "handed off instead (verify_failed)" in fast[1]


@pytest.mark.parametrize(
    "args",
    [
        ["--memory", "m", "--session", "s1"],
        ["--memory", "m", "--transcript", "t.jsonl"],
        ["--memory", "m", "--state", "s.json", "--session", "s1"],
        ["--memory", "m", "--state", "s.json", "--help"],
        ["--memory", "m", "--state", "s.json", "--format", "yaml"],
        ["--memory", "m", "--state", "s.json", "--summarizer", "mine"],
        ["--memory", "m", "--state"],
        ["--memory", "m"],
        ["--state", "s.json", "extra"],
    ],
)
def test_what_it_does_not_answer_click_does(tmp_path: Path, args: list[str]) -> None:
    assert quick.answer(args) is None
    assert not (tmp_path / "m").exists()


def test_settings_it_cannot_read_go_to_click(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".clm-policy.yaml").write_text("version: 1\npolicy: missing.yaml\n")
    path = state_file(tmp_path)
    assert quick.answer(["-m", "mem", "-s", str(path)]) is None
    assert capsys.readouterr() == ("", "")
    slow = invoke("compact", "-m", "mem", "-s", str(path))
    assert slow.exit_code == 2


def test_the_memory_comes_from_where_click_finds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The flag, then $CLM_POLICY_MEMORY taken as the flag (click does not expand `~` in it),
    then the project's file."""
    monkeypatch.chdir(tmp_path)
    path = state_file(tmp_path)
    home = Path.home()
    init_memory(home / "mem")
    monkeypatch.setenv("CLM_POLICY_MEMORY", "~/mem")
    assert quick.answer(["-s", str(path)]) == 2  # no repository at ./~/mem, as with click
    fast = capsys.readouterr()
    slow = invoke("compact", "-s", str(path))
    assert (slow.exit_code, slow.stdout, slow.stderr) == (2, fast.out, fast.err)
    assert "~/mem" in fast.err
    monkeypatch.setenv("CLM_POLICY_MEMORY", str(home / "mem"))
    assert quick.answer(["-s", str(path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["session"] == "s1"


def test_an_error_is_told_in_click_s_words(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"session_id": "s1", "step_index": "3"}')
    memory = init_memory(tmp_path / "mem").path
    for args in [
        ["-m", str(memory), "-s", str(bad)],
        ["-m", str(memory), "-s", str(bad), "--format", "json"],
        ["-m", str(tmp_path / "nowhere"), "-s", str(bad)],
        ["-m", str(memory), "-s", str(tmp_path / "missing.json")],
        ["-m", str(memory), "-s", str(state_file(tmp_path)), "--profile", "nope"],
    ]:
        code = quick.answer(args)
        fast = capsys.readouterr()
        slow = invoke("compact", *args)
        assert (code, fast.out, fast.err) == (slow.exit_code, slow.stdout, slow.stderr)
        assert code == 2
    assert git(memory, "rev-list", "--count", "HEAD").strip() == "1"  # nothing committed


def test_as_a_process_it_imports_neither_click_nor_pydantic(tmp_path: Path) -> None:
    memory = init_memory(tmp_path / "mem").path
    path = state_file(tmp_path, messages=[{"role": "user", "content": "go"}])
    args = ["compact", "--memory", str(memory), "--state", str(path)]
    load_policy_cached("default")  # a compiled policy in the cache, as after any earlier call
    done = probe_cli("compact", args, cwd=tmp_path)
    assert (done.code, done.stderr, done.loaded) == (0, "", [])
    assert "clm_policy.policy.compile" not in done.new
    assert done.stdout.startswith("compacted session s1 at step 3 (manual): commit ")
    again = run_process(*args, cwd=tmp_path)  # the same position again: nothing new
    assert again.returncode == 0
    assert again.stdout.startswith("session s1 at step 3 (400000 tokens) is compacted already")


def test_a_persisted_session_at_its_compactions_step_is_compacted_already(tmp_path: Path) -> None:
    """``compact --session S`` right after S was compacted read the state that compaction left
    (its context the summary's): the position looked new, and a second commit at the same
    step summarized the summary, over the first's compaction file."""
    memory = init_memory(tmp_path / "mem").path
    path = state_file(tmp_path, messages=[{"role": "user", "content": f"m{i}"} for i in range(9)])
    first = invoke("compact", "-m", str(memory), "-s", str(path))
    assert first.exit_code == 0, first.stderr
    head = git(memory, "rev-parse", "HEAD").strip()
    again = invoke("compact", "-m", str(memory), "--session", "s1")
    assert again.exit_code == 0, again.stderr
    assert re.fullmatch(
        rf"session s1 at step 3 \(\d+ tokens\) is compacted already: commit {head[:12]}; "
        r"nothing new to commit\n",
        again.stdout,
    ), again.stdout
    assert git(memory, "rev-parse", "HEAD").strip() == head


def test_one_message_kept_is_said_in_the_singular(tmp_path: Path) -> None:
    """``1 recent message kept`` (it said ``1 recent messages kept``), as a process (the quick
    path) and through click alike."""
    from conftest import run_process

    memory = init_memory(tmp_path / "mem").path
    one = state_file(tmp_path, messages=[{"role": "user", "content": "fix test_a"}])
    done = run_process("compact", "-m", str(memory), "-s", str(one), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "tokens (estimated), 1 recent message kept\n" in done.stdout
    many = state_file(tmp_path, session_id="s2", messages=[{"role": "user", "content": "a"}] * 3)
    clicked = invoke("compact", "-m", str(memory), "-s", str(many))
    assert "tokens (estimated), 3 recent messages kept\n" in clicked.stdout
