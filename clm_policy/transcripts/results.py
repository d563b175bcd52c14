"""What a command's run says, read from its output and not only from its exit code.

A pipeline's exit code is its last stage's: ``mix test | tail -30`` exits 0 while its output
says ``297 tests, 11 failures``. And a non-zero exit is sometimes the answer: ``rg PATTERN``
exits 1 when nothing matches, ``diff`` when the files differ, ``test -f x`` when there is no
``x``. So a run is judged in this order (:func:`judge`):

1. a test runner's summary in the output (:func:`summary_of`: pytest, unittest, go test,
   cargo test and nextest, jest, vitest, mocha, node's and TAP's runners, bun, deno,
   Playwright, mix test, rspec, phpunit, dotnet test, maven, gradle, ctest, swift test; else
   a project's own script's line of both counts, ``Results: 17 passed, 0 failed``), and
   the failure markers that come without counts (a compile error, ``npm ERR! Test failed``,
   ``BUILD FAILED``);
2. a command whose non-zero exit is the expected answer (:data:`ANSWERS`): grep and rg
   with no match, ``test`` / ``[``, ``diff``, ``cmp``, ``git diff --exit-code`` …;
3. the exit code, unless the command is a check whose exit code a pipeline or ``|| true``
   hides (then the result is unknown), or the check never ran (exit 126 / 127, "command not
   found", "Missing script": unknown too, not a failure of the project), or a signal ended it
   (exit 129 to 192 without a runner's summary: interrupted, killed — no result);
4. the agent tool's own error flag; without an exit code and without it, the result is unknown.

:func:`normalise` gives the command a run is "the same as" (``| tail -N``, ``2>&1``,
environment prefixes, ``cd x &&``, ``python -m`` … stripped), so that a failing run can be
matched with a later passing run of the same command (:func:`covers`).

Each runner's pattern follows its documented summary line; tests/transcripts/test_results.py
holds one real-looking output per runner.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from clm_policy.base.errors import clipped_line

OUTPUT_SCAN = 16 * 1024
"""Characters at the end of an output that are searched for a summary."""

PASSED = "passed"
FAILED = "failed"
ANSWER = "answer"
"""A non-zero exit that is the command's answer (no match, files differ), not a failure."""
UNKNOWN = "unknown"
"""A check whose exit code a pipeline or ``|| true`` hides, and whose output has no summary."""
PENDING = "pending"
"""No result (yet): the transcript ends before it, or the command runs in the background."""


@dataclass(frozen=True, slots=True)
class Summary:
    """A test runner's summary: ``runner``, the counts it gave (``passed`` None when it gave
    none), ``failed`` (failures and errors; None for a failure marker without counts) and
    ``text``, the summary as the runner printed it, on one line."""

    runner: str
    passed: int | None
    failed: int | None
    text: str


@dataclass(frozen=True, slots=True)
class Verdict:
    """What a run came to: ``status`` (:data:`PASSED`, :data:`FAILED`, :data:`ANSWER`,
    :data:`UNKNOWN` or :data:`PENDING`), ``text`` saying it in a few words (``297 tests, 11
    failures``, ``no match (exit 1)``, ``exit 2``) and the runner's ``summary`` when there was
    one."""

    status: str
    text: str
    summary: Summary | None = None

    def line(self) -> str:
        """``passed``, ``failed (297 tests, 11 failures)``, ``no match (exit 1)``."""
        if self.status in (PASSED, FAILED) and self.text:
            return f"{self.status} ({self.text})"
        if self.status == PENDING:
            return "no result"
        return self.text or self.status


# ---------------------------------------------------------------------------------------------
# Test runners' summaries

_M = re.M
_GATES: dict[re.Pattern[str], tuple[str, ...]] = {}
"""Each summary's pattern and the words it cannot be without: it is searched only when one of
them is in the output (most outputs hold no summary; a substring test costs far less than a
multi-line search)."""


def _gated(pattern: str, needles: tuple[str, ...], flags: int = _M) -> re.Pattern[str]:
    compiled = re.compile(pattern, flags)
    _GATES[compiled] = needles
    return compiled


