"""Test files are read case by case: the same results as reading them whole, in bounded memory.

A case runs as soon as it is read; what a file says after its cases (a top-level key, an
error) still decides the outcome exactly as if the file had been validated whole first.
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from clm_policy.tester.cases import BATCH, SuiteReader
from clm_policy.tester.runner import run_tests

from conftest import REPO, invoke

Write = Callable[[str, str], Path]

# research compacts at 285000, coding (the default) at 250000
AT_270K = "{name: at 270k, given: {tokens: {context_tokens: 270000}}, expect: {action: continue}}"


def _last_lines(path: Path, *args: str) -> list[str]:
    return invoke("test", str(path), *args).stdout.splitlines()


def test_a_profile_written_after_the_cases_applies_to_them(write: Write) -> None:
    path = write(
        "t.test.yaml", f"version: 1\npolicy: default\ncases:\n  - {AT_270K}\nprofile: research\n"
    )
    assert _last_lines(path)[-1] == "1 passed, 0 failed, 0 skipped"
    coding = write("c.test.yaml", f"version: 1\npolicy: default\ncases:\n  - {AT_270K}\n")
    assert _last_lines(coding)[-1] == "0 passed, 1 failed, 0 skipped"


def test_the_policy_may_be_named_after_the_cases(write: Write) -> None:
    path = write("t.test.yaml", f"cases:\n  - {AT_270K}\nversion: 1\npolicy: default\n")
    lines = _last_lines(path, "--coverage")
    assert lines[-1] == "0 passed, 1 failed, 0 skipped"
    assert lines.count(f"FAIL {path}:2: at 270k") == 1  # run once, under the file's header
    assert "coverage: 25.0% (1 of 4 rules and guards exercised)" in lines


def test_an_error_after_the_cases_voids_what_they_did(write: Write, tmp_path: Path) -> None:
    good = write(
        "a.test.yaml",
        "version: 1\npolicy: default\ncases:\n"
        "  - {name: hard, given: {tokens: {context_tokens: 400000}}, expect: {action: handoff}}\n",
    )
    cases = "".join(
        f"  - {{name: c{i}, given: {{tokens: {{context_tokens: 260000}}}}, "
        f"expect: {{action: handoff}}}}\n"
        for i in range(3 * BATCH)
    )
    bad = write("b.test.yaml", f"version: 1\npolicy: default\ncases:\n{cases}  - {{name: x}}\n")
    out = json.loads(invoke("test", str(good), str(bad), "--format", "json", "--coverage").stdout)
    assert [(r["file"], r["outcome"], r["message"]) for r in out["results"]] == [
        (str(good), "PASS", None),
        (str(bad), "ERROR", "missing required key 'expect' in cases[192]"),
    ]
    assert out["results"][1]["location"] == f"{bad}:196:5"
    # the failed cases of the voided file exercised nothing (soft_compact would be covered)
    assert [i["id"] for i in out["coverage"]["policies"][0]["items"] if i["covered"]] == [
        "hard_handoff"
    ]


def test_a_yaml_error_at_the_end_beats_a_schema_error_at_the_start(write: Write) -> None:
    path = write(
        "t.test.yaml",
        f"version: 2\npolicy: default\ncases:\n  - {AT_270K}\n  - {{name: b, expect: [}}\n",
    )
    assert _last_lines(path)[0] == (
        f"ERROR {path}:5:24: YAML syntax error: did not find expected node content "
        "(while parsing a flow node)"
    )


def test_a_schema_error_beats_an_earlier_duplicate_name(write: Write) -> None:
    case = "{name: a, expect: {action: continue}}"
    path = write(
        "t.test.yaml",
        f"version: 1\npolicy: default\ncases:\n  - {case}\n  - {case}\n  - {{name: c}}\n",
    )
    assert _last_lines(path)[0] == f"ERROR {path}:6:5: missing required key 'expect' in cases[2]"


def test_the_first_schema_error_by_position_wins(write: Write) -> None:
    # the bad version is written after the bad case: the case's error comes first
    path = write(
        "t.test.yaml",
        "policy: default\ncases:\n  - {name: a, expect: {action: stop}}\nversion: 2\n",
    )
    assert _last_lines(path)[0] == (
        f"ERROR {path}:3:32: cases[0].expect.action: expected 'continue', 'compact' or "
        "'handoff', got string 'stop'"
    )


def _suite(count: int) -> str:
    lines = ["version: 1", "policy: default", "cases:"]
    for i in range(count):
        lines.append(
            f"  - {{name: case {i}, given: {{tokens: {{context_tokens: {i * 37}}}, "
            f"step_index: {i % 50}}}, expect: {{action: continue, trigger: null}}}}"
        )
    return "\n".join(lines) + "\n"


def _peak_while_reading(text: str) -> int:
    tracemalloc.start()
    try:
        for _ in SuiteReader(text, "t").cases():
            pass
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_reading_holds_a_batch_of_cases_not_the_file() -> None:
    small, large = _suite(500), _suite(4000)
    _peak_while_reading(small)  # first use: schemas, caches
    grown = _peak_while_reading(large) - _peak_while_reading(small)
    # what grows is the text itself (held once here) and the names seen (for duplicates);
    # holding every case read, as a tree, would take more than ten times the text
    assert grown < 4 * (len(large) - len(small)), grown


def test_results_match_reading_the_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "t.test.yaml"
    path.write_text(_suite(5 * BATCH + 3))
    report = run_tests([(path, "t")])
    assert [r.case for r in report.results] == [f"case {i}" for i in range(5 * BATCH + 3)]
    assert [r.line for r in report.results] == list(range(4, 4 + 5 * BATCH + 3))
    assert {r.outcome.value for r in report.results} == {"PASS"}


def test_cases_that_carry_an_anchor_are_read_whole_and_run(write: Write) -> None:
    path = write(
        "t.test.yaml",
        "version: 1\npolicy: default\ncases: &all\n"
        "  - {name: a, given: {tokens: {context_tokens: 400000}}, expect: {action: handoff}}\n"
        "  - {name: b, expect: {action: continue}}\n"
        "  - {name: c, expect: {action: stop}}\n",
    )
    assert _last_lines(path)[0] == (
        f"ERROR {path}:6:32: cases[2].expect.action: expected 'continue', 'compact' or "
        "'handoff', got string 'stop'"
    )
    path.write_text(path.read_text().replace("stop", "continue"))
    assert _last_lines(path, "-v") == [
        f"PASS {path}:4: a",
        f"PASS {path}:5: b",
        f"PASS {path}:6: c",
        "",
        "0 errors",
        "3 passed, 0 failed, 0 skipped",
    ]


def test_a_case_decides_on_its_given_as_the_declaration_reads_it() -> None:
    """The state a case is decided on (read from the case's data, without pydantic) is the
    given pydantic accepted, field for field, in every shipped test file."""
    for path in sorted((REPO / "policies" / "tests").glob("*.test.yaml")):
        for case in SuiteReader(path.read_text(encoding="utf-8"), str(path)).cases():
            if case.given_error is None:
                assert case.state.as_dict() == case.spec.given.model_dump(mode="json"), (
                    path.name,
                    case.spec.name,
                )
