"""A remote's URL may hold a token (``https://user:ghp_…@host/repo.git``): a push that fails
names the remote with its credentials masked — in clm-policy's message, in git's own error
output passed on, as text or JSON — and nothing git holds ever saw it. (The hook's log:
tests/agents/test_claude_hooks.py.)"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from clm_policy.memory.git.run import short

from conftest import git, run_process, state_file

TOKEN = "ghp_" + "Zx8Kq2Lm9Nv4Bc7Df1Gh5Jk3Pw6Rt0Ys2Ua4E"
# Nothing listens on port 1: the push fails after the handoff is committed.
REMOTE = f"https://clm-bot:{TOKEN}@127.0.0.1:1/team/memory.git"
SHOWN = "https://***@127.0.0.1:1/team/memory.git"


def everything_under(memory: Path) -> str:
    """Every object git holds (through git: nothing hides in zlib), every reflog, and every
    file in the folder, .git's own (config, FETCH_HEAD, logs) included."""
    parts = [
        subprocess.run(
            ["git", "cat-file", "--batch-all-objects", "--batch"],
            cwd=memory,
            capture_output=True,
            check=True,
        ).stdout.decode("utf-8", "replace"),
        git(memory, "log", "-g", "--all", "--format=%gs %B"),
    ]
    parts += [p.read_bytes().decode("utf-8", "replace") for p in memory.rglob("*") if p.is_file()]
    return "\n".join(parts)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_failed_push_never_shows_the_token(memory: Path, tmp_path: Path, fmt: str) -> None:
    done = run_process(
        "handoff",
        "--memory",
        str(memory),
        "--state",
        str(state_file(tmp_path)),
        "--push",
        REMOTE,
        "--format",
        fmt,
    )
    assert done.returncode == 2
    head = git(memory, "rev-parse", "--short=12", "HEAD").strip()
    message = (
        f"the handoff is committed locally ({head} on main), but pushing it to '{SHOWN}' "
        f"failed: git push {SHOWN} main failed: fatal: unable to access "
        "'https://127.0.0.1:1/team/memory.git/': Failed to connect to 127.0.0.1 port 1"
    )
    if fmt == "json":
        assert json.loads(done.stdout)["error"]["message"].startswith(message)
    else:
        assert done.stderr.startswith(f"clm-policy: {message}")
        assert done.stderr.endswith(f"Push it yourself: git -C {memory} push -- {SHOWN} main\n")
    for part in (TOKEN, TOKEN[:12], TOKEN[-12:]):
        assert part not in done.stdout + done.stderr
        assert part not in everything_under(memory)


def test_git_output_passed_on_is_masked() -> None:
    # what git before 2.33 wrote for a rejected push (it now masks the URL itself)
    said = f"error: failed to push some refs to '{REMOTE}'\n"
    assert short(said) == f"error: failed to push some refs to '{SHOWN}'"
    # masked before the cut: no half of the token is left to be seen
    assert TOKEN[:8] not in short("x" * 280 + said, limit=300)


def test_a_push_to_a_remote_the_repository_lacks_says_so_in_one_sentence(
    memory: Path, tmp_path: Path
) -> None:
    """git's own error ends with a full stop ("... and the repository exists."): the message
    goes on after it without a second one."""
    git(memory, "remote", "add", "origin", str(tmp_path / "gone.git"))
    done = run_process(
        "handoff", "--memory", str(memory), "--state", str(state_file(tmp_path)), "--push", "origin"
    )
    assert done.returncode == 2
    assert "the repository exists. Push it yourself: " in done.stderr, done.stderr
    assert done.stderr.endswith(f"Push it yourself: git -C {memory} push -- origin main\n")
