"""Results read from output, not exit codes (clm_policy.transcripts.results): one real-looking
output per test runner, the commands whose non-zero exit is the answer, pipelines that hide a
failure, and what counts as the same command."""

from __future__ import annotations

import pytest

from clm_policy.transcripts.results import (
    ANSWER,
    FAILED,
    PASSED,
    UNKNOWN,
    covers,
    hidden_exit,
    is_check,
    judge,
    normalise,
    split_chain,
    summary_of,
    whole_suite,
)

# (runner, output, passed, failed, the summary's text)
SUMMARIES = [
    (
        "pytest",
        "....F\n=================================== FAILURES ===================================\n"
        "___ test_quoted ___\nE   assert 1 == 2\n"
        "=========================== short test summary info ============================\n"
        "FAILED tests/test_quoted.py::test_quoted - assert 1 == 2\n"
        "========================= 1 failed, 4 passed in 0.12s ==========================\n",
        4,
        1,
        "1 failed, 4 passed in 0.12s",
    ),
    ("pytest", "....\n4 passed in 0.05s\n", 4, 0, "4 passed in 0.05s"),
    (
        "pytest",
        "==== 2 failed, 297 passed, 3 skipped, 1 xfailed, 2 warnings, 1 error in 12.34s (0:00:12) ====",
        297,
        3,
        "2 failed, 297 passed, 3 skipped, 1 xfailed, 2 warnings, 1 error in 12.34s (0:00:12)",
    ),
    (
        "pytest",
        "ERROR tests/test_x.py\n!!!! Interrupted: 1 error during collection !!!!\n"
        "=============================== 1 error in 0.20s ===============================\n",
        0,
        1,
        "1 error in 0.20s",
    ),
    (
        "unittest",
        "..F.\n======\nFAIL: test_x\n----------------------------------------------------------------------\n"
        "Ran 4 tests in 0.003s\n\nFAILED (failures=1)\n",
        3,
        1,
        "Ran 4 tests: FAILED (failures=1)",
    ),
    (
        "unittest",
        "....\n----------------------------------------------------------------------\n"
        "Ran 4 tests in 0.001s\n\nOK (skipped=1)\n",
        3,
        0,
        "Ran 4 tests: OK (skipped=1)",
    ),
    (
        "go",
        "--- FAIL: TestParseQuoted (0.00s)\n    parse_test.go:14: got [a b] want [a,b]\n"
        "FAIL\nFAIL\texample.com/csv/parse\t0.004s\nok  \texample.com/csv/cmd\t0.002s\nFAIL\n",
        1,
        1,
        "1 packages ok, 1 failed (TestParseQuoted)",
    ),
    (
        "go",
        "ok  \texample.com/csv/parse\t0.004s\nok  \texample.com/csv/cmd\t(cached)\n",
        2,
        0,
        "2 packages ok, 0 failed",
    ),
    (
        "cargo",
        "running 3 tests\ntest a ... ok\ntest b ... ok\ntest c ... FAILED\n\n"
        "test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; "
        "finished in 0.00s\n\nerror: test failed, to rerun pass `--lib`\n",
        2,
        1,
        "test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; "
        "finished in 0.00s",
    ),
    (
        "cargo",
        "test result: ok. 12 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; "
        "finished in 0.01s\n\n     Running tests/cli.rs\n\ntest result: ok. 3 passed; 0 failed; "
        "0 ignored; 0 measured; 0 filtered out; finished in 0.20s\n\n   Doc-tests csv\n\n"
        "test result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; "
        "finished in 0.00s\n",
        15,
        0,
        "test result: 15 passed; 0 failed (3 test binaries)",
    ),
    (
        "cargo",
        "   Compiling csv v0.1.0\nerror[E0425]: cannot find value `x` in this scope\n"
        " --> src/lib.rs:3:5\n\nerror: could not compile `csv` (lib) due to 1 previous error\n",
        None,
        None,
        "error: could not compile `csv` (lib) due to 1 previous error",
    ),
    (
        "nextest",
        "    Starting 3 tests across 1 binary\n        PASS [   0.004s] csv tests::a\n"
        "        FAIL [   0.005s] csv tests::b\n------------\n"
        "     Summary [   0.006s] 3 tests run: 2 passed, 1 failed, 0 skipped\n"
        "        FAIL [   0.005s] csv tests::b\nerror: test run failed\n",
        2,
        1,
        "3 tests run: 2 passed, 1 failed, 0 skipped",
    ),
    (
        "jest",
        " FAIL  src/sum.test.js\n  ● sum \u203a adds\n\nTest Suites: 1 failed, 3 passed, 4 total\n"
        "Tests:       1 failed, 11 passed, 12 total\nSnapshots:   0 total\nTime:        1.2 s\n"
        "Ran all test suites.\n",
        11,
        1,
        "Tests: 1 failed, 11 passed, 12 total",
    ),
    (
        "vitest",
        " \u276f src/sum.test.ts (3 tests | 1 failed) 5ms\n\n Test Files  1 failed | 3 passed (4)\n"
        "      Tests  1 failed | 11 passed (12)\n   Start at  10:00:00\n   Duration  1.20s\n",
        11,
        1,
        "Tests 1 failed | 11 passed (12)",
    ),
    (
        "mocha",
        "  sum\n    ✓ adds\n    1) subtracts\n\n\n  5 passing (12ms)\n  1 failing\n\n"
        "  1) sum\n       subtracts:\n",
        5,
        1,
        "5 passing, 1 failing",
    ),
    (
        "node",
        "✔ adds (0.5ms)\n✖ subtracts (1ms)\n\u2139 tests 2\n\u2139 suites 0\n\u2139 pass 1\n\u2139 fail 1\n"
        "\u2139 cancelled 0\n",
        1,
        1,
        "pass 1, fail 1",
    ),
    (
        "bun",
        "src/sum.test.ts:\n✓ adds [0.10ms]\n\n 12 pass\n 0 fail\n 14 expect() calls\n"
        "Ran 12 tests across 2 files. [25.00ms]\n",
        12,
        0,
        "12 pass, 0 fail",
    ),
    (
        "deno",
        "running 3 tests from ./sum_test.ts\nadds ... ok (1ms)\n\n"
        "FAILED | 2 passed | 1 failed (10ms)\n\nerror: Test failed\n",
        2,
        1,
        "FAILED | 2 passed | 1 failed (10ms)",
    ),
    (
        "playwright",
        "Running 9 tests using 1 worker\n  \u2718  2 [chromium] \u203a tests/a.spec.ts:23:7 \u203a "
        "Admin \u203a redirects (5.1s)\n\n  4 failed\n    [chromium] \u203a tests/a.spec.ts:23:7 "
        "\u203a Admin \u203a redirects \n    [chromium] \u203a tests/a.spec.ts:69:7 \u203a Admin "
        "\u203a blog API \n  1 flaky\n    [chromium] \u203a tests/a.spec.ts:81:7 \u203a Admin "
        "\u203a cases \n  4 passed (20.8s)\n\nTo open last HTML report run:\n\n"
        "  npx playwright show-report\n",
        5,
        4,
        "4 failed, 1 flaky, 4 passed",
    ),
    (
        "playwright",  # nothing passed: no time, the failed tests listed under the count
        "\x1b[31m  5 failed\x1b[39m\n    tests/cms.spec.ts:13:7 \u203a CMS \u203a blog page \n"
        "  1 skipped\n\nTo open last HTML report run:\n",
        0,
        5,
        "5 failed, 1 skipped",
    ),
    (
        "playwright",
        "  \u2713  1 tests/a.spec.ts:4:7 \u203a home (1.2s)\n\n  6 passed (1.1m)\n",
        6,
        0,
        "6 passed",
    ),
    (
        "mix",
        "  1) test parses quoted commas (CsvTest)\n     test/csv_test.exs:12\n\n"
        "Finished in 0.3 seconds (0.1s async, 0.2s sync)\n297 tests, 11 failures\n\n"
        "Randomized with seed 12345\n",
        286,
        11,
        "297 tests, 11 failures",
    ),
    (
        "mix",
        "Finished in 0.1 seconds (0.1s async, 0.0s sync)\n1 doctest, 388 tests, 0 failures, "
        "2 excluded\n",
        389,
        0,
        "1 doctest, 388 tests, 0 failures, 2 excluded",
    ),
    (
        "rspec",
        "..F.\n\nFailures:\n\n  1) Csv parses quoted commas\n\nFinished in 0.01 seconds "
        "(files took 0.1 seconds to load)\n4 examples, 1 failure\n\nFailed examples:\n",
        3,
        1,
        "4 examples, 1 failure",
    ),
    (
        "phpunit",
        "PHPUnit 10.5.0 by Sebastian Bergmann and contributors.\n\n..F.\n\nFAILURES!\n"
        "Tests: 4, Assertions: 9, Failures: 1.\n",
        3,
        1,
        "Tests: 4, Assertions: 9, Failures: 1",
    ),
    ("phpunit", "....\n\nOK (4 tests, 9 assertions)\n", 4, 0, "OK (4 tests, 9 assertions)"),
    (
        "dotnet",
        "  Failed Csv.Tests.ParseTests.QuotedCommas [12 ms]\n\n"
        "Failed!  - Failed:     1, Passed:    11, Skipped:     0, Total:    12, Duration: 1 s - "
        "Csv.Tests.dll (net8.0)\n",
        11,
        1,
        "Failed! - Failed: 1, Passed: 11, Skipped: 0, Total: 12",
    ),
    (
        "dotnet",
        "Test summary: total: 12, failed: 0, succeeded: 12, skipped: 0, duration: 1.1s\n"
        "Build succeeded in 3.0s\n",
        12,
        0,
        "Test summary: total: 12, failed: 0, succeeded: 12",
    ),
    (
        "maven",
        "[INFO] Tests run: 3, Failures: 0, Errors: 0, Skipped: 0, Time elapsed: 0.05 s - in "
        "csv.ParseTest\n[INFO] \n[INFO] Results:\n[INFO] \n[ERROR] Tests run: 12, Failures: 1, "
        "Errors: 0, Skipped: 0\n[INFO] \n[INFO] BUILD FAILURE\n",
        11,
        1,
        "Tests run: 12, Failures: 1, Errors: 0, Skipped: 0",
    ),
    (
        "gradle",
        "> Task :test FAILED\n\nParseTest > quotedCommas() FAILED\n\n12 tests completed, 1 failed\n\n"
        "FAILURE: Build failed with an exception.\n",
        11,
        1,
        "12 tests completed, 1 failed",
    ),
    (
        "ctest",
        "1/2 Test #1: parse ....   Passed    0.01 sec\n\n"
        "50% tests passed, 1 tests failed out of 2\n\nTotal Test time (real) =   0.02 sec\n",
        1,
        1,
        "50% tests passed, 1 tests failed out of 2",
    ),
    (
        "swift",
        "Test Suite 'All tests' failed at 2026-12-01 10:00:00.000.\n"
        "\t Executed 12 tests, with 1 failure (0 unexpected) in 0.010 (0.012) seconds\n",
        11,
        1,
        "Executed 12 tests, with 1 failure",
    ),
    (
        "node",  # the process died: its exit code hidden by `| tail`, the output says it
        "<--- Last few GCs --->\nFATAL ERROR: Reached heap limit Allocation failed - "
        "JavaScript heap out of memory\n 1: 0xb0 node::Abort()\n",
        None,
        None,
        "FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory",
    ),
    (
        "playwright",  # a test marked failed, its closing counts cut off by `| head`
        "Running 9 tests using 4 workers\n\n  \u2718  3 [chromium] \u203a v.spec.ts:10:7 \u203a "
        "Card (5.1s)\n  \u2713  4 [chromium] \u203a v.spec.ts:20:7 \u203a ok (1s)\n",
        None,
        None,
        "\u2718 3 [chromium] \u203a v.spec.ts:10:7 \u203a Card (5.1s)",
    ),
    (
        "script",  # a project's own test script: both counts on one line
        "Test 17: FFN mode=3 vs mode=2:\n  PASS\n=====\nResults: 17 passed, 0 failed out of 17 "
        "tests\n=====\n",
        17,
        0,
        "Results: 17 passed, 0 failed out of 17 tests",
    ),
    (
        "script",
        "check.sh: 2 failed / 9 passed\n",
        9,
        2,
        "check.sh: 2 failed / 9 passed",
    ),
    (
        "npm",
        "> csv@1.0.0 test\n> node run-tests.js\n\nsomething broke\n"
        "npm ERR! Test failed.  See above for more details.\n",
        None,
        None,
        "npm ERR! Test failed. See above for more details.",
    ),
    (
        "mix",
        "Compiling 3 files (.ex)\n== Compilation error in file lib/csv.ex ==\n"
        "** (CompileError) lib/csv.ex:3: undefined function x/0\n",
        None,
        None,
        "** (CompileError) lib/csv.ex:3: undefined function x/0",
    ),
]