_PYTEST = _gated(
    r"^[= ]*((?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?|"
    r"rerun)(?:, )?)+) in [\d.]+s(?: \([\d:]+\))?[= ]*$",
    ("passed in", "failed in", "error in", "errors in", "skipped in", "deselected in",
     "warning in", "warnings in", "xfailed in", "xpassed in", "rerun in"),
)  # fmt: skip
_PYTEST_NONE = _gated(r"^[= ]*no tests ran in [\d.]+s[= ]*$", ("no tests ran",))
_UNITTEST = _gated(
    r"^Ran (\d+) tests? in [\d.]+s\s*\n\s*\n?(OK|FAILED)(?: \(([^)\n]*)\))?[ \t]*$", ("Ran ",)
)
_CARGO = _gated(
    r"^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed;[^\n]*$", ("test result:",)
)
_NEXTEST = _gated(r"^\s*Summary \[[^\]\n]*\]\s+(\d+ tests? run: [^\n]*)$", ("Summary [",))
_GO_OK = _gated(r"^ok\s+\S+\s+(?:[\d.]+s|\(cached\))", ("ok ",))
_GO_FAIL = _gated(r"^FAIL\s+\S+\s+(?:[\d.]+s|\[build failed\]|\[setup failed\])", ("FAIL",))
_GO_FAILED_TEST = _gated(r"^\s*--- FAIL: (\S+)", ("--- FAIL",))
_JEST = _gated(r"^Tests:\s+([^\n]*?\d+ total)\s*$", ("Tests:",))
_VITEST = _gated(r"^\s*Tests\s+((?:\d+ \w+(?: \| )?)+)\s*\((\d+)\)\s*$", ("Tests ",))
_MOCHA_PASS = _gated(r"^\s+(\d+) passing \([^)\n]*\)\s*$", ("passing (",))
_MOCHA_FAIL = re.compile(r"^\s+(\d+) failing\s*$", _M)
_NODE = _gated(  # TAP, node --test
    "^(?:#|\u2139) (pass|fail) (\\d+)\\s*$", ("# pass", "# fail", "\u2139 pass", "\u2139 fail")
)
_BUN = _gated(r"^\s*(\d+) (pass|fail)\s*$", (" pass", " fail"))
_BUN_RAN = re.compile(r"^\s*Ran (\d+) tests? across", _M)
_DENO = _gated(
    r"^(ok|FAILED) \| (\d+) passed(?: \(\d+ steps?\))? \| (\d+) failed(?: \([^)\n]*\))?",
    ("passed |",),
)
_PLAYWRIGHT = _gated(
    r"^(?:\x1b?\[[\d;]*m)*  (\d+) (failed|flaky|interrupted|skipped|did not run|"
    r"passed(?: \([\d.]+(?:ms|s|m|h)\))?)(?:\x1b?\[[\d;]*m)*[ \t]*$",
    (" failed\n", " passed (", " failed\x1b", " failed\r"),
)
_PLAYWRIGHT_TEST = re.compile(r"^ {4}\S[^\n]* \u203a ", _M)
"""A test's line under Playwright's counts (``    [chromium] \u203a a.spec.ts:4:7 \u203a t``)."""
_MIX = _gated(
    r"^((?:\d+ doctests?, )?(?:\d+ propert(?:y|ies), )?(\d+) tests?, (\d+) failures?"
    r"(?:, \d+ (?:excluded|skipped|invalid))*)\s*$",
    (" failure",),
)
_MIX_DOCTESTS = re.compile(r"(\d+) doctests?")
_RSPEC = _gated(r"^((\d+) examples?, (\d+) failures?(?:, \d+ pending)?)", (" example",))
_PHPUNIT_OK = _gated(r"^OK \((\d+) tests?, \d+ assertions?\)", ("OK (",))
_PHPUNIT = _gated(r"^(Tests: (\d+), Assertions: \d+(?:, \w+: \d+)*)\.", ("Assertions:",))
_PHPUNIT_BAD = re.compile(r"(?:Errors|Failures): (\d+)")
_DOTNET = _gated(
    r"^\s*(?:Passed|Failed)!\s+-\s+Failed:\s+(\d+), Passed:\s+(\d+), Skipped:\s+\d+, "
    r"Total:\s+(\d+)",
    ("Passed!", "Failed!"),
)
_DOTNET_OLD = _gated(r"^Total tests: (\d+)\. Passed: (\d+)\. Failed: (\d+)\.", ("Total tests:",))
_DOTNET_NEW = _gated(
    r"^Test summary: total: (\d+), failed: (\d+), succeeded: (\d+)",
    ("summary:", "Summary:"),
    flags=re.M | re.I,
)
_MAVEN = _gated(
    r"^\[(?:INFO|ERROR|WARNING)\] (Tests run: (\d+), Failures: (\d+), Errors: (\d+), "
    r"Skipped: \d+)\s*$",
    ("Tests run:",),
)
_GRADLE = _gated(
    r"^((\d+) tests? completed, (\d+) failed(?:, \d+ skipped)?)",
    ("tests completed", "test completed"),
)
_CTEST = _gated(r"^(\d+% tests passed, (\d+) tests? failed out of (\d+))", ("% tests passed",))
_SWIFT = _gated(r"Executed (\d+) tests?, with (\d+) failures?", ("Executed ",))
_MARKERS = (
    ("cargo", _gated(r"^error: (?:could not compile|test failed)[^\n]*", ("error",))),
    ("cargo", _gated(r"^error\[E\d+\]:[^\n]*", ("error",))),
    (
        "mix",
        _gated(
            r"^== Compilation error[^\n]*|^\*\* \((?:CompileError|SyntaxError)\)[^\n]*",
            ("Compilation error", "** ("),
        ),
    ),
    ("npm", _gated(r"^npm (?:ERR!|error) (?:Test failed|code ELIFECYCLE)[^\n]*", ("npm ",))),
    ("gradle", _gated(r"^BUILD FAILED\b[^\n]*", ("BUILD FAILED",))),
    (
        "maven",
        _gated(r"^\[ERROR\] BUILD FAILURE\b[^\n]*|^BUILD FAILURE\b[^\n]*", ("BUILD FAILURE",)),
    ),
    (
        "pytest",
        _gated(
            r"^(?:ERROR: |Interrupted: )\d+ errors? during collection[^\n]*", ("during collection",)
        ),
    ),
    ("dotnet", _gated(r"^Test Run (?:Failed|Aborted)\.[^\n]*", ("Test Run ",))),
    ("go", _gated(r"^FAIL\s*$", ("FAIL",))),
    (
        "build",
        _gated(
            r"^Failed to compile\.?[^\n]*|^Type error: [^\n]*|^Build failed\b[^\n]*",
            ("Failed to compile", "Type error", "Build failed"),
        ),
    ),
    ("node", _gated(r"^FATAL ERROR: [^\n]*", ("FATAL ERROR: ",))),  # heap out of memory: it died
    ("playwright", _gated(r"^\s*\u2718\s+\d+ \[[^\]\n]+\] \u203a [^\n]*", ("\u2718",))),
)
_SCRIPT = _gated(
    r"^[^\n]{0,60}?\b(\d+) (passed|failed)[,;|/ ]+(\d+) (passed|failed)\b[^\n]{0,60}$", (" passed",)
)
"""A project's own test script's count line, both counts on it (``Results: 17 passed, 0
failed out of 17 tests``): read only when no runner's summary is there."""
_SUCCESS = (
    ("build", _gated(r"^\s*(?:✓\s*)?Compiled successfully\b[^\n]*", ("Compiled successfully",))),
    ("build", _gated(r"^\s*✓ built in [\d.]+m?s\b[^\n]*", ("built in",))),
    (
        "build",
        _gated(
            r"^Build succeeded\.?[^\n]*|^BUILD SUCCESS(?:FUL)?\b[^\n]*",
            ("Build succeeded", "BUILD SUCCESS"),
        ),
    ),
    (
        "cargo",
        _gated(r"^\s*Finished `\w+` profile \[[^\]]*\] target\(s\) in [^\n]*", ("Finished `",)),
    ),
)
"""What a build prints when it succeeded: a passed result when its exit code is hidden."""


