"""Every way into git passes the write path's one redactor, before anything cuts the text.

Each test puts a secret where a side door used to let it through — a message whose summary
line is cut, a signal value, a pending rationale in run.json, a parent session, a token after
a JSON escape or an URL-encoded separator — and then searches everything git holds: every
object in the store (reachable or not), refs, reflogs and the work tree.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from clm_policy.memory.change import SecretIdentifierError
from clm_policy.memory.git.write import MemoryRepo
from clm_policy.memory.store import GitMemoryStore

from conftest import git, invoke, state_file

GITHUB = "ghp_" + "Zx8Kq2Lm9Nv4Bc7Df1Gh5Jk3Pw6Rt0Ys2Ua4E"
OPENAI = "sk-proj-" + "Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz1Xc3Vb5Nm7Qw9Er1Ty3Ui5Op7"
PEM_BODY = [
    "MIIEowIBAAKCAQEAxK8f2qL9mN3vB7cD1fG5hJ3kP6wR0tY2sU4aE8gI0oL1pQ3r",
    "T5vW7yZ9bC1eF3hJ5kL7nP9rS1tV3wX5zA7cD9fG1hJ3kL5mN7pQ9rS1tV3wX5z",
    "bC1eF3hJ5kL7nP9rS1tV3wX5zA7cD9fG1hJ3kL5mN7pQ9rS1tV3wX5zQ9rS1tV3",
]
PEM = "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(PEM_BODY) + "\n-----END RSA PRIVATE KEY-----"


def everything_git_holds(memory: Path) -> str:
    """Every object in the store, every ref and reflog entry, and the work tree."""
    objects = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"],
        cwd=memory,
        capture_output=True,
        check=True,
    ).stdout
    # trees and commits are text enough; blobs are what we wrote (compressed objects are
    # read through git, so nothing hides in zlib)
    parts = [objects.decode("utf-8", "replace")]
    parts.append(git(memory, "for-each-ref", "--format=%(refname) %(subject)"))
    parts.append(git(memory, "log", "-g", "--all", "--format=%gs %B", "-p"))
    parts.append(git(memory, "log", "-p", "--all", "--format=%B"))
    for path in sorted(memory.rglob("*")):
        if path.is_file() and ".git" not in path.relative_to(memory).parts:
            parts.append(path.read_text("utf-8", "replace"))
    return "\n".join(parts)


def assert_nowhere(memory: Path, *needles: str) -> None:
    held = everything_git_holds(memory)
    for needle in needles:
        assert needle not in held, needle
    assert "\ue000" not in held  # no redaction tag survives into git


def test_a_private_key_in_a_message_whose_summary_line_is_cut(memory: Path, tmp_path: Path) -> None:
    # the summary folds the message onto one line and cuts it at 240 characters: the key's
    # lines are no longer a key. It must be gone before that happens.
    message = "Here is the deploy key, keep it safe. " * 3 + "\n" + PEM + "\nThanks!"
    path = state_file(
        tmp_path,
        messages=[
            {"role": "tool", "content": message},
            {"role": "assistant", "content": f"{PEM}\nusing it now"},
        ],
    )
    for verb in ("compact", "handoff"):
        result = invoke(verb, "--memory", str(memory), "--state", str(path), "--format", "json")
        assert result.exit_code == 0, result.stderr
        assert json.loads(result.stdout)["redactions"] == 1  # one distinct key, counted once
    assert_nowhere(memory, *PEM_BODY, *(line[:20] for line in PEM_BODY))
    assert "[REDACTED:private-key]" in git(memory, "show", "HEAD~1")


@pytest.mark.parametrize(
    "text",
    [
        '{"stdout": "line one\\n' + GITHUB + '"}',
        '{"stdout": "col\\t' + GITHUB + '\\r\\n"}',
        "curl 'https://api.example.com/v1?q=a%20" + GITHUB + "'",
        "https://example.com/cb?token%3D" + GITHUB + "&x=1",
        "GET /login?next=%2F&api_key%3D" + OPENAI,
    ],
)
def test_tokens_after_escapes_and_encoded_separators(
    memory: Path, tmp_path: Path, text: str
) -> None:
    path = state_file(
        tmp_path,
        commands_and_results=[text],
        messages=[{"role": "tool", "content": text}],
    )
    for verb in ("compact", "handoff"):
        result = invoke(verb, "--memory", str(memory), "--state", str(path))
        assert result.exit_code == 0, result.stderr
        assert "redacted  1 secret" in result.stdout
    assert_nowhere(memory, GITHUB, OPENAI, GITHUB[4:20], OPENAI[8:24])


SIGNALLING = """\
version: 1
extends: default
confirm: [handoff]
signals:
  note: {type: str, default: ""}
rules:
  - id: phase_boundary
    because: "phase done ({signals.note})"
"""


SCENARIO = f"""\
version: 1
name: leaky
goal: finish the phase
session: leaky
steps:
  - say: "working"
    tokens: 1000
  - say: "phase done"
    tokens: 1000
    signals: {{note: "{GITHUB}"}}
    status: phase_boundary