@pytest.mark.parametrize(("runner", "output", "passed", "failed", "text"), SUMMARIES)
def test_the_summary_of_each_runner(
    runner: str, output: str, passed: int | None, failed: int | None, text: str
) -> None:
    summary = summary_of(output)
    assert summary is not None
    assert (summary.runner, summary.passed, summary.failed, summary.text) == (
        runner,
        passed,
        failed,
        text,
    )


@pytest.mark.parametrize(
    "output",
    [
        "",
        "Compiling csv v0.1.0\n    Finished dev [unoptimized] target(s) in 0.5s\n",
        "total 3\n-rw-r--r-- 1 dev dev 12 parse.py\n",
        "On branch main\nnothing to commit, working tree clean\n",
        # words that look like a summary inside other text
        "the docs say 3 passed in review\n",
        # counts indented like Playwright's, without its time or its tests' lines
        "Report:\n  3 failed\n  2 passed\n",
        # one count alone, or the same word twice, is no script's count line
        "Results: 3 passed\n",
        "3 passed, 4 passed\n",
    ],
)
def test_no_summary(output: str) -> None:
    assert summary_of(output) is None


def test_the_last_summary_wins() -> None:
    output = "1 failed, 3 passed in 0.1s\n...\n4 passed in 0.1s\n"
    summary = summary_of(output)
    assert summary is not None
    assert (summary.passed, summary.failed) == (4, 0)