def _counts(text: str, words: dict[str, str]) -> tuple[int, int]:
    """(passed, failed) from ``3 passed, 1 failed``, for the words given (word in the text ->
    ``passed`` or ``failed``)."""
    found = {"passed": 0, "failed": 0}
    for number, word in re.findall(r"(\d+) (\w+)", text):
        key = words.get(word)
        if key is not None:
            found[key] += int(number)
    return found["passed"], found["failed"]


_JS_WORDS = {"passed": "passed", "failed": "failed"}
_PYTEST_WORDS = {**_JS_WORDS, "xpassed": "passed", "error": "failed", "errors": "failed"}


def _flat(text: str) -> str:
    return " ".join(text.replace("=", " ").split())


def _find(pattern: re.Pattern[str], output: str) -> Iterator[re.Match[str]]:
    """``pattern``'s matches in ``output``, when one of its gate words is there."""
    if any(n in output for n in _GATES[pattern]):
        yield from pattern.finditer(output)


def _candidates(output: str) -> list[tuple[int, Summary]]:
    """Every summary in ``output`` with the position where it ends."""
    return [
        *_python_summaries(output),
        *_rust_summaries(output),
        *_go_summaries(output),
        *_javascript_summaries(output),
        *_elixir_ruby_php_summaries(output),
        *_dotnet_summaries(output),
        *_jvm_ctest_swift_summaries(output),
    ]


def _python_summaries(output: str) -> Iterator[tuple[int, Summary]]:
    """pytest's and unittest's summaries in ``output``, with where each ends."""
    for m in _find(_PYTEST, output):
        counts = _counts(m.group(1), _PYTEST_WORDS)
        yield m.end(), Summary("pytest", *counts, _flat(m.group(0)))
    for m in _find(_PYTEST_NONE, output):
        yield m.end(), Summary("pytest", 0, 0, _flat(m.group(0)))
    for m in _find(_UNITTEST, output):
        total = int(m.group(1))
        bad = sum(int(n) for n in re.findall(r"(?:failures|errors)=(\d+)", m.group(3) or ""))
        skipped = sum(int(n) for n in re.findall(r"skipped=(\d+)", m.group(3) or ""))
        text = f"Ran {total} tests: {m.group(2)}" + (f" ({m.group(3)})" if m.group(3) else "")
        yield m.end(), Summary("unittest", max(total - bad - skipped, 0), bad, text)


def _rust_summaries(output: str) -> Iterator[tuple[int, Summary]]:
    """cargo's summary (its test binaries' lines summed) and nextest's in ``output``, with
    where each ends."""
    cargo = list(_find(_CARGO, output))
    if cargo:
        passed = sum(int(m.group(2)) for m in cargo)
        failed = sum(int(m.group(3)) for m in cargo)
        text = (
            _flat(cargo[0].group(0))
            if len(cargo) == 1
            else f"test result: {passed} passed; {failed} failed ({len(cargo)} test binaries)"
        )
        yield cargo[-1].end(), Summary("cargo", passed, failed, text)
    for m in _find(_NEXTEST, output):
        counts = _counts(m.group(1), {"passed": "passed", "failed": "failed", "out": "failed"})
        yield m.end(), Summary("nextest", *counts, _flat(m.group(1)))


def _go_summaries(output: str) -> list[tuple[int, Summary]]:
    """``go test``'s packages in ``output`` as one summary, with where the last ends."""
    go_ok = list(_find(_GO_OK, output))
    go_fail = list(_find(_GO_FAIL, output))
    if not (go_ok or go_fail):
        return []
    names = list(dict.fromkeys(m.group(1) for m in _find(_GO_FAILED_TEST, output)))
    end = max(m.end() for m in go_ok + go_fail)
    text = f"{len(go_ok)} packages ok, {len(go_fail)} failed"
    if names:
        text += f" ({', '.join(names[:5])}{', …' if len(names) > 5 else ''})"
    failed = max(len(names), len(go_fail)) if go_fail else 0
    return [(end, Summary("go", len(go_ok), failed, text))]


def _javascript_summaries(output: str) -> Iterator[tuple[int, Summary]]:
    """jest's, vitest's, mocha's, node's, bun's, deno's and Playwright's summaries in
    ``output``, with where each ends."""
    for m in _find(_JEST, output):
        text = _flat(f"Tests: {m.group(1)}")
        yield m.end(), Summary("jest", *_counts(m.group(1), _JS_WORDS), text)
    for m in _find(_VITEST, output):
        text = _flat(f"Tests {m.group(1)} ({m.group(2)})")
        yield m.end(), Summary("vitest", *_counts(m.group(1), _JS_WORDS), text)
    for m in _find(_MOCHA_PASS, output):
        after = _MOCHA_FAIL.search(output, m.end(), m.end() + 200)  # just after it
        failed = int(after.group(1)) if after else 0
        text = f"{m.group(1)} passing" + (f", {failed} failing" if after else "")
        end = after.end() if after else m.end()
        yield end, Summary("mocha", int(m.group(1)), failed, text)
    node = list(_find(_NODE, output))
    if node:
        c = {m.group(1): int(m.group(2)) for m in node}
        text = f"pass {c.get('pass', 0)}, fail {c.get('fail', 0)}"
        yield node[-1].end(), Summary("node", c.get("pass", 0), c.get("fail", 0), text)
    bun = list(_find(_BUN, output))
    ran = _BUN_RAN.search(output) if "Ran " in output else None
    if bun and ran:
        c = {m.group(2): int(m.group(1)) for m in bun}
        text = f"{c.get('pass', 0)} pass, {c.get('fail', 0)} fail"
        yield ran.end(), Summary("bun", c.get("pass", 0), c.get("fail", 0), text)
    for m in _find(_DENO, output):
        yield m.end(), Summary("deno", int(m.group(2)), int(m.group(3)), _flat(m.group(0)))
    playwright = _playwright(output)
    if playwright is not None:
        yield playwright


