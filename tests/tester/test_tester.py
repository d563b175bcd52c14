"""clm-policy test: exact output of every format (golden), every outcome and exit code.

The golden files come from tests/fixtures/tester/, run from that folder so paths stay short
and stable. Set CLM_UPDATE_GOLDEN=1 to rewrite them after an intended change, then review the
diff like any other change.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import pytest

from clm_policy import load_policy
from clm_policy.policy.engine import Policy

from conftest import POLICIES, REPO, golden, invoke, run_process

FIXTURES = Path(__file__).parents[1] / "fixtures" / "tester"


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("test.txt", []),
        ("test_verbose_coverage.txt", ["-v", "--coverage"]),
        ("test.json", ["--format", "json", "--coverage"]),
        ("test.xml", ["--format", "junit"]),
    ],
)
def test_formats_golden(monkeypatch: pytest.MonkeyPatch, name: str, args: list[str]) -> None:
    monkeypatch.chdir(FIXTURES)
    result = invoke("test", ".", *args)
    assert (result.exit_code, result.stderr) == (1, "")
    golden(name, result.stdout)


def test_every_outcome_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURES)
    out = json.loads(invoke("test", ".", "--format", "json").stdout)
    outcomes = {(r["case"], r["outcome"]) for r in out["results"]}
    assert outcomes == {
        (None, "ERROR"),  # broken.test.yaml: an unknown key, reported once for the file
        ("continues below the soft limit", "PASS"),
        ("compacts at the soft limit", "PASS"),
        ("a deliberately wrong expectation", "FAIL"),
        ("force bypasses the open subagents guard", "PASS"),
        ("a misspelt rule", "ERROR"),
        ("a misspelt guard", "ERROR"),
        ("an unknown profile", "ERROR"),
        ("an undeclared signal", "ERROR"),
        ("a state that does not validate", "ERROR"),
        ("an expression that fails", "ERROR"),
        ("not written yet", "SKIP"),
    }
    assert out["summary"] == {
        "passed": 3,
        "failed": 1,
        "errors": 7,
        "skipped": 1,
        "deselected": 0,
        "files": 2,
    }
    assert out["coverage"] is None


def test_a_deliberately_wrong_case_is_caught(write: Callable[[str, str], Path]) -> None:
    path = write(
        "wrong.test.yaml",
        """
        version: 1
        policy: default
        cases:
          - name: right
            given: {tokens: {context_tokens: 360000}}
            expect: {action: handoff, trigger: hard_handoff}
          - name: wrong on purpose
            given: {tokens: {context_tokens: 360000}}
            expect: {action: compact, trigger: soft_compact}
        """,
    )
    result = invoke("test", str(path))
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[:4] == [
        f"FAIL {path}:7: wrong on purpose",
        "    field    expected        actual",
        '  x action   "compact"       "handoff"',
        '  x trigger  "soft_compact"  "hard_handoff"',
    ]
    assert "      hard_handoff -> handoff: true  [DECIDED]  <bundled>/default.yaml:43:11" in lines
    assert "          read: tokens.context=360000, profile.hard_handoff=350000" in lines
    assert lines[-2:] == ["0 errors", "1 passed, 1 failed, 0 skipped"]


def test_junit_parses_with_the_right_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURES)
    root = ET.fromstring(invoke("test", ".", "--format", "junit").stdout)
    assert root.tag == "testsuites"
    assert {k: root.get(k) for k in ("tests", "failures", "errors", "skipped")} == {
        "tests": "12",
        "failures": "1",
        "errors": "7",
        "skipped": "1",
    }
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["broken.test.yaml", "suite.test.yaml"]
    cases = root.findall("testsuite/testcase")
    assert len(cases) == 12
    assert len(root.findall("testsuite/testcase/failure")) == 1
    assert len(root.findall("testsuite/testcase/error")) == 7
    (skipped,) = root.findall("testsuite/testcase/skipped")
    assert skipped.get("message") == "waiting for the new degradation signal"
    wrong = next(c for c in cases if c.get("name") == "a deliberately wrong expectation")
    assert (wrong.get("file"), wrong.get("line")) == ("suite.test.yaml", "20")
    failure = wrong.find("failure")
    assert failure is not None
    assert failure.text is not None
    assert "otherwise -> continue  [DECIDED]" in failure.text


def test_junit_escapes_what_xml_cannot_carry(write: Callable[[str, str], Path]) -> None:
    path = write(
        "odd.test.yaml",
        """
        version: 1
        policy: default
        cases:
          - name: "bell \\a <&> \\"quotes\\""
            expect: {action: compact}
        """,
    )
    out = invoke("test", str(path), "--format", "junit").stdout
    case = ET.fromstring(out).find("testsuite/testcase")
    assert case is not None
    assert case.get("name") == 'bell \\x07 <&> "quotes"'


# -- exit codes --------------------------------------------------------------------------


def test_shipped_policy_tests_pass_with_full_coverage_as_a_process() -> None:
    proc = run_process("test", "--coverage", "--fail-under", "100", cwd=REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[-1].endswith(" passed, 0 failed, 0 skipped")
    assert "coverage: 100.0% (33 of 33 rules and guards exercised)" in lines
    assert proc.stderr == ""


def test_failures_exit_1_as_a_process() -> None:
    proc = run_process("test", "suite.test.yaml", cwd=FIXTURES)
    assert proc.returncode == 1
    assert proc.stdout.splitlines()[-2:] == ["6 errors", "3 passed, 1 failed, 1 skipped"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nosuch"], "nosuch: no such file or directory\n"),
        (
            ["team.yaml"],
            "team.yaml: not a policy test file (its name must end in .test.yaml or .test.yml)\n",
        ),
        (["--format", "xml", "."], "Invalid value for '--format'"),
        (["--fail-under", "101", "."], "Invalid value for '--fail-under'"),
        (
            ["suite.test.yaml", "-k", "nothing like it"],
            "clm-policy: -k 'nothing like it' matches none of the 11 cases\n",
        ),
    ],
)
def test_usage_errors_exit_2(
    monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    monkeypatch.chdir(FIXTURES)
    result = invoke("test", *args)
    assert (result.exit_code, result.stdout) == (2, "")
    assert message in result.stderr


def test_a_usage_error_exits_2_as_a_process() -> None:
    proc = run_process("test", "nosuch.test.yaml", cwd=FIXTURES)
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        2,
        "",
        "nosuch.test.yaml: no such file or directory\n",
    )


def test_an_internal_error_exits_3(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*_: object, **__: object) -> None:
        raise RuntimeError("kaboom")

    monkeypatch.setattr(Policy, "decide", boom)
    result = invoke("test", str(POLICIES / "tests" / "option_c.test.yaml"))
    assert (result.exit_code, result.stdout) == (3, "")
    assert result.stderr.startswith("clm-policy: internal error: RuntimeError: kaboom")


def test_a_folder_without_test_files_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "team.yaml").write_text("version: 1\n")
    result = invoke("test", str(tmp_path / "policies"))
    assert result.exit_code == 2
    assert result.stderr == (
        f"clm-policy: no test files (*.test.yaml, *.test.yml) under {tmp_path / 'policies'}\n"
    )


def test_no_path_and_no_policies_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = invoke("test")
    assert (result.exit_code, result.stderr) == (
        2,
        "clm-policy: no PATH given, no policy in .clm-policy.yaml and no policies/ folder here\n",
    )


def test_only_skips_exit_0(write: Callable[[str, str], Path]) -> None:
    path = write(
        "later.test.yaml",
        """
        version: 1
        policy: default
        cases:
          - {name: later, skip: not yet, expect: {action: compact}}
        """,
    )
    result = invoke("test", str(path), "-v")
    assert result.exit_code == 0
    assert result.stdout == (
        f"SKIP {path}:4: later (not yet)\n\n0 errors\n0 passed, 0 failed, 1 skipped\n"
    )


# -- coverage, -k, --output --------------------------------------------------------------


def test_fail_under_exits_1_and_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    result = invoke(
        "test", "policies/tests/option_c.test.yaml", "-k", "hard limit", "--fail-under", "50"
    )
    assert result.exit_code == 1
    assert result.stdout == (
        "coverage: 20.0% (1 of 5 rules and guards exercised)\n"
        "   20.0%  1/5  option_c  policies/examples/option_c.yaml\n"
        "      not exercised: rule phase_boundary  <bundled>/default.yaml:38:11\n"
        "      not exercised: rule soft_compact  <bundled>/default.yaml:49:7\n"
        "      not exercised: rule degradation  <bundled>/default.yaml:55:11\n"
        "      not exercised: guard compact/open_subagents  policies/examples/option_c.yaml:18:13\n"
        "coverage 20.0% is below --fail-under 50%\n"
        "\n"
        "5 deselected by -k 'hard limit'\n"
        "0 errors\n"
        "1 passed, 0 failed, 0 skipped\n"
    )
    assert (
        invoke(
            "test", "policies/tests/option_c.test.yaml", "-k", "HARD", "--fail-under", "20"
        ).exit_code
        == 0
    )


def test_coverage_counts_only_cases_that_ran(write: Callable[[str, str], Path]) -> None:
    path = write(
        "partial.test.yaml",
        """
        version: 1
        policy: default
        cases:
          - name: fails but exercises hard_handoff
            given: {tokens: {context_tokens: 400000}}
            expect: {action: continue}
          - name: skipped, exercises nothing
            skip: later
            given: {tokens: {context_tokens: 260000}}
            expect: {action: compact}
          - name: an error exercises nothing
            given: {signals: {degradation: true}}
            expect: {action: compact, trigger: degradaton}
        """,
    )
    out = json.loads(invoke("test", str(path), "--format", "json", "--coverage").stdout)
    (policy,) = out["coverage"]["policies"]
    assert [i["id"] for i in policy["items"] if i["covered"]] == ["hard_handoff"]
    assert (out["coverage"]["percent"], out["coverage"]["fail_under"]) == (25.0, None)


def test_no_policy_loaded_is_no_coverage(write: Callable[[str, str], Path]) -> None:
    """Every case stopped before its policy ran: nothing was exercised, so --fail-under does
    not pass (it read "100.0% (0 of 0 rules and guards exercised)")."""
    path = write(
        "broken.test.yaml",
        """
        version: 1
        policy: nosuch.yaml
        cases:
          - name: never runs
            given: {tokens: {context_tokens: 5}}
            expect: {action: continue}
        """,
    )
    done = invoke("test", str(path), "--coverage", "--fail-under", "10")
    assert done.exit_code == 1
    assert (
        "coverage: 0.0% (no policy was loaded: no case ran)\n"
        "coverage 0.0% is below --fail-under 10%\n"
    ) in done.stdout
    out = json.loads(invoke("test", str(path), "--format", "json", "--coverage").stdout)
    assert (out["coverage"]["percent"], out["coverage"]["policies"]) == (0.0, [])


def test_k_filters_cases_ignoring_case(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    result = invoke("test", "policies/tests", "-k", "PHASE BOUNDARY", "-v")
    assert result.exit_code == 0
    names = [
        line.split(": ", 1)[1] for line in result.stdout.splitlines() if line.startswith("PASS")
    ]
    assert names == [
        "a phase boundary hands off whatever the context",
        "a phase boundary comes before the hard limit",
        "a phase boundary hands off",
        "a phase boundary hands off",
        "a phase boundary hands off",
        "a phase boundary is no reason to hand off here",
    ]
    assert result.stdout.splitlines()[-3:] == [
        "59 deselected by -k 'PHASE BOUNDARY'",
        "0 errors",
        "6 passed, 0 failed, 0 skipped",
    ]


@pytest.mark.parametrize("fmt", ["text", "json", "junit"])
def test_output_writes_the_report_and_the_summary_to_stderr(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, fmt: str
) -> None:
    monkeypatch.chdir(FIXTURES)
    target = tmp_path / f"report.{fmt}"
    result = invoke("test", ".", "--format", fmt, "--output", str(target))
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == "7 errors\n3 passed, 1 failed, 1 skipped\n"
    assert target.read_text() == invoke("test", ".", "--format", fmt).stdout
    assert [p.name for p in tmp_path.iterdir()] == [target.name]  # no temporary file left


def test_output_to_an_unwritable_place_is_a_usage_error(tmp_path: Path) -> None:
    result = invoke("test", str(POLICIES / "tests"), "--output", str(tmp_path / "no" / "r.xml"))
    assert result.exit_code == 2
    assert result.stderr == (
        f"{tmp_path / 'no' / 'r.xml'}: cannot write the output: No such file or directory\n"
    )


def test_help_documents_the_exit_codes() -> None:
    text = " ".join(invoke("test", "--help").stdout.split())
    assert (
        "Exit codes: 0 every case passed (skips allowed), 1 a FAIL or an ERROR, or coverage" in text
    )
    assert "clm-policy test --format junit --output policy-tests.xml" in text


# -- docs/testing.md tells the truth -----------------------------------------------------

DOC = REPO / "docs" / "testing.md"


def _doc_blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(), flags=re.S)


def test_doc_fail_example_is_current(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (source,) = [b for b in _doc_blocks("yaml") if "trigger: hard_limit" in b]
    (shown,) = [b for b in _doc_blocks("text") if b.startswith("FAIL limits.test.yaml")]
    (tmp_path / "limits.test.yaml").write_text(source)
    monkeypatch.chdir(tmp_path)
    result = invoke("test", "limits.test.yaml")
    assert (result.exit_code, result.stdout) == (1, shown)


def test_doc_merge_key_example_passes(tmp_path: Path) -> None:
    (cases,) = [b for b in _doc_blocks("yaml") if "<<: *busy" in b]
    path = tmp_path / "merge.test.yaml"
    path.write_text("version: 1\npolicy: default\ncases:\n" + cases)
    result = invoke("test", str(path))
    assert result.stdout.splitlines()[-1] == "2 passed, 0 failed, 0 skipped"


def test_doc_file_format_example_is_valid() -> None:
    (example,) = [b for b in _doc_blocks("yaml") if b.startswith("# yaml-language-server")]
    from clm_policy.formats.yamlio import parse_yaml
    from clm_policy.models.policytest import PolicyTestFile

    data = parse_yaml(example, "example").root
    spec = PolicyTestFile.model_validate_json(json.dumps(data), strict=True)
    assert spec.cases[0].expect.model_fields_set == {
        "action",
        "trigger",
        "proposed",
        "blocked_by",
        "warnings",
        "overridden",
        "forced",
        "rationale",
    }


def test_doc_coverage_example_names_real_places(monkeypatch: pytest.MonkeyPatch) -> None:
    (block,) = [b for b in _doc_blocks("text") if b.startswith("coverage:")]
    monkeypatch.chdir(REPO)
    policy = load_policy("policies/examples/option_a.yaml")
    places = {
        f"guard {a.value}/{g.id}  {g.when.location}" for a, gs in policy.guards.items() for g in gs
    }
    missed = [
        line.split("not exercised: ")[1] for line in block.splitlines() if "not exercised" in line
    ]
    assert missed
    assert set(missed) <= places


def test_github_format_annotates_each_fail_and_error_on_its_line(
    write: Callable[[str, str], Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    write(
        "p/team.yaml",
        """
        version: 1
        name: team
        extends: default
        """,
    )
    write(
        "p/t.test.yaml",
        """
        version: 1
        policy: team.yaml
        cases:
          - name: a, b % c
            given: {tokens: {context_tokens: 400000}}
            expect: {action: compact}
          - name: unknown rule
            given: {tokens: {context_tokens: 1}}
            expect: {action: continue, trigger: nope}
        """,
    )
    result = invoke("test", "--format", "github", "p")
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[:2] == [
        "::error file=p/t.test.yaml,line=4,title=clm-policy test::FAIL a, b %25 c: action: "
        'expected "compact", got "handoff"',
        "::error file=p/t.test.yaml,line=9,col=41,title=clm-policy test::ERROR unknown rule: "
        "expect.trigger: policy team has no rule 'nope' (rules: phase_boundary, hard_handoff, "
        "soft_compact, degradation)",
    ]
    # then the text report, as --format text prints it
    text = invoke("test", "p")
    assert result.stdout == "\n".join(lines[:2]) + "\n" + text.stdout


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            "case:\n  - {name: a, given: {}, expect: {action: continue}}\n",
            "missing required key 'cases' in the top level; is 'case' it, misspelt?",
        ),
        (
            "cases:\n  - {name: a, given: {}, expect: {action: continue, trigger: None}}\n",
            "a: expect.trigger: policy default has no rule 'None'; for no rule, write null "
            "(rules: phase_boundary, hard_handoff, soft_compact, degradation)",
        ),
    ],
    ids=["cases-misspelt", "trigger-None"],
)
def test_a_test_file_written_almost_right_says_how(
    write: Callable[[str, str], Path], body: str, message: str
) -> None:
    path = write("almost.test.yaml", "version: 1\npolicy: default\n" + body)
    done = invoke("test", str(path))
    assert done.exit_code == 1
    assert message in done.stdout, done.stdout


def test_fail_under_takes_a_percent_sign(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    args = ["test", "policies/tests/option_c.test.yaml", "-k", "hard limit"]
    assert invoke(*args, "--fail-under", "50%").stdout == invoke(*args, "--fail-under", "50").stdout
    assert invoke(*args, "--fail-under", "50%").exit_code == 1
    assert invoke(*args, "--fail-under", "101%").exit_code == 2