def test_a_failure_marker_after_passing_counts_wins() -> None:
    output = "Tests:       12 passed, 12 total\n> build\nnpm ERR! code ELIFECYCLE\n"
    summary = summary_of(output)
    assert summary is not None
    assert (summary.runner, summary.failed) == ("npm", None)


# (command, exit code, output, is_error, status, line)
VERDICTS = [
    # a pipeline hides the failure; the output says it
    (
        "mix test 2>&1 | tail -30",
        0,
        "Finished in 1.0 seconds\n297 tests, 11 failures\n",
        False,
        FAILED,
        "failed (297 tests, 11 failures)",
    ),
    # the first failing test is named when the output names it
    (
        "pytest -q",
        1,
        "F.\nFAILED tests/test_a.py::test_b - assert 1 == 2\n1 failed, 1 passed in 0.1s",
        True,
        FAILED,
        "failed (1 failed, 1 passed in 0.1s; first: tests/test_a.py::test_b - assert 1 == 2)",
    ),
    (
        "mix test",
        2,
        "  1) test toggles done (Todo.ItemsTest)\n     test/x.exs:4\n\n3 tests, 1 failure\n",
        True,
        FAILED,
        "failed (3 tests, 1 failure; first: toggles done (Todo.ItemsTest))",
    ),
    # no match is the wanted answer
    ("rg 'TODO' src", 1, "", True, ANSWER, "no match (exit 1)"),
    ("grep -rn fallback lib/ | head -20", 0, "", False, PASSED, "passed"),
    ("cd lib && grep -q retry client.py", 1, "", True, ANSWER, "no match (exit 1)"),
    ("test -f build/out.bin", 1, "", True, ANSWER, "false (exit 1)"),
    ("[ -d .git ]", 1, "", True, ANSWER, "false (exit 1)"),
    (
        "diff -u old.txt new.txt",
        1,
        "--- old.txt\n+++ new.txt\n",
        True,
        ANSWER,
        "differences (exit 1)",
    ),
    ("cmp a.bin b.bin", 1, "a.bin b.bin differ: byte 1", True, ANSWER, "differences (exit 1)"),
    ("git diff --exit-code", 1, "diff --git a/x b/x\n", True, ANSWER, "differences (exit 1)"),
    ("which ruff", 1, "", True, ANSWER, "not found (exit 1)"),
    # grep's exit 2 is an error, git diff without --exit-code never exits 1 for a difference
    ("rg '(' src", 2, "regex parse error", True, FAILED, "failed (exit 2)"),
    ("git diff", 1, "", True, FAILED, "failed (exit 1)"),
    # a check with a grep after it: still a check
    ("pytest -q && grep -c ok log.txt", 1, "", True, FAILED, "failed (exit 1)"),
    # a check whose exit code a filter or || true stands for, and no summary
    (
        "cargo build 2>&1 | tail -5",
        0,
        "   Compiling csv\n",
        False,
        UNKNOWN,
        "unknown (the exit code is tail's)",
    ),
    (
        "npm test || true",
        0,
        "> test\n> node t.js\nok\n",
        False,
        UNKNOWN,
        "unknown (the exit code is true's)",
    ),
    ("set -o pipefail; cargo build | tail -5", 0, "", False, PASSED, "passed"),
    (
        'npx tsc --noEmit 2>&1 | grep -E "(report)" || echo "No errors in new pages"',
        0,
        "No errors in new pages",
        False,
        UNKNOWN,
        "unknown (the exit code is echo's)",
    ),
    # plain exit codes
    (
        "python -m pytest -q",
        0,
        "....\n4 passed in 0.05s",
        False,
        PASSED,
        "passed (4 passed in 0.05s)",
    ),
    (
        "python -m pytest -q tests/test_quoted.py",
        1,
        "F\n1 failed in 0.05s",
        True,
        FAILED,
        "failed (1 failed in 0.05s)",
    ),
    ("ls missing", 2, "ls: cannot access 'missing'", True, FAILED, "failed (exit 2)"),
    ("cat notes.txt", 0, "status: draft", False, PASSED, "passed"),
    ("make", None, "", True, FAILED, "failed"),
    # a check that never ran: no failure of the project
    (
        "npm run lint",
        127,
        "sh: 1: eslint: command not found",
        True,
        UNKNOWN,
        "did not run (exit 127: command or script not found)",
    ),
    (
        "bun run typecheck",
        1,
        'error: Script not found "typecheck"',
        True,
        UNKNOWN,
        "did not run (exit 1: command or script not found)",
    ),
    # a summary that says nothing ran: the exit code decides
    ("pytest -k nothing", 5, "no tests ran in 0.01s", True, FAILED, "failed (exit 5)"),
    # a signal ended it (its own pkill, Ctrl-C, the OOM killer): no result; a runner's summary
    # printed before it still counts
    (
        'pkill -f "next dev"; npm run build 2>&1 | tail -20',
        144,
        "",
        True,
        UNKNOWN,
        "killed by signal 16 (exit 144)",
    ),
    ("npm test", 130, "^C", True, UNKNOWN, "killed by signal 2 (exit 130)"),
    ("pytest -q", 137, "F\n1 failed in 0.05s", True, FAILED, "failed (1 failed in 0.05s)"),
    # the harness cut it short: the person interrupted it, or its time ran out — no result
    (
        "npx playwright test --headed",
        1,
        "[Request interrupted by user for tool use]\n[WebServer] ready",
        True,
        UNKNOWN,
        "interrupted by the person",
    ),
    (  # the tests it marked failed before the cut are no run's result (a real session's)
        "npx playwright test tests/visual/visual-regression.spec.ts --headed",
        None,
        "[Request interrupted by user for tool use]\n[WebServer] ready\n"
        "  ✘  29 [firefox] \u203a tests/visual/visual-regression.spec.ts:162:7 \u203a Responsive (13.8s)\n"
        "  ✘  31 [firefox] \u203a tests/visual/visual-regression.spec.ts:196:7 \u203a Loading (14.0s)\n",
        True,
        UNKNOWN,
        "interrupted by the person; before it: ✘ 31 [firefox] \u203a "
        "tests/visual/visual-regression.spec.ts:196:7 \u203a Loading (14.0s)",
    ),
    (
        "cd app && npm run build 2>&1 | tail -100",
        1,
        "Command timed out after 2m 0s\n\n> app@0.1.0 build\n",
        True,
        UNKNOWN,
        "timed out after 2m 0s",
    ),
    (
        "sleep 20",
        124,
        "Exit code: 124\nWall time: 10 seconds\nOutput:\ncommand timed out after 10012 milliseconds",
        True,
        UNKNOWN,
        "timed out after 10012 milliseconds",
    ),
    # a runner's summary printed before the time ran out still counts
    (
        "pytest -q",
        1,
        "Command timed out after 2m 0s\n1 failed, 3 passed in 119s",
        True,
        FAILED,
        "failed (1 failed, 3 passed in 119s)",
    ),
]