def _playwright(output: str) -> tuple[int, Summary] | None:
    """Playwright's closing counts (``  4 failed``, the failed tests' lines, ``  5 passed
    (20.8s)``), the last block of them; a block is counts with nothing between them but the
    tests' lines, and is taken only with a passed line that gives the time or a failed line
    followed by its tests."""
    blocks: list[list[re.Match[str]]] = []
    for m in _find(_PLAYWRIGHT, output):
        gap = output[blocks[-1][-1].end() : m.start()] if blocks else ""
        if blocks and all(not line.strip() or line.startswith("    ") for line in gap.split("\n")):
            blocks[-1].append(m)
        else:
            blocks.append([m])
    for block in reversed(blocks):
        timed = any(m.group(2).startswith("passed (") for m in block)
        listed = any(
            m.group(2) == "failed" and _PLAYWRIGHT_TEST.match(output, m.end() + 1) for m in block
        )
        if timed or listed:
            counts = {m.group(2).split(" (")[0]: int(m.group(1)) for m in block}
            passed = counts.get("passed", 0) + counts.get("flaky", 0)
            failed = counts.get("failed", 0) + counts.get("interrupted", 0)
            text = ", ".join(f"{n} {word}" for word, n in counts.items())
            return block[-1].end(), Summary("playwright", passed, failed, text)
    return None


def _elixir_ruby_php_summaries(output: str) -> Iterator[tuple[int, Summary]]:
    """mix's, rspec's and phpunit's summaries in ``output``, with where each ends."""
    for m in _find(_MIX, output):
        tests, failures = int(m.group(2)), int(m.group(3))
        doctests = _MIX_DOCTESTS.match(m.group(1))
        total = tests + (int(doctests.group(1)) if doctests else 0)
        yield m.end(), Summary("mix", total - failures, failures, _flat(m.group(1)))
    for m in _find(_RSPEC, output):
        examples, failures = int(m.group(2)), int(m.group(3))
        yield m.end(), Summary("rspec", examples - failures, failures, _flat(m.group(1)))
    for m in _find(_PHPUNIT_OK, output):
        yield m.end(), Summary("phpunit", int(m.group(1)), 0, _flat(m.group(0)))
    for m in _find(_PHPUNIT, output):
        bad = sum(int(n) for n in _PHPUNIT_BAD.findall(m.group(1)))
        tests = int(m.group(2))
        yield m.end(), Summary("phpunit", tests - bad, bad, _flat(m.group(1)))


def _dotnet_summaries(output: str) -> Iterator[tuple[int, Summary]]:
    """``dotnet test``'s summaries in ``output`` (its ``Passed!`` / ``Failed!`` lines summed),
    with where each ends."""
    dotnet = list(_find(_DOTNET, output))
    if dotnet:
        failed = sum(int(m.group(1)) for m in dotnet)
        passed = sum(int(m.group(2)) for m in dotnet)
        text = (
            _flat(dotnet[0].group(0)) if len(dotnet) == 1 else f"{passed} passed, {failed} failed"
        )
        yield dotnet[-1].end(), Summary("dotnet", passed, failed, text)
    for m in _find(_DOTNET_OLD, output):
        yield m.end(), Summary("dotnet", int(m.group(2)), int(m.group(3)), _flat(m.group(0)))
    for m in _find(_DOTNET_NEW, output):
        yield m.end(), Summary("dotnet", int(m.group(3)), int(m.group(2)), _flat(m.group(0)))


def _jvm_ctest_swift_summaries(output: str) -> Iterator[tuple[int, Summary]]:
    """maven's totals (its last ``Tests run:`` line), gradle's, ctest's and swift's summaries
    in ``output``, with where each ends."""
    maven = list(_find(_MAVEN, output))
    if maven:
        m = maven[-1]  # the totals come last
        runs, failures, errors = int(m.group(2)), int(m.group(3)), int(m.group(4))
        bad = failures + errors
        yield m.end(), Summary("maven", runs - bad, bad, _flat(m.group(1)))
    for m in _find(_GRADLE, output):
        tests, failed = int(m.group(2)), int(m.group(3))
        yield m.end(), Summary("gradle", tests - failed, failed, _flat(m.group(1)))
    for m in _find(_CTEST, output):
        failed, total = int(m.group(2)), int(m.group(3))
        yield m.end(), Summary("ctest", total - failed, failed, _flat(m.group(1)))
    swift = list(_find(_SWIFT, output))
    if swift:
        m = swift[-1]
        tests, failed = int(m.group(1)), int(m.group(2))
        yield m.end(), Summary("swift", tests - failed, failed, _flat(m.group(0)))


def summary_of(output: str) -> Summary | None:
    """The test runner's summary in ``output``: the last one printed (cargo's and dotnet's
    per-binary lines and go's per-package lines summed); a failure marker without counts (a
    compile error, ``npm ERR! Test failed``) when no summary follows it; None when there is
    neither."""
    text = output[-OUTPUT_SCAN:]
    found = _candidates(text)
    marker: tuple[int, Summary] | None = None
    for runner, pattern in _MARKERS:
        for m in _find(pattern, text):
            if marker is None or m.end() > marker[0]:
                marker = (m.end(), Summary(runner, None, None, " ".join(m.group(0).split())))
    if not found:  # a script's own counts, when no test runner counted anything
        for m in _find(_SCRIPT, text):
            if m.group(2) != m.group(4):
                passed, failed = (m.group(1), m.group(3))[:: 1 if m.group(2) == "passed" else -1]
                found.append((m.end(), Summary("script", int(passed), int(failed), _flat(m[0]))))
    if not found:  # a build's success line, when no test runner counted anything
        for runner, pattern in _SUCCESS:
            for m in _find(pattern, text):
                found.append((m.end(), Summary(runner, None, 0, " ".join(m.group(0).split()))))
    last = max(found, key=lambda pair: pair[0]) if found else None
    if last is None:
        return marker[1] if marker else None
    summary = last[1]
    if marker is not None and marker[0] > last[0] and summary.failed == 0:
        # counts that say nothing failed, then a failure (a build step after the tests)
        return marker[1]
    return summary