"""


def test_pending_rationales_in_run_json(tmp_path: Path) -> None:
    # the agent reports a signal holding a token; the policy's rationale quotes it; the run
    # stops for confirmation and records the pending decision in run.json
    policy, scenario = tmp_path / "p.yaml", tmp_path / "leaky.yaml"
    policy.write_text(SIGNALLING)
    scenario.write_text(SCENARIO)
    memory = tmp_path / "mem"
    args = ["--memory", str(memory), "--policy", str(policy), "--scenario", str(scenario)]
    pending = invoke("run", *args)
    assert pending.exit_code == 4, pending.stderr
    run_json = json.loads(git(memory, "show", "HEAD:sessions/leaky/run.json"))
    assert run_json["pending"]["rationale"] == "phase done ([REDACTED:github-pat])"
    assert int(git(memory, "log", "-1", "--format=%(trailers:key=Clm-Redactions,valueonly)")) >= 1
    assert_nowhere(memory, GITHUB, GITHUB[4:20])


def test_signal_values_by_hand(tmp_path: Path) -> None:
    policy = tmp_path / "p.yaml"
    policy.write_text(SIGNALLING)
    memory = tmp_path / "mem"
    first = invoke("run", "--memory", str(memory), "--policy", str(policy), "--max-steps", "3")
    assert first.exit_code == 0, first.stderr
    signalled = invoke(
        "signal", "--memory", str(memory), "--session", "demo", "--phase-done", f"note={GITHUB}"
    )
    assert signalled.exit_code == 0, signalled.stderr
    assert GITHUB not in signalled.stdout
    subject = git(memory, "log", "-1", "--format=%s")
    assert subject == "clm(signal): demo step 3, phase-done, note=[REDACTED:github-pat]\n"
    state = json.loads(git(memory, "show", "HEAD:sessions/demo/state.json"))
    assert state["signals"]["note"] == "[REDACTED:github-pat]"
    assert git(memory, "log", "-1", "--format=%(trailers:key=Clm-Redactions,valueonly)") == "1\n\n"
    assert_nowhere(memory, GITHUB, GITHUB[4:20])


@pytest.mark.parametrize(
    ("fields", "what"),
    [
        ({"session_id": GITHUB}, "session id"),
        ({"parent_session": GITHUB}, "session id"),
        ({"memory_keys": [f"keys/{GITHUB}"]}, "memory key"),
    ],
)
def test_identifiers_that_look_like_secrets_are_refused(
    memory: Path, tmp_path: Path, fields: dict[str, object], what: str
) -> None:
    path = state_file(tmp_path, **fields)
    head = git(memory, "rev-parse", "HEAD")
    for verb in ("compact", "handoff"):
        result = invoke(verb, "--memory", str(memory), "--state", str(path))
        assert result.exit_code == 2, (verb, result.stdout)
        assert f"refusing to commit a {what} that looks like a secret" in result.stderr
        assert GITHUB not in result.stderr
    assert git(memory, "rev-parse", "HEAD") == head
    assert_nowhere(memory, GITHUB)


def test_memory_keys_and_branch_names_are_identifiers(memory: Path) -> None:
    with MemoryRepo(memory) as repo:
        with pytest.raises(SecretIdentifierError, match="memory key"):
            GitMemoryStore(repo).write(GITHUB, "content")
        from clm_policy.memory.trailers import CommitMessage

        with pytest.raises(SecretIdentifierError, match="branch name"):
            repo.commit_to_branch(f"clm/handoff/{GITHUB}", CommitMessage("x"), {"a.md": "x"})
    assert_nowhere(memory, GITHUB)


def test_the_count_is_what_the_commit_holds(memory: Path, tmp_path: Path) -> None:
    # three distinct secrets; one only in an old message a compaction does not keep
    messages = [{"role": "user", "content": f"old: {OPENAI}"}] + [
        {"role": "assistant", "content": f"step {i}"} for i in range(12)
    ]
    path = state_file(
        tmp_path, goal=f"rotate {GITHUB} and {GITHUB}", blockers=[PEM], messages=messages
    )
    compacted = invoke("compact", "--memory", str(memory), "--state", str(path), "--format", "json")
    assert json.loads(compacted.stdout)["redactions"] == 2  # the github token (twice), the key
    handed = invoke("handoff", "--memory", str(memory), "--state", str(path), "--format", "json")
    assert json.loads(handed.stdout)["redactions"] == 2
    assert_nowhere(memory, GITHUB, OPENAI, *PEM_BODY)


def test_a_state_is_cleaned_as_its_data_is() -> None:
    """The compaction cleans the state as the redactor cleans its JSON data: the same
    redacted values, the same secrets counted; a message without text (one the compaction
    does not read) is passed over, having nothing to redact."""
    from clm_policy.memory.change import Change
    from clm_policy.models.state_io import state_from

    state = state_from(
        {
            "session_id": "s1",
            "goal": f"rotate {GITHUB}",
            "signals": {"api_key": "Zq7Lp2Vn8Xc4Bm6Nd1Fg3Hj5Kl9Qw0Er", "note": PEM},
            "blockers": [f"the key {OPENAI} leaked"],
            "messages": [
                {"role": "user", "content": ""},
                {"role": "tool", "content": "", "name": OPENAI},
                {"role": "assistant", "content": f"pushed with {GITHUB}"},
            ],
        }
    )
    by_data, by_state = Change(), Change()
    # (the tags a first pass leaves number the secrets in the order it met them: compared
    # once settled, as the write path settles them)
    cleaned = by_data._first.settle(by_data.clean(state.as_dict()))
    assert by_state._first.settle(by_state.clean(state).as_dict()) == cleaned
    assert GITHUB not in json.dumps(cleaned)
    assert OPENAI not in json.dumps(cleaned)
    assert by_data.counts == by_state.counts
    assert sorted(by_state.counts.items()) == [
        ("generic-secret", 1),
        ("github-pat", 1),
        ("openai-api-key", 1),
        ("private-key", 1),
    ]