@pytest.mark.parametrize(("command", "code", "output", "is_error", "status", "line"), VERDICTS)
def test_judge(
    command: str, code: int | None, output: str, is_error: bool, status: str, line: str
) -> None:
    verdict = judge(command, code, output, is_error=is_error)
    assert (verdict.status, verdict.line()) == (status, line)


@pytest.mark.parametrize(
    ("command", "normal"),
    [
        ("mix test | tail -30", "mix test"),
        ("mix test 2>&1 | tail -n 50", "mix test"),
        ("MIX_ENV=test mix test", "mix test"),
        ("env CI=1 FOO='a b' npm test", "npm test"),
        ("cd /repo/app && python -m pytest -q tests/ 2>&1 | head -100", "pytest -q tests/"),
        ("uv run pytest -x", "pytest -x"),
        ("timeout 600 cargo test --workspace 2>/dev/null", "cargo test --workspace"),
        ("source .venv/bin/activate && pytest", "pytest"),
        ("npm test || true", "npm test"),
        ("npx jest --ci > out.txt", "jest --ci"),
        ("git add -A && git commit -m 'a | b && c'", "git add -A && git commit -m 'a | b && c'"),
        ('pytest -q; echo "exit: $?"', "pytest -q"),
        ("cat <<'EOF' > notes.md\na | b && c\nEOF", "cat"),
    ],
)
def test_normalise(command: str, normal: str) -> None:
    assert normalise(command) == normal