_FIRST_FAILURE = (
    re.compile(r"^(?:FAILED|ERROR) (\S+::\S+(?: - [^\n]+)?)", _M),  # pytest, with its reason
    re.compile(r"^(?:FAIL|ERROR): (\S+ \([\w.]+\))", _M),  # unittest
    re.compile(r"^test (\S+) \.\.\. FAILED", _M),  # cargo
    re.compile(r"^\s*\d+\) test (.+? \([\w.]+\))\s*$", _M),  # ExUnit
    re.compile(r"^rspec (\./\S+:\d+)", _M),
    re.compile(r"^\s*● (.+)$", _M),  # jest
    re.compile(r"^\s*(?:FAIL|\u00d7)\s+(\S+\.(?:test|spec)\.\S+(?: > .+)?)$", _M),  # vitest
    re.compile(r"^\s*\u276f (\S+\.(?:test|spec)\.\S+) \(\d+ tests? \| \d+ failed\)", _M),
    re.compile(r"^\s*Failed (\S+) \[", _M),  # dotnet
)


def first_failure(output: str) -> str | None:
    """The first failing test an output names (pytest's node id, cargo's test, ExUnit's
    ``test name (Module)``, …), or None."""
    text = output[-OUTPUT_SCAN:]
    found = [(m.start(), m.group(1).strip()) for p in _FIRST_FAILURE for m in p.finditer(text)]
    return min(found)[1][:160] if found else None


# ---------------------------------------------------------------------------------------------
# Commands: their stages, the same command, checks and answers

_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")
_REDIRECT = re.compile(r"\s*(?:\d*>&\d+|&>>?\s*\S+|\d*>>?\s*\S+|<\s*\S+)")
_ENV = re.compile(
    r"^(?:env\s+(?:-\S+\s+)*)?(?:[A-Za-z_][A-Za-z0-9_]*=(?:'[^']*'|\"[^\"]*\"|\S*)\s+)+"
)
_WRAPPERS = re.compile(
    r"^(?:(?:time|nice|nohup|command|exec)\s+|timeout\s+(?:-\S+\s+)*\S+\s+|"
    r"(?:python3?|py)\s+-m\s+|uv\s+run\s+(?:-\S+\s+)*|poetry\s+run\s+|pipenv\s+run\s+|"
    r"hatch\s+run\s+|pdm\s+run\s+|npx\s+(?:-\S+\s+)*|pnpm\s+exec\s+|bunx\s+|"
    r"bundle\s+exec\s+|dotenv\s+(?:-\S+\s+)*--\s+)+"
)
FILTERS = frozenset(
    {"tail", "head", "grep", "egrep", "fgrep", "rg", "less", "more", "cat", "tee", "sed",
     "awk", "sort", "uniq", "wc", "cut", "tr", "jq", "column", "nl", "fold", "ts"}
)  # fmt: skip
"""Programs that, after a ``|``, only show part of a command's output (and set the pipeline's
exit code)."""

_SETUP = re.compile(
    r"^(?:cd|pushd|popd|set|export|source|\.|unset|ulimit|umask|true|:|echo|printf|sleep|clear)"
    r"(?:\s|$)"
)

ANSWERS: dict[str, str] = {
    **dict.fromkeys(
        ("grep", "egrep", "fgrep", "zgrep", "rg", "ag", "ack", "git grep", "pgrep"), "no match"
    ),
    **dict.fromkeys(("test", "[", "[[", "git merge-base"), "false"),
    **dict.fromkeys(("diff", "cmp", "git diff"), "differences"),
    **dict.fromkeys(("which", "command -v", "type"), "not found"),
}
"""Programs whose exit status 1 answers the question asked (and what it means)."""

_CHECK_PROGRAMS = frozenset(
    {"pytest", "py.test", "tox", "nox", "unittest", "mypy", "pyright", "ruff", "flake8",
     "pylint", "black", "isort", "jest", "vitest", "mocha", "eslint", "tsc", "prettier",
     "rspec", "rubocop", "phpunit", "ctest", "make", "ninja", "golangci-lint", "shellcheck",
     "credo", "biome", "playwright", "cypress", "ava", "tap", "karma", "bats"}
)  # fmt: skip
_CHECK_SUBCOMMANDS = {
    "go": frozenset({"test", "vet", "build"}),
    "cargo": frozenset({"test", "nextest", "build", "check", "clippy", "fmt", "bench"}),
    "npm": frozenset({"test", "t", "run", "ci", "run-script"}),
    "yarn": frozenset({"test", "run", "build", "lint", "typecheck"}),
    "pnpm": frozenset({"test", "run", "build", "lint", "typecheck"}),
    "bun": frozenset({"test", "run"}),
    "deno": frozenset({"test", "lint", "check", "fmt"}),
    "mix": frozenset({"test", "compile", "credo", "format", "dialyzer"}),
    "rake": frozenset({"test", "spec"}),
    "dotnet": frozenset({"test", "build"}),
    **dict.fromkeys(
        ("mvn", "./mvnw", "mvnw"), frozenset({"test", "verify", "package", "install", "compile"})
    ),
    **dict.fromkeys(("gradle", "./gradlew", "gradlew"), frozenset({"test", "build", "check"})),
    "swift": frozenset({"test", "build"}),
    "zig": frozenset({"test", "build"}),
    "composer": frozenset({"test"}),
    "bazel": frozenset({"test", "build"}),
    "uv": frozenset({"build"}),
    "mise": frozenset({"run", "test", "lint", "build", "check"}),
    "just": frozenset({"test", "lint", "build", "check", "ci"}),
    "task": frozenset({"test", "lint", "build", "check", "ci"}),
}
_RUN_SCRIPTS = re.compile(r"\b(?:test|tests|build|lint|check|typecheck|types|verify|ci)\b")


