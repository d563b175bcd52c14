"""The outer control loop with the simulated agent and a real memory repository: the seed's
scenarios A, B and C, the demo, continue-after-handoff, the safeguard, bad scenarios."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from clm_policy.models.shapes.manifest import validate_manifest

from conftest import git, invoke, message_of, run_process


def run_json(tmp_path: Path, *args: str) -> dict[str, object]:
    result = invoke("run", "--memory", str(tmp_path / "mem"), "--format", "json", *args)
    assert result.exit_code == 0, message_of(result.stderr)
    out: dict[str, object] = json.loads(result.stdout)
    return out


def lines(repo: Path, path: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in git(repo, "show", f"HEAD:{path}").splitlines()]


def test_scenario_a_continue_only(tmp_path: Path) -> None:
    out = run_json(tmp_path, "--scenario", "continue_only")
    assert (out["stopped_reason"], out["compact_count"], out["handoffs"]) == ("completed", 0, [])
    timeline = out["timeline"]
    assert isinstance(timeline, list)
    assert {e["action"] for e in timeline} == {"continue"}
    repo = tmp_path / "mem"
    decisions = lines(repo, "sessions/scenario-a/decisions.jsonl")
    assert [d["action"] for d in decisions] == ["continue", "continue"]
    metrics = lines(repo, "sessions/scenario-a/metrics.jsonl")
    # the user's message (27 characters: 7 tokens) and the two answers' declared sizes
    assert [m["context_tokens"] for m in metrics] == [7 + 800, 7 + 800 + 300]
    assert git(repo, "log", "-1", "--format=%s") == "clm(session): scenario-a step 2, completed\n"
    assert git(repo, "rev-list", "--count", "HEAD").strip() == "3"  # init + start + end only


def test_scenario_b_compaction_lowers_the_context(tmp_path: Path) -> None:
    out = run_json(tmp_path, "--scenario", "compaction")
    assert out["stopped_reason"] == "completed"
    assert out["compact_count"] == 1
    timeline = out["timeline"]
    assert isinstance(timeline, list)
    (at,) = [i for i, e in enumerate(timeline) if e["action"] == "compact"]
    assert timeline[at]["rule"] == "soft_compact"
    assert timeline[at + 1]["context_tokens"] < timeline[at]["context_tokens"]
    repo = tmp_path / "mem"
    step = timeline[at]["step"]
    assert f"sessions/scenario-b/compactions/{step:06d}.md" in git(repo, "ls-files")
    decisions = lines(repo, "sessions/scenario-b/decisions.jsonl")
    assert len(decisions) == len(timeline)


def test_scenario_c_handoff_with_a_valid_manifest(tmp_path: Path) -> None:
    out = run_json(tmp_path, "--scenario", "handoff")
    assert (out["stopped_reason"], out["compact_count"]) == ("handoff", 0)
    handoffs = out["handoffs"]
    assert isinstance(handoffs, list)
    (handoff,) = handoffs
    repo = tmp_path / "mem"
    manifest = json.loads(git(repo, "show", f"HEAD:{handoff['manifest']}"))
    rationale = validate_manifest(manifest).decision_rationale
    assert rationale.startswith("context 360")
    assert rationale.endswith(" >= hard limit 350000")
    assert manifest["not_verified"] == ["error rates per service"]


def test_demo_as_a_process(tmp_path: Path) -> None:
    proc = run_process("run", cwd=tmp_path)
    assert proc.returncode == 0, message_of(proc.stderr)
    assert "into a new memory repository clm-memory" in proc.stdout
    assert proc.stdout.split("timeline (compactions and handoffs):\n")[1].splitlines()[:8] == [
        "  session       step    context  decision  rule",
        "  demo            23    257,352  compact   soft_compact",
        "  demo            42    257,171  compact   soft_compact",
        "  demo            43     79,139  handoff   phase_boundary",
        "  demo-2          21    235,367  compact   degradation",
        "  demo-2          37    246,135  compact   degradation",
        "  demo-2          52    235,135  compact   degradation",
        "",
    ]
    assert (
        "stopped: completed after 96 steps; 5 compactions, 1 handoff, sessions demo, demo-2"
    ) in proc.stdout
    assert "clm-policy log --memory clm-memory" in proc.stdout
    log = json.loads(
        invoke("log", "--memory", str(tmp_path / "clm-memory"), "--format", "json").stdout
    )
    # the handoff's commit records how demo stopped: no empty session-end commit follows it
    assert [(e["session"], e["event"]) for e in log] == [
        ("demo-2", "session"),
        *[("demo-2", "compact")] * 3,
        ("demo-2", "start"),
        ("demo", "handoff"),
        *[("demo", "compact")] * 2,
        ("demo", "start"),
        ("", "init"),
    ]
    again = run_process("run", cwd=tmp_path)  # an existing memory repository is reused
    assert "into the memory repository clm-memory" in again.stdout


def test_continue_after_handoff_chains_sessions(tmp_path: Path) -> None:
    out = run_json(tmp_path, "--continue-after-handoff")
    assert out["sessions"] == ["demo", "demo-2"]
    assert out["stopped_reason"] == "completed"
    final = out["final_state"]
    assert isinstance(final, dict)
    assert (final["session_id"], final["parent_session"]) == ("demo-2", "demo")
    repo = tmp_path / "mem"
    body = git(repo, "log", "-1", "--format=%(trailers:only,unfold)")
    assert "Clm-Session: demo-2\n" in body
    assert "Clm-Parent-Session: demo\n" in body
    started = git(repo, "log", "--format=%H", "-F", "--grep=clm(start): demo-2").strip()
    seed = json.loads(git(repo, "show", f"{started}:sessions/demo-2/state.json"))["messages"][0]
    assert seed["name"] == "clm-handoff"


def test_overrides_and_max_steps(tmp_path: Path) -> None:
    out = run_json(
        tmp_path, "--soft-compact", "100000", "--hard-handoff", "900000", "--max-steps", "30"
    )
    assert out["stopped_reason"] == "max_steps"
    timeline = out["timeline"]
    assert isinstance(timeline, list)
    # the overridden soft limit, every min_steps_between_compacts (5) steps at the most, and
    # the degradation the demo reports at step 23 (no minimum there)
    assert [(e["step"], e["rule"]) for e in timeline if e["action"] == "compact"] == [
        (9, "soft_compact"),
        (15, "soft_compact"),
        (21, "soft_compact"),
        (23, "degradation"),
        (28, "soft_compact"),
    ]
    bad = invoke(
        "run", "--memory", str(tmp_path / "m2"), "--soft-compact", "5", "--hard-handoff", "5"
    )
    assert bad.exit_code == 2
    assert "--soft-compact (5) must be below --hard-handoff (5)" in bad.stderr


def test_a_policy_that_always_compacts_is_stopped(tmp_path: Path) -> None:
    policy = tmp_path / "eager.yaml"
    policy.write_text(
        "version: 1\nprofiles:\n  coding: {soft_compact: 1, hard_handoff: 10000000, "
        "min_steps_between_compacts: 0}\nrules:\n  - {id: always, when: 'True', "
        "action: compact}\n"
    )
    out = run_json(tmp_path, "--policy", str(policy))
    assert out["stopped_reason"] == "compaction_loop"
    assert out["compact_count"] == 3
    # the fourth compaction was not carried out: its step awaits a decision on resume
    run = json.loads(git(tmp_path / "mem", "show", "HEAD:sessions/demo/run.json"))
    assert (run["stopped"], run["decided"]) == ("compaction_loop", False)


def test_bad_scenario_is_located(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text("version: 1\ngoal: g\nsteps:\n  - say: hi\n    tokens: lots\n")
    result = invoke("run", "--scenario", str(path), "--memory", str(tmp_path / "mem"))
    assert result.exit_code == 2
    assert message_of(result.stderr) == (
        f"{path}:5:13: steps[0].tokens: expected an integer, got string 'lots'\n"
    )
    assert not (tmp_path / "mem").exists()
    unknown = invoke("run", "--scenario", "demoo", "--memory", str(tmp_path / "mem"))
    assert unknown.exit_code == 2
    assert "no bundled scenario named 'demoo'" in unknown.stderr


def test_bundled_scenarios_validate_against_the_schema() -> None:
    import jsonschema
    from ruamel.yaml import YAML

    from clm_policy.loop.scenario import BUNDLED, bundled_scenarios, load_scenario

    from conftest import REPO

    schema = json.loads((REPO / "schemas" / "scenario.schema.json").read_text())
    assert bundled_scenarios() == ["compaction", "continue_only", "demo", "handoff"]
    for name in bundled_scenarios():
        path = BUNDLED / f"{name}.yaml"
        jsonschema.Draft202012Validator(schema).validate(YAML(typ="safe").load(path.read_text()))
        assert path.read_text().startswith(
            "# yaml-language-server: $schema=../../schemas/scenario.schema.json"
        )
        assert load_scenario(name)[1] == f"<bundled>/scenarios/{name}.yaml"


def test_resume_status_and_signal(tmp_path: Path) -> None:
    mem = str(tmp_path / "mem")
    first = run_json(tmp_path, "--max-steps", "10", "--stop-at-handoff")
    assert first["stopped_reason"] == "max_steps"
    listed = json.loads(invoke("status", "--memory", mem, "--format", "json").stdout)
    assert [(r["session"], r["step"], r["stopped"]) for r in listed] == [("demo", 10, "max_steps")]
    resumed = run_json(tmp_path, "--resume", "demo", "--max-steps", "20")
    assert resumed["compact_count"] == 1
    timeline = resumed["timeline"]
    assert isinstance(timeline, list)
    assert timeline[0]["step"] == 11  # step 10 was decided before the stop: it steps on
    assert [e["step"] for e in timeline if e["action"] == "compact"] == [23]  # as a fresh run
    typo = invoke("signal", "--memory", mem, "--session", "demo", "degradaton=true")
    assert typo.exit_code == 2
    assert "signal 'degradaton' is not declared by policy default" in typo.stderr
    signalled = invoke(
        "signal", "--memory", mem, "--session", "demo", "--phase-done", "degradation=true"
    )
    assert signalled.exit_code == 0, signalled.stderr
    after = run_json(tmp_path, "--resume", "demo")
    assert (after["stopped_reason"], after["steps"]) == ("handoff", 0)
    detail = json.loads(
        invoke("status", "--memory", mem, "--session", "demo", "--format", "json").stdout
    )
    assert (detail["stopped"], detail["handoffs"]) == ("handoff", 1)
    assert detail["last_decisions"][-1]["trigger"] == "phase_boundary"
    ended = invoke("run", "--memory", mem, "--resume", "demo")
    assert ended.exit_code == 2
    assert "session 'demo' ended (handoff); nothing to resume" in ended.stderr
    unknown = invoke("run", "--memory", mem, "--resume", "nope")
    assert unknown.exit_code == 2
    assert "no persisted session 'nope' (sessions: demo)" in unknown.stderr


def test_compact_and_handoff_a_persisted_session(tmp_path: Path) -> None:
    mem = str(tmp_path / "mem")
    run_json(tmp_path, "--max-steps", "5")
    compacted = invoke("compact", "--memory", mem, "--session", "demo", "--format", "json")
    assert compacted.exit_code == 0, compacted.stderr
    assert json.loads(compacted.stdout)["rule"] == "manual"
    handed = invoke("handoff", "--memory", mem, "--session", "demo", "--format", "json")
    assert json.loads(handed.stdout)["handoff_path"] == "sessions/demo/handoffs/001.md"
    both = invoke("compact", "--memory", mem, "--session", "demo", "--state", "x.json")
    assert both.exit_code == 2
    assert both.stderr == (
        "clm-policy compact: give exactly one of --state FILE|-, --session ID or --transcript "
        "PATH; got --state and --session (try 'clm-policy compact --help')\n"
    )


CONFIRMING = """\
version: 1
extends: default
confirm: [handoff]
"""


def test_human_confirmation(tmp_path: Path) -> None:
    policy = tmp_path / "careful.yaml"
    policy.write_text(CONFIRMING)
    mem = str(tmp_path / "mem")
    # non-interactive: stops, exit 4, the pending decision persisted
    proc = run_process(
        "run", "--memory", mem, "--policy", str(policy), "--stop-at-handoff", cwd=tmp_path
    )
    assert proc.returncode == 4, message_of(proc.stderr)
    assert "stopped: needs_confirmation after 43 steps" in proc.stdout
    assert (
        "pending: handoff (phase_boundary): phase finished; the next phase starts in a "
        "clean session"
    ) in proc.stdout
    assert f"clm-policy run --memory {mem} --resume demo --yes" in proc.stdout
    detail = json.loads(
        invoke("status", "--memory", mem, "--session", "demo", "--format", "json").stdout
    )
    assert detail["pending"]["action"] == "handoff"
    # an orchestrator asked a person, who said yes
    confirmed = run_json(tmp_path, "--resume", "demo", "--yes")
    assert (confirmed["stopped_reason"], len(confirmed["handoffs"])) == ("handoff", 1)
    final = confirmed["final_state"]
    assert isinstance(final, dict)
    assert final["human_interventions"] == 1


def test_a_confirmation_at_the_first_step_prints_no_empty_timeline(tmp_path: Path) -> None:
    policy = tmp_path / "careful.yaml"
    policy.write_text(CONFIRMING)
    mem = str(tmp_path / "mem")
    limits = ("--soft-compact", "10", "--hard-handoff", "20")
    proc = run_process("run", "--memory", mem, "--policy", str(policy), *limits, cwd=tmp_path)
    assert proc.returncode == 4, message_of(proc.stderr)
    assert "stopped: needs_confirmation after 1 step; " in proc.stdout
    assert "timeline" not in proc.stdout


def test_human_rejection_continues() -> None:
    from clm_policy.loop.control import _rejected
    from clm_policy.models.decision import Decision
    from clm_policy.models.enums import Action

    out = Decision(
        action=Action.HANDOFF,
        trigger="hard_handoff",
        rationale="too big",
        proposed=Action.HANDOFF,
        policy="p",
        profile="coding",
        context_tokens=1,
    )
    rejected = _rejected(out)
    assert (rejected.action, rejected.trigger) == (Action.CONTINUE, "hard_handoff")
    assert rejected.rationale == "handoff rejected by a person (too big)"


def test_usage_reported_or_estimated(tmp_path: Path) -> None:
    body = (
        "version: 1\ngoal: g\nsystem_prompt_tokens: 100\n{usage}steps:\n"
        "  - {{say: '{text}', repeat: 2}}\n"
    )
    text = "x" * 400  # 100 tokens by characters / 4
    for usage, estimated in (("", False), ("report_usage: false\n", True)):
        path = tmp_path / f"s{int(estimated)}.yaml"
        path.write_text(body.format(usage=usage, text=text))
        out = run_json(tmp_path, "--scenario", str(path), "--memory", str(tmp_path / path.stem))
        final = out["final_state"]
        assert isinstance(final, dict)
        assert final["tokens"]["estimated"] is estimated
        assert final["tokens"]["context_tokens"] == 100 + 2 * 100
        assert final["tokens"]["input_tokens"] == (0 if estimated else 100 + 200)


def test_interactive_confirmation_at_a_terminal(tmp_path: Path) -> None:
    """At a terminal the run asks; answering no turns the handoff into continue."""
    import os
    import sys

    policy = tmp_path / "careful.yaml"
    policy.write_text(CONFIRMING)
    master, slave = os.openpty()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "clm_policy",
            "run",
            "--memory",
            str(tmp_path / "mem"),
            "--policy",
            str(policy),
            "--continue-after-handoff",
        ],
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    os.close(slave)
    os.write(master, b"n\n")
    out, err = proc.communicate(timeout=120)
    os.close(master)
    assert proc.returncode == 0, err
    assert "stopped: completed" in out
    assert "0 handoffs" in out
    log = git(tmp_path / "mem", "show", "HEAD:sessions/demo/decisions.jsonl")
    assert "handoff rejected by a person (phase finished" in log


def test_decide_on_a_persisted_session(tmp_path: Path) -> None:
    mem = str(tmp_path / "mem")
    run_json(tmp_path, "--max-steps", "10")
    before = json.loads(
        invoke("decide", "--memory", mem, "--session", "demo", "--format", "json").stdout
    )
    assert (before["action"], before["context_tokens"]) == ("continue", 4000 + 10 * (11000 + 16))
    invoke("signal", "--memory", mem, "--session", "demo", "--phase-done")
    after = json.loads(
        invoke("decide", "--memory", mem, "--session", "demo", "--format", "json").stdout
    )
    assert (after["action"], after["trigger"]) == ("handoff", "phase_boundary")
    both = invoke("decide", "--memory", mem, "--session", "demo", "--tokens", "5")
    assert both.exit_code == 2
    assert both.stderr == (
        "clm-policy decide: give exactly one of --state FILE|-, --tokens N, --session ID or "
        "--transcript PATH; got --tokens and --session (try 'clm-policy decide --help')\n"
    )


def test_what_was_decided_and_done_reaches_every_later_handoff(tmp_path: Path) -> None:
    """A chain of sessions: the decision and the verified fact of the first reach every later
    session's handoff, not only the second's."""
    scenario = tmp_path / "chain.yaml"
    scenario.write_text(
        "version: 1\n"
        "goal: Move the auth service to bearer tokens\n"
        "session: chain\n"
        "constraints: [keep the public API]\n"
        "steps:\n"
        "  - user: Move auth to bearer tokens and keep the old cookie path for a week\n"
        "    say: Chose HS256 signing, agreed with the user\n"
        "    decisions: [sign the tokens with HS256 (agreed with the user)]\n"
        "    verified: [login works with a bearer token (pytest tests/test_auth.py)]\n"
        "    tokens: 1000\n"
        "  - say: working on step {n}\n"
        "    tokens: 30000\n"
        "    repeat: 40\n",
        encoding="utf-8",
    )
    policy = tmp_path / "handoff.yaml"
    policy.write_text(
        "version: 1\nname: chain\nextends: default\n"
        "defaults: {context_window: 300000, soft_compact: 50%, hard_handoff: 60%}\n"
        "rules:\n  - id: soft_compact\n    disable: true\n",
        encoding="utf-8",
    )
    out = run_json(
        tmp_path,
        "--scenario",
        str(scenario),
        "--policy",
        str(policy),
        "--continue-after-handoff",
    )
    handoffs = out["handoffs"]
    assert isinstance(handoffs, list)
    assert len(handoffs) >= 3, out["stopped_reason"]
    repo = tmp_path / "mem"
    for handoff in handoffs:
        manifest = json.loads(git(repo, "show", f"HEAD:{handoff['manifest']}"))
        assert "sign the tokens with HS256 (agreed with the user)" in manifest["decisions"]
        assert (
            "login works with a bearer token (pytest tests/test_auth.py)" in (manifest["verified"])
        )
        assert manifest["constraints"] == ["keep the public API"]


def test_the_live_lines_say_when_a_session_goes_on_from_a_handoff(tmp_path: Path) -> None:
    # steps count per session: without the session's line, 43 then 21 reads as going back
    shown = invoke("run", "--memory", str(tmp_path / "mem")).stdout.splitlines()
    live = shown[1 : shown.index("")]
    assert [line.split()[1] for line in live if line.startswith("  step")] == [
        "23", "42", "43", "21", "37", "52",
    ]  # fmt: skip
    assert live[3] == "  session demo-2, from the handoff of demo:"
    assert live[2].split()[4] == "handoff"


def test_a_long_session_s_logs_go_on_in_new_files_and_read_as_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a commit rewrites only the newest log file (once, a 19,000-step run rewrote a 14 MB
    # decisions.jsonl at each commit: 262 s, 481 MiB of objects); every reader reads them all,
    # in the order of the steps, as one log
    whole = tmp_path / "whole"
    assert invoke("run", "--memory", str(whole)).exit_code == 0
    monkeypatch.setattr("clm_policy.memory.layout.LOG_STEPS", 10)
    parts = tmp_path / "parts"
    assert invoke("run", "--memory", str(parts)).exit_code == 0
    files = git(parts, "ls-tree", "--name-only", "HEAD", "sessions/demo/").split()
    logs = [f.removeprefix("sessions/demo/") for f in files if f.endswith(".jsonl")]
    assert logs[:3] == [
        "decisions.jsonl",
        "decisions.steps-000000010.jsonl",
        "decisions.steps-000000020.jsonl",
    ]
    assert "metrics.steps-000000040.jsonl" in logs
    for args in (
        ("export", "--format", "json"),
        ("replay", "--format", "json"),
        ("status", "--session", "demo", "--format", "json"),
        ("calibrate", "--format", "json"),
    ):
        seen = [invoke(*args, "--memory", str(m)) for m in (whole, parts)]
        assert all(s.exit_code == 0 for s in seen), seen
        assert _without_commits(seen[0].stdout) == _without_commits(seen[1].stdout), args


def _without_commits(text: str) -> str:
    """``text`` without what two runs cannot share: commits, and durations in seconds."""
    import re

    text = re.sub(r'("\w+_s": )[0-9.]+', r"\1S", text.replace("parts", "whole"))
    return re.sub(r"\b[0-9a-f]{12,40}\b", "C", text)


_READ = {"x86_64": "0", "aarch64": "63"}  # the read system call's number (Linux)


def _reading_its_input(pid: int) -> bool:
    """Whether the process is in a read of its standard input (Linux's /proc/PID/syscall)."""
    try:
        fields = Path(f"/proc/{pid}/syscall").read_text().split()
    except OSError:
        return False
    return fields[:2] == [_READ.get(os.uname().machine, "?"), "0x0"]


@pytest.mark.skipif(not Path("/proc/self/syscall").exists(), reason="needs Linux's /proc")
@pytest.mark.parametrize("key", ["ctrl-c", "ctrl-d"])
def test_ctrl_c_or_ctrl_d_at_the_confirmation_prompt(tmp_path: Path, key: str) -> None:
    """Ctrl-C at the question is an interrupt like any other (the session committed as
    stopped interrupted, with the command that resumes it); Ctrl-D is no answer: the decision
    awaits one, as it does without a terminal (exit 4)."""
    import signal
    import sys

    policy = tmp_path / "careful.yaml"
    policy.write_text(CONFIRMING)
    memory = tmp_path / "mem"
    master, slave = os.openpty()
    args = ["run", "--memory", str(memory), "--policy", str(policy)]
    limits = ["--soft-compact", "10", "--hard-handoff", "20"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "clm_policy", *args, *limits],
        stdin=slave,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
    )
    os.close(slave)
    assert proc.stdout is not None
    shown = b""
    while b"[Y/n]" not in shown:  # the question is asked: the run waits for the answer
        chunk = os.read(proc.stdout.fileno(), 4096)
        assert chunk, shown
        shown += chunk
    if key == "ctrl-c":
        # a Ctrl-C that comes between the question and the read of the answer waits for the
        # next one (at a terminal a person presses it again): send it once the read is under way
        while not _reading_its_input(proc.pid):
            assert proc.poll() is None
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
    else:
        os.write(master, b"\x04")  # what the key sends: the end of input at a line's start
    out, err = proc.communicate(timeout=120)
    os.close(master)
    if key == "ctrl-c":
        assert proc.returncode == 130, err
        assert f"to go on: clm-policy run --memory {memory} --resume demo" in err.decode()
        record = json.loads(git(memory, "show", "HEAD:sessions/demo/run.json"))
        assert record["stopped"] == "interrupted"
    else:
        assert proc.returncode == 4, err
        assert "stopped: needs_confirmation after 1 step" in (shown + out).decode()