def test_split_chain_keeps_quotes_and_substitutions() -> None:
    assert split_chain("echo 'a|b' && x=$(ls | wc -l) | tail -1") == (
        ("", "echo 'a|b'"),
        ("&&", "x=$(ls | wc -l)"),
        ("|", "tail -1"),
    )
    assert split_chain("a 2>&1 | b") == (("", "a 2>&1"), ("|", "b"))


@pytest.mark.parametrize(
    ("later", "earlier", "expected"),
    [
        ("pytest -q", "pytest -q", True),
        ("pytest -q", "pytest -q tests/test_x.py", True),
        ("pytest -q tests/test_x.py", "pytest -q", False),
        ("pytest -q tests/test_y.py", "pytest -q tests/test_x.py", False),
        ("pytest", "pytest -x", True),
        ("git", "git commit -m x", False),  # not a check
        ("cargo test", "cargo test parse", True),
    ],
)
def test_covers(later: str, earlier: str, expected: bool) -> None:
    assert covers(later, earlier) is expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("pytest -q", True),
        ("python -m pytest", True),
        ("mix test | tail -30", True),
        ("cargo clippy -- -D warnings", True),
        ("npm run test:unit", True),
        ("npm run dev", False),
        ("npm install", False),
        ("go test ./...", True),
        ("go run .", False),
        ("rg TODO", False),
        ("cat x | grep y", False),
        ("mix credo --strict", True),
        ("dotnet test", True),
        ("./gradlew build", True),
    ],
)
def test_is_check(command: str, expected: bool) -> None:
    assert is_check(command) is expected