@lru_cache(maxsize=1024)
def split_chain(command: str) -> tuple[tuple[str, str], ...]:
    """The command's top-level pieces with the operator before each: ``[("", "cd x"), ("&&",
    "pytest -q"), ("|", "tail -5")]``. Quotes, ``$(...)`` and heredoc bodies are not split."""
    text = _unwrapped(_strip_heredocs(command))
    pieces: list[tuple[str, str]] = []
    current: list[str] = []
    op = ""
    i, n = 0, len(text)
    quote: str | None = None
    depth = 0
    while i < n:
        c = text[i]
        if c == "\\" and quote != "'" and i + 1 < n:  # an escaped character, but in '…'
            current.append(text[i : i + 2])
            i += 2
            continue
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")" and depth:
            depth -= 1
        elif depth == 0:
            two = text[i : i + 2]
            if two in ("&&", "||"):
                pieces.append((op, "".join(current).strip()))
                op, current = two, []
                i += 2
                continue
            if c in ";\n|" or (c == "&" and two != "&>" and not (i and text[i - 1] in "<>")):
                pieces.append((op, "".join(current).strip()))
                op, current = ("|" if c == "|" else ";"), []
                i += 1
                continue
        current.append(c)
        i += 1
    pieces.append((op, "".join(current).strip()))
    return tuple((o, p) for o, p in pieces if p)


_QUOTED_WRAPPER = re.compile(
    r"^\s*(?:(?:/usr/bin/|/bin/)?(?:ba|z|da)?sh\s+-l?c|nix-shell\b.*?--run|"
    r"pwsh(?:\.exe)?\s+(?:-\w+\s+)*-(?:Command|c)|"
    r"powershell(?:\.exe)?\s+(?:-\w+\s+)*-(?:Command|c)|cmd(?:\.exe)?\s+/[cC])\s+"
    r"(['\"])(.*)\1\s*$",
    re.S,
)
_ARGV_WRAPPER = re.compile(
    r"^\s*(?:nix\s+develop(?:\s+[^-\s]\S*)*\s+(?:-c|--command)|"
    r"docker\s+(?:compose\s+)?exec(?:\s+-\w+)*\s+\S+|wsl(?:\.exe)?\s+(?:-e|--exec|--))\s+(.*)$",
    re.S,
)


def _unwrapped(command: str) -> str:
    """The command a wrapper runs (``nix develop -c bash -lc '…'``, ``sh -c "…"``, ``pwsh
    -Command "…"``, ``docker compose exec app …``): the command inside, unwrapped again if it
    is one too."""
    for _ in range(4):
        m = _QUOTED_WRAPPER.match(command)
        if m is not None:
            command = m.group(2)
            continue
        m = _ARGV_WRAPPER.match(command)
        if m is None or "&&" in command[: m.start(1)]:
            return command
        command = m.group(1)
    return command


def _strip_heredocs(command: str) -> str:
    out: list[str] = []
    ending: list[str] = []
    for line in command.split("\n"):
        if ending:
            if line.strip() == ending[0]:
                ending.pop(0)
            continue
        out.append(line)
        ending += [m.group(2) for m in _HEREDOC.finditer(line)]
    return "\n".join(out)


def program(stage: str) -> str:
    """The program a stage runs, after environment prefixes and wrappers: ``pytest``, ``git
    diff``, ``npm`` … (two words for git and ``command -v``)."""
    words = _core(stage).split()
    if not words:
        return ""
    first = words[0].rsplit("/", 1)[-1] if not words[0].startswith("./") else words[0]
    if first in ("git", "command") and len(words) > 1:
        second = next((w for w in words[1:] if not w.startswith("-")), "")
        if first == "command" and words[1] == "-v":
            return "command -v"
        return f"{first} {second}".strip()
    return first


def _core(stage: str) -> str:
    """A stage without redirections, environment assignments and wrappers; a Windows program
    named as its Unix form (``C:\\nodejs\\npm.cmd`` -> ``npm``, ``pytest.exe`` -> ``pytest``)."""
    text = _REDIRECT.sub("", stage).strip()
    previous = None
    while previous != text:
        previous = text
        text = _ENV.sub("", text)
        text = _WRAPPERS.sub("", text)
        text = _WINDOWS_WRAPPERS.sub("", text)
        text = _WINDOWS_PROGRAM.sub(_unix_name, text, count=1)
    return " ".join(text.split())


_WINDOWS_WRAPPERS = re.compile(r"^(?:&\s+|cmd(?:\.exe)?\s+/[cC]\s+|call\s+|start\s+/b\s+)", re.I)
"""PowerShell's call operator, ``cmd /c``, ``call``: the program follows."""
_WINDOWS_PROGRAM = re.compile(r"^(?:\"([^\"]+)\"|'([^']+)'|(\S+))(?=\s|$)")


def _unix_name(m: re.Match[str]) -> str:
    word = m.group(1) or m.group(2) or m.group(3) or ""
    if "\\" not in word and not re.search(r"\.(?:exe|cmd|bat|ps1)$", word, re.I):
        return m.group(0)
    base = word.rsplit("\\", 1)[-1].rsplit("/", 1)[-1]
    stem = re.sub(r"\.(?:exe|cmd|bat|ps1)$", "", base, flags=re.I)
    return stem.lower() if stem.lower() in _WINDOWS_KNOWN or stem.lower() == "py" else stem


_WINDOWS_KNOWN = frozenset(
    {"npm", "npx", "pnpm", "yarn", "node", "python", "python3", "pytest", "cargo", "go",
     "dotnet", "mvn", "gradle", "gradlew", "tsc", "eslint", "jest", "vitest", "bun", "deno"}
)  # fmt: skip


def normalise(command: str) -> str:
    """The command a run is "the same as": set-up steps (``cd x``, ``export``, ``source``) and
    trailing ``|| true`` / ``echo`` steps dropped, each pipeline cut to its first stage
    (``| tail -30`` and other filters dropped), redirections (``2>&1``), environment prefixes
    and wrappers (``timeout 60``, ``python -m``, ``uv run``, ``npx``) removed, whitespace
    collapsed."""
    kept: list[str] = []
    for op, piece in split_chain(command):
        core = _core(piece)
        if op == "|":
            if program(piece) not in FILTERS:
                kept.append(core)
        elif (
            core and not _SETUP.match(core) and not (op == "||" and core in ("true", ":", "exit 0"))
        ):
            kept.append(core)
    return " && ".join(kept)


