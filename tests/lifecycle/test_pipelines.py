"""Compaction and handoff pipelines end to end, through the CLI, in a real git repository:
what is committed, the trailers, the manifest's validity, branches, pushes, and secrets that
never reach git."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from clm_policy.models.shapes.manifest import validate_manifest

from conftest import REPO, git, invoke, run_process

SECRETS = {
    "aws": "AKIAZ7Q3X9P2M4N6R8T0",
    "github": "ghp_" + "Zx8Kq2Lm9Nv4Bc7Df1Gh5Jk3Pw6Rt0Ys2Ua4E",
    "github-fine-grained": "github_pat_11ABCDEFG0"
    + "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1eF3hJ5kL7nP9rS1tV3wX5zA7cD9fG1hJ3kL5mN7pQ9rS1tV3",
    "openai": "sk-proj-" + "Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz1Xc3Vb5Nm7Qw9Er1Ty3Ui5Op7",
    "anthropic": "sk-ant-api03-"
    + "Zq8Wx2Ec4Rv6Tb8Yn0Um2Ik4Ol6Pa8Sd0Fg2Hj4Kl6Zq8Wx0Ec2Rv4Tb6Yn8Um0Ik2Ol4Pa6Sd8Fg0Hj2Kl4Zq6Wx8Ec0Rv2Tb4Yn6Um8IkAA",
    "slack": "xoxb-" + "123456789012-1234567890123-Q7rT2mK9vX4pL8nZ3wB6yD1c",
    "gcp": "AIza" + "SyD3f9Kq2Lm8Nv4Bc7Df1Gh5Jk3Pw6Rt0Ys",
    "pem": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAxK8f2qL9mN3vB7cD1fG5hJ3kP6wR0tY2sU4aE8gI0oL1pQ3r\nT5vW7yZ9bC1eF3hJ5kL7nP9rS1tV3wX5zA7cD9fG1hJ3kL5mN7pQ9rS1tV3wX5z\n-----END RSA PRIVATE KEY-----",
    "generic": "password=Xk9mP2vL7qR4nW8tZ3",
}


def needle_of(kind: str, secret: str) -> str:
    """The part of a secret that must never appear in git."""
    if kind == "pem":
        return secret.splitlines()[1]
    return secret.split("=", 1)[1] if kind == "generic" else secret


def secret_state(session: str = "sec-1") -> dict[str, Any]:
    s = SECRETS
    return {
        "session_id": session,
        "goal": f"Rotate the deploy keys ({s['aws']}, {s['github']})",
        "step_index": 12,
        "tokens": {"context_tokens": 400000},
        "messages": [
            {"role": "user", "content": f"here is the key: {s['openai']}"},
            {"role": "assistant", "content": f"Using ANTHROPIC_API_KEY={s['anthropic']}"},
            {"role": "tool", "content": s["pem"]},
            {"role": "user", "content": f"db {s['generic']}"},
        ],
        "commands_and_results": [
            f"curl -H 'Authorization: Bearer {s['github-fine-grained']}' https://api.example.com: 200",
            f"gcloud --key {s['gcp']}: ok",
        ],
        "blockers": [f"slack bot {s['slack']} is rate limited"],
    }


def write_state(tmp_path: Path, state: dict[str, Any], name: str = "state.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(state))
    return path


def trailers(repo: Path, rev: str = "HEAD") -> dict[str, str]:
    out = git(repo, "log", "-1", "--format=%(trailers:only,unfold)", rev)
    return dict(line.split(": ", 1) for line in out.splitlines() if line)


def test_compact_commits_summary_and_smaller_state(memory: Path, tmp_path: Path) -> None:
    state = {
        "session_id": "s1",
        "goal": "ship it",
        "step_index": 9,
        "tokens": {"context_tokens": 260000},
        "messages": [{"role": "user", "content": f"message {i}"} for i in range(10)],
    }
    result = invoke(
        "compact",
        "--memory",
        str(memory),
        "--state",
        str(write_state(tmp_path, state)),
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert (out["rule"], out["path"], out["messages_kept"]) == (
        "soft_compact",
        "sessions/s1/compactions/000009.md",
        6,
    )
    assert out["context_after"] < out["context_before"] == 260000
    assert trailers(memory) == {
        "Clm-Event": "compact",
        "Clm-Session": "s1",
        "Clm-Step": "9",
        "Clm-Rule": "soft_compact",
        "Clm-Context-Tokens": "260000",
        "Clm-Policy": trailers(memory)["Clm-Policy"],
        "Clm-Summary-Kept": "1.00 (1/1)",
        "Clm-Summarizer": "deterministic",
        "Clm-Redactions": "0",
    }
    assert trailers(memory)["Clm-Policy"].startswith("<bundled>/default.yaml@")
    assert git(memory, "log", "-1", "--format=%s") == "clm(compact): s1 step 9, soft_compact\n"
    saved = json.loads(git(memory, "show", "HEAD:sessions/s1/state.json"))
    assert [m["content"] for m in saved["messages"][1:]] == [f"message {i}" for i in range(4, 10)]
    assert (saved["last_compact_step"], saved["compact_count"]) == (9, 1)
    assert "message 0" not in git(memory, "show", "HEAD:sessions/s1/compactions/000009.md")


def test_handoff_manifest_is_valid_and_seed_has_no_transcript(memory: Path, tmp_path: Path) -> None:
    state = {
        "session_id": "s2",
        "goal": "migrate the database",
        "step_index": 30,
        "tokens": {"context_tokens": 360000},
        "verified": ["schema applied"],
        "not_verified": ["rollback"],
        "messages": [{"role": "user", "content": "TRANSCRIPT-LINE-123 do the thing"}],
    }
    result = invoke(
        "handoff",
        "--memory",
        str(memory),
        "--state",
        str(write_state(tmp_path, state)),
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["rule"] == "hard_handoff"
    manifest = json.loads(git(memory, "show", f"HEAD:{out['manifest_path']}"))
    assert validate_manifest(manifest).goal == "migrate the database"
    assert manifest["decision_rationale"] == "context 360000 >= hard limit 350000"
    assert manifest["next_safe_action"] == "Verify: rollback"
    assert trailers(memory)["Clm-Manifest"] == out["manifest_path"]
    seed = json.dumps(out["seed"])
    assert "TRANSCRIPT-LINE-123" not in seed
    assert "migrate the database" in seed
    assert "Verify: rollback" in seed
    saved = json.loads(git(memory, "show", "HEAD:sessions/s2/state.json"))
    assert (saved["goal"], saved["messages"]) == ("migrate the database", [])
    md = git(memory, "show", f"HEAD:{out['handoff_path']}")
    assert out["handoff_path"] == "sessions/s2/handoffs/001.md"
    assert "migrate the database" in md
    later = write_state(tmp_path, {**state, "step_index": 31})  # a step later: a new handoff
    again = json.loads(
        invoke("handoff", "--memory", str(memory), "--state", str(later), "--format", "json").stdout
    )
    assert again["handoff_path"] == "sessions/s2/handoffs/002.md"
    assert again["manifest_path"] != out["manifest_path"]


def test_manual_handoff_records_what_the_policy_said(memory: Path, tmp_path: Path) -> None:
    state = {"session_id": "s3", "goal": "g", "tokens": {"context_tokens": 1000}}
    result = invoke(
        "handoff",
        "--memory",
        str(memory),
        "--state",
        str(write_state(tmp_path, state)),
        "--format",
        "json",
    )
    out = json.loads(result.stdout)
    assert out["rule"] == "manual"
    assert out["manifest"]["decision_rationale"] == (
        "handoff requested by hand; the policy says continue (no rule held; otherwise continue)"
    )


def test_a_remote_the_repository_does_not_name_is_refused_before_the_commit(
    memory: Path, tmp_path: Path
) -> None:
    head = git(memory, "rev-parse", "HEAD")
    state = write_state(tmp_path, {"session_id": "s5", "tokens": {"context_tokens": 999999}})
    proc = run_process("handoff", "--memory", str(memory), "--state", str(state), "--push", "orgin")
    assert proc.returncode == 2
    assert f"no remote named 'orgin' (git -C {memory} remote -v lists them)" in proc.stderr
    assert "nothing was committed" in proc.stderr
    assert git(memory, "rev-parse", "HEAD") == head
    assert git(memory, "branch", "--list", "clm/*") == ""


def test_a_push_that_rebased_reports_the_commit_the_remote_has(
    memory: Path, tmp_path: Path
) -> None:
    """Two clones hand off at once: the second push is rebased onto the first, so the commit
    it reports is the rebased one, the remote's tip, not the one it made before."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(memory), str(bare))
    clones = []
    for name in ("a", "b"):
        git(tmp_path, "clone", "-q", "-b", "main", str(bare), name)
        clones.append(tmp_path / name)
    outcomes = []
    for clone, session in zip(clones, ("sx", "sy"), strict=True):
        state = write_state(tmp_path, {"session_id": session, "tokens": {"context_tokens": 999999}})
        proc = run_process(
            "handoff",
            "--memory",
            str(clone),
            "--state",
            str(state),
            "--push",
            "origin",
            "--format",
            "json",
        )
        assert proc.returncode == 0, proc.stderr
        outcomes.append(json.loads(proc.stdout))
    assert outcomes[1]["push_attempts"] == 2
    tip = git(bare, "rev-parse", "main").strip()
    assert outcomes[1]["commit"] == tip == git(clones[1], "rev-parse", "HEAD").strip()


