"""No command prints what a terminal would obey: a policy file named like a terminal command,
a policy test, a memory repository and a foreign commit holding them — every command that
shows a name or a text from them, as a real process (the quick paths and click's), on
standard output and standard error. Each byte is scanned for C0 and C1 controls, DEL, line
separators and bidi controls; where a person reads the name, it is shown escaped
(clm_policy.base.termsafe); machine formats keep it exactly.

Where the sequences come from: OSC 0 sets the window title, OSC 52 writes the clipboard,
OSC 8 makes a link (a file name cannot hold its "//": the link text is in the data), CSI as a
C1 control, a carriage return rewrites the line, U+202E shows the rest reversed.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import git, invoke

HOSTILE = "\x1b]0;pwn\x07\x1b]52;c;aGk=\x07\x1b]8;;http:x\x07\u202e\x9b31m\r"
SHOWN = "\\x1b]0;pwn\\x07\\x1b]52;c;aGk=\\x07\\x1b]8;;http:x\\x07\\u202e\\x9b31m\\r"
LINK = "\x1b]8;;http://x\x07here\x1b]8;;\x07"  # OSC 8, in data
LINK_SHOWN = "\\x1b]8;;http://x\\x07here\\x1b]8;;\\x07"
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")

POLICY = f"evil{HOSTILE}.yaml"
BROKEN = f"broken{HOSTILE}.yaml"
TESTS = f"suite{HOSTILE}.test.yaml"


def clm(cwd: Path, *args: str, stdin: bytes = b"") -> tuple[int, str, str]:
    """``clm-policy ARGS`` as a process: its status and output, once every byte of it has been
    checked for what a terminal would obey."""
    done = subprocess.run(
        [sys.executable, "-m", "clm_policy", *args],
        input=stdin,
        capture_output=True,
        cwd=cwd,
        timeout=120,
        check=False,
    )
    out, err = done.stdout.decode("utf-8"), done.stderr.decode("utf-8")
    assert UNSAFE.findall(out + err) == [], (args, out, err)
    return done.returncode, out, err


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project holding the hostile names: a policy file (named after its file: no
    ``name:``), a broken one (for lint's problems), a policy test, and a memory repository
    with a compaction of a session whose goal holds them and a foreign commit."""
    root = tmp_path / "hostile"
    root.mkdir()
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    (root / POLICY).write_text(
        "version: 1\n"
        f"description: {json.dumps('a ' + LINK)}\n"
        "profiles:\n  coding: {soft_compact: 250000, hard_handoff: 350000}\n"
        "rules:\n"
        "  - id: r\n    when: tokens.context > 1\n    action: compact\n"
        '    because: "context {tokens.context}"\n'
    )
    (root / BROKEN).write_text("version: 1\nprofiles: {coding: {soft_compact: x}}\n")
    (root / TESTS).write_text(
        f"version: 1\npolicy: {json.dumps(POLICY)}\ncases:\n"
        f"  - name: {json.dumps('case ' + LINK)}\n"
        "    given: {tokens: {context_tokens: 5}}\n    expect: {action: handoff}\n"
    )
    state = {
        "session_id": "s1",
        "goal": f"Fix the parser {HOSTILE} {LINK}",
        "step_index": 3,
        "tokens": {"context_tokens": 400000},
        "blockers": [f"blocked by {HOSTILE}"],
    }
    (root / "state.json").write_text(json.dumps(state))
    assert invoke("init", str(root / "mem")).exit_code == 0
    done = invoke("compact", "--memory", str(root / "mem"), "--state", str(root / "state.json"))
    assert done.exit_code == 0, done.stderr
    # a commit someone pushed: its subject and trailers are theirs
    git(
        root / "mem",
        "commit",
        "--allow-empty",
        "-m",
        f"clm(compact): s1 step 9, r{HOSTILE}",
        "-m",
        f"Clm-Event: compact\nClm-Session: s1\nClm-Step: 9\nClm-Rule: r{HOSTILE}\n"
        f"Clm-Manifest: m{HOSTILE}.json",
    )
    return root


def test_the_status_line(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    usage = {"input_tokens": 260000}
    raw = json.dumps({"context_window": {"context_window_size": 400000, "current_usage": usage}})
    line = f"ctx 68% 260k/380k · handoff at 92% · compact · evil{SHOWN}/coding\n"
    assert clm(project, "statusline", "--policy", POLICY, stdin=raw.encode()) == (0, line, "")
    # the click command (what `statusline --help` leads to) prints the same
    monkeypatch.chdir(project)
    done = invoke("statusline", "--policy", POLICY, stdin=raw)
    assert (done.exit_code, done.stdout, done.stderr) == (0, line, "")


@pytest.mark.parametrize(
    "extra", [[], ["--explain"], ["--state", "state.json"]], ids=["quick", "explain", "state"]
)
def test_decide(project: Path, extra: list[str]) -> None:
    args = ["decide", "--policy", POLICY, *(extra if "--state" in extra else ["-t", "5", *extra])]
    code, out, err = clm(project, *args)
    assert (code, err) == (0, "")
    assert f"policy:    evil{SHOWN}, profile coding\n" in out
    # the name kept exactly where a program reads it
    code, out, _ = clm(project, *args, "--format", "json")
    decision = json.loads(out)
    assert (decision.get("policy") or decision["decision"]["policy"]) == f"evil{HOSTILE}"


def test_decide_in_process_prints_the_same(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    done = invoke("decide", "--policy", POLICY, "-t", "5", "--explain")
    assert done.exit_code == 0, done.stderr
    assert UNSAFE.findall(done.stdout + done.stderr) == []
    assert f"  r -> compact: true  [DECIDED]  evil{SHOWN}.yaml:7:11\n" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["decide", "-t", "5", "--policy", f"nosuch{HOSTILE}.yaml"], f"nosuch{SHOWN}.yaml: "),
        (["decide", "-t", "5", "--profile", f"p{HOSTILE}"], "unknown profile 'p\\x1b]0;pwn\\x07"),
        ([f"nosuch{HOSTILE}"], f"clm-policy: No such command 'nosuch{SHOWN}'."),
        (
            ["decide", f"--x{HOSTILE}"],
            "clm-policy decide: No such option '--x\\x1b]0;pwn\\x07\\x1b]52;c;aGk'",
        ),
        (["lint", f"nosuch{HOSTILE}"], f"nosuch{SHOWN}"),
    ],
    ids=["no-file", "profile", "command", "option", "lint-path"],
)
def test_errors(project: Path, args: list[str], message: str) -> None:
    code, _, err = clm(project, *args)
    assert code == 2
    assert message in err