IMPLIES: dict[str, tuple[str, ...]] = {
    "cargo test": ("cargo check", "cargo build"),
    "cargo nextest": ("cargo check", "cargo build"),
    "cargo clippy": ("cargo check",),
    "cargo build": ("cargo check",),
    "go test": ("go build", "go vet"),
    "mix test": ("mix compile",),
    "dotnet test": ("dotnet build",),
    "swift test": ("swift build",),
    "zig build test": ("zig build",),
}
"""A check whose passing run vouches for another: tests compile the code first."""


def _args(words: list[str]) -> set[str]:
    return {w.rstrip("/") or w for w in words}


def _covers_step(later: str, earlier: str) -> bool:
    if later == earlier:
        return True
    a, b = later.split(), earlier.split()
    head = 2 if a[:1] and a[0] in _CHECK_SUBCOMMANDS else 1
    if a[:head] == b[:head] and _args(a[head:]) <= _args(b[head:]) and _is_check_stage(later):
        return True  # the same check with the same or fewer arguments, in any order
    return any(
        later.startswith(head) and earlier.startswith(implied) for head, implied in IMPLIES.items()
    )


def covers(later: str, earlier: str) -> bool:
    """Whether a passing run of ``later`` (normalised) vouches for ``earlier``: the same
    command; the same with fewer arguments (``pytest -q`` covers ``pytest -q tests/test_x.py``,
    ``pytest`` covers ``pytest -x``) when it is a check; a check that implies it (``cargo
    test`` covers ``cargo check``: :data:`IMPLIES`); and for chains (``a && b``), when every
    check of ``earlier`` is covered by a step of ``later`` (a passing chain passed every step).
    A run in another folder than the project's (``npm run build (in apps/admin)``) is covered
    only by a run in that folder."""
    if later == earlier:
        return True
    folder, later = split_folder(later)
    there, earlier = split_folder(earlier)
    if folder != there:
        return False
    steps = later.split(" && ")
    wanted = [s for s in earlier.split(" && ") if _is_check_stage(s)] or [earlier]
    return all(any(_covers_step(s, w) for s in steps) for w in wanted)


_IN_FOLDER = re.compile(r" \(in [^()]+\)$")
"""The folder a run's command ran in, when not the project's (``WorkLog``'s record)."""


def split_folder(normal: str) -> tuple[str, str]:
    """(the folder a normalised run names, ``""`` for the project's; the run without it)."""
    m = _IN_FOLDER.search(normal)
    return (m[0], normal[: m.start()]) if m else ("", normal)


_NARROWING = re.compile(
    r"(?:^|\s)(?:-run|-k|-t|-m|--filter|--grep|--testNamePattern|--test-name-pattern|-p|--package|"
    r"--only|--tests?)(?:[=\s]|$)|(?:^|[\s/])(?:test_[\w-]*\.py|[\w-]+_test\.(?:go|py|exs)|"
    r"[\w.-]+\.(?:test|spec)\.[jt]sx?|[\w-]+_spec\.rb|[\w-]+Tests?\.\w+)(?:[\s:]|$)|::"
)


def whole_suite(command: str) -> bool:
    """Whether a check runs a whole suite rather than some tests of it: no test named, no test
    file, no filter (``-k``, ``-run``, ``--filter`` …)."""
    return is_check(command) and not _NARROWING.search(normalise(command))


def is_check(command: str) -> bool:
    """Whether the command tests, builds, lints or type-checks the project: a run whose
    failure is an open failure until a later run of it passes."""
    return any(
        _is_check_stage(_core(piece))
        for op, piece in split_chain(command)
        if not (op == "|" and program(piece) in FILTERS)
    )


_FORMATTERS = frozenset(
    {"cargo fmt", "black", "prettier", "isort", "ruff format", "mix format", "gofmt",
     "go fmt", "deno fmt", "dotnet format", "rustfmt", "biome format"}
)  # fmt: skip
"""Programs that rewrite files unless told to check: a check only with a check flag."""
_CHECK_FLAGS = frozenset(
    {"--check", "--check-formatted", "-l", "--list-different", "--diff", "--verify-no-changes"}
)


_TEST_FILE = re.compile(
    r"(?:^|/)(?:test_[\w-]+|[\w-]+_test|[\w-]+\.(?:test|spec))\.(?:py|js|mjs|ts)$"
)


def _is_check_stage(core: str) -> bool:
    words = core.split()
    if not words:
        return False
    runners = ("python", "python3", "py", "node", "bun", "deno", "tsx")
    if words[0] in runners and len(words) > 1 and _TEST_FILE.search(words[1]):
        return True  # a test file run directly
    if " ".join(words[:2]) in _FORMATTERS or words[0] in _FORMATTERS:
        return bool(_CHECK_FLAGS.intersection(words))
    name = program(core)
    base = name.split()[0] if name else ""
    if name in _CHECK_PROGRAMS or base in _CHECK_PROGRAMS:
        return True
    subs = _CHECK_SUBCOMMANDS.get(words[0]) or _CHECK_SUBCOMMANDS.get(base)
    if subs is None:
        return False
    rest = [w for w in words[1:] if not w.startswith("-")]
    if not rest or rest[0] not in subs:
        return False
    if rest[0] in ("run", "run-script") and base in ("npm", "yarn", "pnpm", "bun", "mise"):
        return len(rest) > 1 and bool(_RUN_SCRIPTS.search(rest[1]))
    return True


def _answer_meaning(command: str) -> str | None:
    """What exit 1 means when the command's last step is one whose exit 1 is an answer."""
    pieces = [p for _op, p in split_chain(command) if not _SETUP.match(_core(p) or "x")]
    if not pieces or any(_is_check_stage(_core(p)) for p in pieces):
        return None
    name = program(pieces[-1])
    words = _core(pieces[-1]).split()
    if (name == "git diff" and not ({"--exit-code", "--quiet"} & set(words))) or (
        name == "git merge-base" and "--is-ancestor" not in words
    ):
        return None
    return ANSWERS.get(name) or ANSWERS.get(name.split()[0] if name else "")


def hidden_exit(command: str) -> str | None:
    """The program whose exit code stands for the command's when that hides a check's: the
    filter a check is piped to (``tail``), or ``true`` or ``echo`` after ``||``; None
    otherwise."""
    pieces = split_chain(command)
    if "pipefail" in command or not pieces:
        return None
    op, last = pieces[-1]
    if op == "||" and _core(last) in ("true", ":", "exit 0"):
        return "true"
    if op == "||" and program(last).lower() in ("echo", "printf", "write-host", "write-output"):
        return program(last)
    if op == "|" and program(last) in FILTERS:
        return program(last)
    return None