def _two_clones_hand_off(memory: Path, tmp_path: Path, *branch: str) -> list[Any]:
    """Two clones of one remote, both cloned before either hands off, hand off the same
    session (differently, however fast they run) and push: their two processes' results."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(memory), str(bare))
    for name in ("a", "b"):
        git(tmp_path, "clone", "-q", "-b", "main", str(bare), name)
    results = []
    for name in ("a", "b"):
        given = {"session_id": "sz", "goal": name, "tokens": {"context_tokens": 999999}}
        state = write_state(tmp_path, given, f"state-{name}.json")
        args = ("handoff", "--memory", str(tmp_path / name), "--state", str(state), *branch)
        results.append(run_process(*args, "--push", "origin"))
    assert results[0].returncode == 0, results[0].stderr
    return results


def test_a_push_the_rebase_cannot_bring_up_to_date_says_what_to_do_instead(
    memory: Path, tmp_path: Path
) -> None:
    """The second push cannot be rebased (both clones wrote the session's state): the message
    says so without git's hints about a rebase that was undone, and names a command that works
    instead of a push that would be rejected again."""
    second = _two_clones_hand_off(memory, tmp_path)[1]
    assert second.returncode == 2
    err = second.stderr
    assert "hint:" not in err
    assert "rebase --continue" not in err
    root = tmp_path / "b"
    assert "push main: rebasing onto origin/main conflicts (CONFLICT (add/add)" in err
    assert "the rebase was undone. Bring it up to date first (git -C " in err
    assert err.endswith(f"then push it: git -C {root} push -- origin main\n")
    assert git(root, "status", "--porcelain") == ""


def test_a_handoff_branch_takes_a_number_the_remote_does_not_hold(
    memory: Path, tmp_path: Path
) -> None:
    """On a branch of its own, the second clone's handoff takes the next number the remote
    has not given out (it took the same one, and its push was rejected): both branches reach
    the remote, with handoff files that do not meet when both are merged."""
    second = _two_clones_hand_off(memory, tmp_path, "--branch")[1]
    assert second.returncode == 0, second.stderr
    assert "on clm/handoff/sz-2" in second.stdout
    bare = tmp_path / "remote.git"
    names = git(bare, "for-each-ref", "--format=%(refname:short)", "refs/heads/clm/handoff")
    assert names.split() == ["clm/handoff/sz-1", "clm/handoff/sz-2"]
    files = git(bare, "ls-tree", "-r", "--name-only", "clm/handoff/sz-2", "sessions/sz/handoffs")
    assert files.split() == ["sessions/sz/handoffs/002.md"]


def test_handoff_on_a_branch_and_pushed(memory: Path, tmp_path: Path) -> None:
    bare = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(memory), str(bare))
    git(memory, "remote", "add", "origin", str(bare))
    head = git(memory, "rev-parse", "HEAD")
    state = {"session_id": "s4", "goal": "review me", "tokens": {"context_tokens": 999999}}
    proc = run_process(
        "handoff",
        "--memory",
        str(memory),
        "--state",
        str(write_state(tmp_path, state)),
        "--branch",
        "--push",
        "origin",
    )
    assert proc.returncode == 0, proc.stderr
    assert "on clm/handoff/s4-1" in proc.stdout
    assert "pushed to origin (1 attempt)" in proc.stdout
    assert git(memory, "rev-parse", "HEAD") == head  # the checked-out branch did not move
    assert git(bare, "log", "-1", "--format=%s", "clm/handoff/s4-1") == (
        "clm(handoff): s4 step 0, hard_handoff\n"
    )
    assert git(memory, "status", "--porcelain") == ""
    listed = invoke(
        "log", "--memory", str(memory), "--all", "--event", "handoff", "--format", "json"
    )
    assert [e["session"] for e in json.loads(listed.stdout)] == ["s4"]
    shown = invoke("show", "--memory", str(memory), "clm/handoff/s4-1")
    assert shown.exit_code == 0
    assert "review me" in shown.stdout


def _everywhere(field: str) -> dict[str, Any]:
    """A state with every secret kind in one place: the goal, a message, a command, a blocker."""
    text = " and ".join(SECRETS.values())
    state: dict[str, Any] = {
        "session_id": f"sec-{field}",
        "goal": "rotate keys",
        "step_index": 3,
        "tokens": {"context_tokens": 400000},
    }
    if field == "goal":
        state["goal"] = f"rotate {text}"
    elif field == "messages":
        state["messages"] = [{"role": "user", "content": text}]
    else:
        state[field] = [text]
    return state


@pytest.mark.parametrize("field", ["goal", "messages", "commands_and_results", "blockers"])
def test_secrets_never_reach_git(memory: Path, tmp_path: Path, field: str) -> None:
    path = write_state(tmp_path, _everywhere(field))
    counted = []
    for args in (["compact"], ["handoff"], ["handoff", "--branch"]):
        result = invoke(*args, "--memory", str(memory), "--state", str(path), "--format", "json")
        assert result.exit_code == 0, result.stderr
        counted.append(json.loads(result.stdout)["redactions"])
    # a compaction keeps recent messages, so it always meets them; a handoff keeps no messages
    assert counted[0] >= len(SECRETS)
    if field == "messages":
        assert counted[1:] == [0, 0]
    else:
        assert min(counted[1:]) >= len(SECRETS)
    history = git(memory, "log", "-p", "--all", "--format=%B")
    files = "".join(
        p.read_text() for p in memory.rglob("*") if p.is_file() and ".git" not in p.parts
    )
    for kind, secret in SECRETS.items():
        needle = needle_of(kind, secret)
        assert needle not in history, kind
        assert needle not in files, kind
    assert "[REDACTED:" in history


def test_secrets_spread_over_a_session_never_reach_git(memory: Path, tmp_path: Path) -> None:
    path = write_state(tmp_path, secret_state())
    for args in (["compact"], ["handoff"], ["handoff", "--branch"]):
        result = invoke(*args, "--memory", str(memory), "--state", str(path), "--format", "json")
        assert result.exit_code == 0, result.stderr
    history = git(memory, "log", "-p", "--all", "--format=%B")
    for kind, secret in SECRETS.items():
        needle = needle_of(kind, secret)
        assert needle not in history, kind
    # the count is of distinct secrets in what each commit holds: a compaction keeps all four
    # messages; a handoff keeps the last assistant message only, as context
    assert trailers(memory, "HEAD~1")["Clm-Event"] == "compact"
    assert int(trailers(memory, "HEAD~1")["Clm-Redactions"]) == len(SECRETS)
    for rev in ("HEAD", "clm/handoff/sec-1-2"):
        # goal 2, commands 2, the blocker, the last message
        assert int(trailers(memory, rev)["Clm-Redactions"]) == 6


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ('{"session_id": "s", "step_index": "x"}', "step_index: expected an integer"),
        ('{"session_id": "../escape"}', "invalid session id '../escape'"),
        ('{"session_id": "s", "signals": {"nope": 1}}', "signal 'nope' is not declared"),
    ],
)
def test_bad_input_commits_nothing(memory: Path, tmp_path: Path, state: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(state)
    for verb in ("compact", "handoff"):
        result = invoke(verb, "--memory", str(memory), "--state", str(path))
        assert result.exit_code == 2
        assert message in result.stderr
        assert "Traceback" not in result.stderr
    assert git(memory, "rev-list", "--count", "--all").strip() == "1"
    assert git(memory, "status", "--porcelain") == ""


def test_not_a_memory_repo(tmp_path: Path) -> None:
    path = write_state(tmp_path, {"session_id": "s"})
    result = invoke("compact", "--memory", str(tmp_path), "--state", str(path))
    assert result.exit_code == 2
    assert "not a clm-policy memory repository" in result.stderr


def test_readme_memory_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    text = (REPO / "README.md").read_text()
    block = text.split("## Memory: compactions and handoffs as git commits", 1)[1]
    commands = re.findall(r"^\$ clm-policy (.*)$", block.split("```", 2)[1], flags=re.M)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docs" / "examples").mkdir(parents=True)
    (tmp_path / "docs" / "examples" / "session-state.json").write_text(
        (REPO / "docs" / "examples" / "session-state.json").read_text()
    )
    for command in commands:
        result = invoke(*command.split())
        assert result.exit_code == 0, (command, result.stderr)
    assert "clm(handoff): auth-refactor-7 step 42" in result.stdout


def test_two_branch_handoffs_in_one_second_keep_both_manifests(memory: Path) -> None:
    """Each branch is its own pull request: merging both must not clash on one manifest."""
    from datetime import UTC, datetime

    from clm_policy.lifecycle.pipelines import run_handoff
    from clm_policy.memory.git.write import MemoryRepo
    from clm_policy.models.state import SessionState

    now = datetime(2026, 8, 4, 12, 0, tzinfo=UTC)
    state = SessionState(session_id="s1", goal="ship it", step_index=3)
    with MemoryRepo(memory) as repo:
        first = run_handoff(repo, state, branch=True, now=now)
        later = SessionState(session_id="s1", goal="ship it", step_index=4)  # (a step on)
        second = run_handoff(repo, later, branch=True, now=now)
    assert first.manifest_path == "manifests/20260804T120000Z_s1.json"
    assert second.manifest_path == "manifests/20260804T120000Z_s1-2.json"
    assert git(memory, "show", f"{second.ref}:{second.manifest_path}")


def test_the_printed_seed_shows_markers_as_committed_without_the_redactors_tags(
    memory: Path, tmp_path: Path
) -> None:
    """The seed a handoff answers with (``--format json``; the MCP tool's answer) is the text
    the next session gets: ``[REDACTED:rule]``, never the redactor's private-use tags."""
    result = invoke(
        "handoff",
        "--memory",
        str(memory),
        "--state",
        str(write_state(tmp_path, secret_state())),
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.stderr
    seed = json.loads(result.stdout)["seed"][0]["content"]
    assert (
        "**Goal:** Rotate the deploy keys ([REDACTED:aws-access-key-id], [REDACTED:github-pat])"
        in seed
    )
    assert not any("\ue000" <= c <= "\uf8ff" for c in seed)


def _waits_at_the_lock(proc: subprocess.Popen[str], lock: Path) -> bool:
    """Whether ``proc`` has opened the memory repository's write lock (it waits there while
    another process holds it); False once it has ended."""
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        with contextlib.suppress(OSError):  # (a descriptor closed while it was looked at)
            fds = Path(f"/proc/{proc.pid}/fd")
            if any(os.readlink(fd) == str(lock) for fd in fds.iterdir()):
                return True
        time.sleep(0.01)
    return False


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads /proc")
def test_two_handoffs_of_a_session_at_once_keep_both(memory: Path, tmp_path: Path) -> None:
    """Two handoffs of one session waiting for the write lock together: each commits its own
    numbered files (the number was once chosen before the lock, and the later handoff wrote
    over the earlier's file and manifest)."""
    import fcntl

    for step, who in enumerate(("alpha", "beta"), 3):  # steps apart: neither is a repeat
        data = {"session_id": "s1", "goal": "ship it", "step_index": step}
        (tmp_path / f"{who}.json").write_text(json.dumps(data))
    lock = memory / ".git" / "clm-write.lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    procs = []
    try:
        for who in ("alpha", "beta"):
            (tmp_path / f"{who}.md").write_text(f"Goal: the reply of {who}\n")
            args = ["handoff", "-m", str(memory), "-s", f"{who}.json", "--reply", f"{who}.md"]
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "clm_policy", *args],
                    cwd=tmp_path,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
            assert _waits_at_the_lock(procs[-1], lock)
    finally:
        os.close(fd)
        outputs = [proc.communicate(timeout=60) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], outputs
    listed = git(memory, "ls-tree", "-r", "--name-only", "HEAD", "--", "sessions/s1/handoffs")
    assert listed.split() == ["sessions/s1/handoffs/001.md", "sessions/s1/handoffs/002.md"]
    manifests = git(memory, "ls-tree", "-r", "--name-only", "HEAD", "--", "manifests").split()
    words = {
        json.loads(git(memory, "show", f"HEAD:{m}"))["agent_words"]["text"].strip()
        for m in manifests
        if m.endswith(".json")
    }
    assert words == {"Goal: the reply of alpha", "Goal: the reply of beta"}