def test_hidden_exit() -> None:
    assert hidden_exit("pytest | tail -5") == "tail"
    assert hidden_exit("pytest || true") == "true"
    assert hidden_exit("pytest") is None
    assert hidden_exit("set -o pipefail && pytest | tail") is None


@pytest.mark.parametrize(
    ("later", "earlier", "expected"),
    [
        # a passing chain passed every step
        (
            "cargo fmt --all && cargo clippy -- -D warnings && cargo test",
            "cargo clippy -- -D warnings",
            True,
        ),
        (
            "cargo clippy -- -D warnings && cargo test",
            "cargo fmt --all && cargo clippy -- -D warnings",
            True,
        ),
        ("cargo test", "npm install && cargo clippy", False),
        # tests compile the code first
        ("cargo test --workspace", "cargo check --workspace", True),
        ("cargo clippy --workspace", "cargo check", True),
        ("cargo check", "cargo test", False),
        ("mix test", "mix compile", True),
        ("go test ./...", "go vet ./...", True),
    ],
)
def test_covers_chains_and_implied_checks(later: str, earlier: str, expected: bool) -> None:
    assert covers(later, earlier) is expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("go test ./...", True),
        ("go test -run TestParse ./cmd/cli", False),
        ("pytest -q", True),
        ("pytest -q tests/test_quoted.py", False),
        ("pytest -k quoted", False),
        ("pytest tests/test_x.py::test_a", False),
        ("npx jest src/sum.test.ts", False),
        ("mix test test/csv_test.exs", False),
        ("mise run test 2>&1 | tail -30", True),
        ("cargo test parse", True),  # a name filter cargo takes positionally is not seen
        ("rg TODO", False),  # no check at all
    ],
)
def test_whole_suite(command: str, expected: bool) -> None:
    assert whole_suite(command) is expected