def test_lint(project: Path) -> None:
    code, out, err = clm(project, "lint", POLICY, BROKEN)
    assert code == 1
    assert out.startswith(f"broken{SHOWN}.yaml:2:")
    assert err == "clm-policy lint: 1 error, 0 warnings in 2 files\n"
    # GitHub: its own escapes for CR and LF (%0D); the rest as the terminal's
    code, out, _ = clm(project, "lint", BROKEN, "--format", "github")
    assert out.startswith(
        "::error file=broken\\x1b]0;pwn\\x07\\x1b]52;c;aGk=\\x07\\x1b]8;;http%3Ax\\x07"
        "\\u202e\\x9b31m%0D.yaml,line=2,"
    )
    code, out, _ = clm(project, "lint", BROKEN, "--format", "json")
    assert json.loads(out)["problems"][0]["file"] == BROKEN
    code, out, _ = clm(project, "lint", BROKEN, "--format", "sarif")
    location = json.loads(out)["runs"][0]["results"][0]["locations"][0]
    assert location["physicalLocation"]["artifactLocation"]["uri"] == BROKEN


def test_policy_tests(project: Path) -> None:
    code, out, _ = clm(project, "test", TESTS)
    assert code == 1
    assert out.startswith(f"FAIL suite{SHOWN}.test.yaml:4: case {LINK_SHOWN}\n")
    code, out, _ = clm(project, "test", TESTS, "--format", "json")
    assert json.loads(out)["results"][0]["case"] == f"case {LINK}"
    code, out, _ = clm(project, "test", TESTS, "--format", "junit")
    case = ET.fromstring(out.split("\n", 1)[1]).find("testsuite/testcase")
    assert case is not None
    assert case.get("name") == "case \\x1b]8;;http://x\\x07here\\x1b]8;;\\x07"  # XML has no ESC
    assert (case.get("file") or "").endswith("\u202e\x9b31m\r.test.yaml")  # but these, kept


def test_resolve(project: Path) -> None:
    code, out, err = clm(project, "resolve", POLICY)
    assert (code, err) == (0, "")
    assert out.startswith(f"# Resolved policy (extends merged): evil{SHOWN}.yaml\n")
    from ruamel.yaml import YAML

    resolved = YAML(typ="safe").load(out)
    assert (resolved["name"], resolved["description"]) == (f"evil{HOSTILE}", f"a {LINK}")


def test_run(project: Path) -> None:
    code, out, err = clm(project, "run", "--policy", POLICY, "--memory", "run-mem")
    assert (code, err) == (0, "")
    assert f" under policy evil{SHOWN} (profile coding) " in out


def test_the_memory_repository(project: Path) -> None:
    code, out, _ = clm(project, "log", "--memory", "mem")  # the quick path
    assert code == 0
    foreign = SHOWN.removesuffix("\\r")  # (git ends a subject and a trailer at the CR)
    assert f"  clm(compact): s1 step 9, r{foreign}\n              rule=r{foreign}\n" in out
    assert f"              manifest m{foreign}\n" in out
    code, out, _ = clm(project, "log", "--memory", "mem", "--format", "json")
    assert json.loads(out)[0]["subject"] == f"clm(compact): s1 step 9, r{HOSTILE[:-1]}"
    code, out, _ = clm(project, "status", "--memory", "mem", "--session", "s1")
    assert f"goal      Fix the parser {SHOWN} {LINK_SHOWN}\n" in out
    assert f"blocker   blocked by {SHOWN}\n" in out
    code, out, _ = clm(project, "show", "--memory", "mem", "HEAD~1")
    assert code == 0
    assert f"\n\nFix the parser {foreign}\n {LINK_SHOWN}\n" in out  # (the CR: a line end)


@pytest.mark.parametrize(
    "args",
    [
        ["replay", "--memory", "mem", "--policy", POLICY],
        ["calibrate", "--memory", "mem"],
        ["report", "--memory", "mem", "--policy", POLICY, "-o", "-"],
        ["export", "--memory", "mem", "--format", "csv", "--policy", POLICY],
        ["export", "--memory", "mem", "--format", "json", "--policy", POLICY],
    ],
    ids=["replay", "calibrate", "report", "export-csv", "export-json"],
)
def test_reports(project: Path, args: list[str]) -> None:
    code, out, err = clm(project, *args)
    assert code in (0, 1), err
    if args[-1] == POLICY and "json" in args:
        assert json.loads(out)["policy"].startswith(f"evil{HOSTILE}@")
    elif "report" in args:
        assert f"evil{SHOWN.replace('&', '&amp;')}" in out