_NOT_RUN = re.compile(
    r"command not found|Missing script: |Script not found|error: no such command|"
    r"is not recognized as an internal or external command|ERR_PNPM_NO_SCRIPT|"
    r"Could not find task|is not recognized as the name of a cmdlet|"
    r"^\S*python[\d.]*(?:\.exe)?: No module named (?:pytest|mypy|ruff|black|unittest|tox)\b|"
    r"^No module named (?:pytest|mypy|ruff)\s*$",
    re.M,
)
"""Output that says the check never ran (the program or the script is missing)."""


_STOPPED = re.compile(
    r"^\s*(?:\[(Request interrupted by user)[^\]\n]*\]|(?:Exit code: \d+\n(?:[^\n]*\n){0,3})?"
    r"[Cc]ommand timed out after [^\n]+)",
    _M,
)
"""A run the harness cut short: the person interrupted it (Claude Code's ``[Request
interrupted by user for tool use]``), or its time ran out (Claude Code's ``Command timed out
after 2m 0s``, Codex's ``command timed out after 10012 milliseconds``): no result."""


def judge(command: str, exit_code: int | None, output: str, *, is_error: bool = False) -> Verdict:
    """What a finished run came to (the order in the module's doc)."""
    summary = summary_of(output) if output else None
    stopped = _STOPPED.search(output[:600]) if output else None
    if stopped is not None and (exit_code is None or exit_code != 0):  # no result: cut short
        said = "interrupted by the person" if stopped.group(1) else stopped[0].split("ommand ")[-1]
        if summary is None or (summary.failed is None and summary.passed is None):
            # (a test's line before the cut — `✘ 31 … Loading states` — is no run's result)
            before = f"; before it: {summary.text}" if summary is not None else ""
            return Verdict(UNKNOWN, clipped_line(said, 80) + clipped_line(before, 160))
    if summary is not None:
        if summary.failed is None or summary.failed > 0:
            first = first_failure(output) if summary.failed else None
            text = summary.text
            if first and first not in summary.text:
                text += f"; first: {first}"
            return Verdict(FAILED, text, summary)
        if summary.passed or (summary.passed is None and exit_code in (0, None)):
            return Verdict(PASSED, summary.text, summary)  # tests passed; or a build succeeded
        # "no tests ran": nothing checked; the exit code decides below
    if exit_code is not None and exit_code != 0:
        if exit_code in (126, 127) or _NOT_RUN.search(output[-2000:]):
            return Verdict(UNKNOWN, f"did not run (exit {exit_code}: command or script not found)")
        meaning = _answer_meaning(command) if exit_code == 1 else None
        if meaning is not None:
            return Verdict(ANSWER, f"{meaning} (exit 1)")
        if 128 < exit_code <= 128 + 64 and summary is None:  # a signal ended it: no result
            return Verdict(UNKNOWN, f"killed by signal {exit_code - 128} (exit {exit_code})")
        return Verdict(FAILED, f"exit {exit_code}", summary)
    if exit_code is None:
        return Verdict(FAILED, "", summary) if is_error else Verdict(UNKNOWN, "no exit code")
    hidden = hidden_exit(command)
    if hidden is not None and is_check(command):
        return Verdict(UNKNOWN, f"unknown (the exit code is {hidden}'s)", summary)
    if summary is not None:  # no tests ran
        return Verdict(UNKNOWN, summary.text, summary)
    return Verdict(PASSED, "")


def words_of(command: str) -> list[str]:
    """``command`` split as a POSIX shell would (quotes removed); on a quoting error, on
    whitespace."""
    try:
        return shlex.split(command, comments=False, posix=True)
    except ValueError:
        return command.split()


_READERS = frozenset(
    {"cat", "head", "tail", "less", "more", "ls", "tree", "grep", "egrep", "fgrep", "rg",
     "ag", "wc", "stat", "file", "which", "type", "dir", "pwd", "echo", "printf", "nl",
     "du", "df", "realpath", "readlink", "basename", "dirname", "jq", "sort", "uniq", "cut",
     "column", "diff", "cmp", "true", "test", "[", "get-content", "gc", "get-childitem",
     "gci", "select-string", "test-path", "resolve-path", "sed", "find", "fd", "awk", "git",
     "command"}
)  # fmt: skip
"""Programs that read (a ``sed`` without ``-i``, a ``find`` without ``-delete`` or ``-exec``,
``git`` with a reading subcommand): a failure of one is a look that found nothing."""
_GIT_READS = frozenset(
    {"show", "log", "status", "diff", "grep", "ls-files", "rev-parse", "blame", "describe"}
)
_CHANGES = frozenset({"-i", "--in-place", "-delete", "-exec", "-execdir", "-ok", "-fprint"})


def reads_only(command: str) -> bool:
    """Whether every piece of ``command`` only reads (``sed -n '1,80p' x``, ``ls src``,
    ``git show HEAD:x``, ``cat a | head``, ``cd x && rg y``): its failure (a file not there,
    no match) is exploration, not a failing step of the work."""
    pieces = [piece for _op, piece in split_chain(command) if piece.strip()]
    if not pieces:
        return False
    for piece in pieces:
        words = [w for w in words_of(piece) if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", w)]
        if not words:
            continue
        program = words[0].replace("\\", "/").rsplit("/", 1)[-1].lower().removesuffix(".exe")
        if program in ("cd", "set-location"):
            continue
        if program not in _READERS or any(
            w in _CHANGES or (w.startswith("-i") and program == "sed") for w in words[1:]
        ):
            return False
        if program == "git" and (len(words) < 2 or words[1] not in _GIT_READS):
            return False
        if program == "command" and words[1:2] != ["-v"]:
            return False
        if program == "awk" and any("system(" in w or ">" in w for w in words[1:]):
            return False
        if any(w.startswith(">") for w in words[1:]):
            return False
    return True
