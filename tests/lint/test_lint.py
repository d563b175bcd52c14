"""clm-policy lint: each check's documented examples, exact output of every format (golden),
disable comments, exit codes."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from clm_policy.base.errors import ClmError, Location, PolicyError
from clm_policy.lint import runner
from clm_policy.lint.checks import ANALYSES, CHECKS, GENERIC, LOADING, disable_comment, schema
from clm_policy.lint.context import LintContext
from clm_policy.lint.runner import lint_paths

from conftest import POLICIES, REPO, golden, invoke, run_process

FIXTURES = Path(__file__).parents[1] / "fixtures"


def example(module: ModuleType, kind: str) -> str:
    """The ``Passes::`` or ``Fails::`` example of a check's documentation."""
    doc = module.__doc__ or ""
    block = doc.split(f"{kind}::\n", 1)[1]
    if kind == "Passes":
        block = block.split("Fails::", 1)[0]
    return textwrap.dedent(block).strip("\n") + "\n"


EXAMPLED = [m for m in CHECKS if m is not GENERIC]  # no file is meant to make a policy-error


@pytest.mark.parametrize("module", EXAMPLED, ids=[m.ID for m in EXAMPLED])
def test_documented_examples(module: ModuleType, tmp_path: Path) -> None:
    passing = tmp_path / "passes.yaml"
    failing = tmp_path / "fails.yaml"
    passing.write_text(example(module, "Passes"))
    failing.write_text(example(module, "Fails"))
    assert lint_paths([str(passing)]).problems == []
    found = lint_paths([str(failing)]).problems
    assert found, f"{module.ID}: the failing example finds nothing"
    assert {p.check for p in found} == {module.ID}
    assert {p.level for p in found} == {module.LEVEL}


def test_every_check_is_documented() -> None:
    ids = [m.ID for m in CHECKS]
    assert len(ids) == len(set(ids))
    doc = (REPO / "docs" / "lint.md").read_text()
    for module in CHECKS:
        assert module.LEVEL in ("error", "warning")
        assert f"### `{module.ID}`" in doc, module.ID
        assert (module.__doc__ or "").strip(), module.ID
    assert "**`policy-error`**" in doc  # the generic id is explained, not only listed


def test_each_check_is_of_one_kind() -> None:
    """Found while loading (named by the loader), found by its own ``check``, the generic
    one, or the disable comments' own; a check that did none would be listed and documented
    but never report."""
    kinds = [LOADING, ANALYSES, (GENERIC, disable_comment)]
    assert sorted(m.ID for kind in kinds for m in kind) == sorted(m.ID for m in CHECKS)
    assert all(callable(getattr(m, "check", None)) for m in ANALYSES)
    assert not any(hasattr(m, "check") for m in (*LOADING, GENERIC, disable_comment))


def test_loading_errors_go_to_the_check_they_name() -> None:
    ctx = LintContext(
        file="p.yaml",
        doc=None,
        errors=[
            PolicyError("extends target not found: x", Location("p.yaml", 2, 10), check="extends"),
            ClmError("unnamed", Location("p.yaml", 3, 4)),
            ClmError("named by no check", Location("p.yaml", 5, 1), check="no-such-check"),
            ClmError("named by an analysis", Location("p.yaml", 6, 1), check="unused-signal"),
            ClmError("no line", Location("base.yaml")),
            ClmError("nowhere"),
        ],
    )
    assert [str(p) for p in runner.loading_problems(ctx)] == [
        "p.yaml:2:10: error [extends] extends target not found: x",
        "p.yaml:3:4: error [policy-error] unnamed",
        "p.yaml:5:1: error [policy-error] named by no check",
        "p.yaml:6:1: error [policy-error] named by an analysis",
        "base.yaml:1:1: error [policy-error] no line",
        "p.yaml:1:1: error [policy-error] nowhere",
    ]


def test_an_unclaimed_error_is_reported_not_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading raising an error that names no check (a new one, a bug): lint fails on it."""
    policy = tmp_path / "p.yaml"
    policy.write_text(example(schema, "Passes"))

    def compile_policy(*_args: object) -> None:
        raise ClmError("something new went wrong", Location(str(policy), 3, 5))

    monkeypatch.setattr(runner, "compile_policy", compile_policy)
    result = invoke("lint", str(policy))
    assert (result.exit_code, result.stdout) == (
        1,
        f"{policy}:3:5: error [policy-error] something new went wrong\n",
    )


def test_shipped_policies_are_clean() -> None:
    result = invoke("lint", str(POLICIES), "--strict")
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr == "clm-policy lint: 6 files, no problems\n"


@pytest.mark.parametrize(
    ("fmt", "name"),
    [
        ("text", "lint.txt"),
        ("json", "lint.json"),
        ("github", "lint.github"),
        ("sarif", "lint.sarif"),
    ],
)
def test_formats_golden(monkeypatch: pytest.MonkeyPatch, fmt: str, name: str) -> None:
    monkeypatch.chdir(FIXTURES)
    result = invoke("lint", "lint", "--format", fmt)
    assert result.exit_code == 1
    golden(name, result.stdout)


def test_sarif_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURES)
    log = json.loads(invoke("lint", "lint", "--format", "sarif").stdout)
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [m.ID for m in CHECKS]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in ("error", "warning")
        region = result["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1
        assert region["startColumn"] >= 1
        uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        assert uri.startswith("lint/")


def test_text_is_sorted_and_complete(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURES)
    result = invoke("lint", "lint")
    lines = result.stdout.splitlines()
    assert lines == sorted(
        lines, key=lambda s: (s.split(":")[0], int(s.split(":")[1]), int(s.split(":")[2]))
    )
    assert result.stderr == "clm-policy lint: 7 errors, 3 warnings in 4 files\n"


def test_disable_comments(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    body = """\
        version: 1
        profiles:
          coding: {soft_compact: 1, hard_handoff: 2}
        signals:
          a: {type: int, default: 0}  # clm-lint disable-line unused-signal
          # clm-lint disable-line unused-signal, type-mismatch
          b: {type: int, default: 0}
          c: {type: int, default: 0}
        rules:
          - {id: r, when: status == 1, action: compact}  # clm-lint disable-line all
          - {id: s, when: status == 2, action: compact}
    """
    path.write_text(textwrap.dedent(body))
    found = [(p.line, p.check) for p in lint_paths([str(path)]).problems]
    assert found == [(8, "unused-signal"), (11, "type-mismatch")]
    path.write_text("# clm-lint disable-file unused-signal,type-mismatch\n" + textwrap.dedent(body))
    assert lint_paths([str(path)]).problems == []


def test_no_comment_silences_a_problem_that_stops_loading(tmp_path: Path) -> None:
    """A policy `decide` refuses never passes the lint: `all` silenced its schema errors, and
    `disable-line unknown-name` a misspelt name; a comment naming no check silenced nothing
    and said nothing."""
    path = tmp_path / "p.yaml"
    path.write_text("# clm-lint disable-file all\nversion: 2\nprofiles: nonsense\n")
    found = [(p.line, p.check) for p in lint_paths([str(path)]).problems]
    assert found == [(2, "schema"), (3, "schema")]
    path.write_text(
        "version: 1\nextends: default\nrules:\n"
        "  - {id: x, when: tokens.contxt > 1, action: compact}  # clm-lint disable-line unknown-name\n"
        "signals:\n  spare: {type: int, default: 0}  # clm-lint disable-line unused-signl\n"
    )
    assert [(p.line, p.check, p.message) for p in lint_paths([str(path)]).problems] == [
        (4, "unknown-name", "unknown name 'tokens.contxt'; did you mean 'tokens.context'?"),
        (
            4,
            "disable-comment",
            "'unknown-name' cannot be silenced: the policy does not load while it has one",
        ),
        (6, "unused-signal", "signal 'spare' is declared but never read"),
        (
            6,
            "disable-comment",
            "no check named 'unused-signl': it silences nothing; did you mean 'unused-signal'?",
        ),
    ]


def test_a_folder_is_searched_without_its_hidden_files_and_folders(tmp_path: Path) -> None:
    for hidden in (".venv/lib/x.yaml", ".github/workflows/ci.yml"):
        (tmp_path / hidden).parent.mkdir(parents=True)
        (tmp_path / hidden).write_text("on: push\n")
    (tmp_path / ".clm-policy.yaml").write_text("version: 1\npolicy: default\n")
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "team.yaml").write_text("version: 1\nextends: default\n")
    report = lint_paths([str(tmp_path)])
    assert (report.files, report.problems) == ([str(tmp_path / "policies" / "team.yaml")], [])


def test_problem_in_a_parent_is_reported_where_it_is_extended(tmp_path: Path) -> None:
    (tmp_path / "team.yaml").write_text(
        "version: 1\nextends: default\nrules:\n  - id: degradation\n    disable: true\n"
    )
    result = invoke("lint", str(tmp_path / "team.yaml"))
    assert result.exit_code == 0  # a warning only
    assert result.stdout == (
        f"{tmp_path}/team.yaml:2:10: warning [unused-signal] signal 'degradation' is declared "
        "but never read (in <bundled>/default.yaml:31:3, as extended here)\n"
    )
    assert invoke("lint", "--strict", str(tmp_path / "team.yaml")).exit_code == 1


def test_a_parent_is_linted_once(tmp_path: Path) -> None:
    (tmp_path / "org.yaml").write_text(
        "version: 1\nextends: default\nrules:\n  - {id: x, when: status == 1, action: compact}\n"
    )
    (tmp_path / "a.yaml").write_text("version: 1\nextends: org.yaml\n")
    (tmp_path / "b.yaml").write_text("version: 1\nextends: org.yaml\n")
    problems = lint_paths([str(tmp_path)]).problems
    assert [(Path(p.file).name, p.line, p.check) for p in problems] == [
        ("org.yaml", 4, "type-mismatch")
    ]


@pytest.mark.parametrize(
    ("args", "code", "stderr"),
    [
        (["lint", "policies"], 0, "clm-policy lint: 6 files, no problems\n"),
        (["lint", "tests/fixtures/lint/clean.yaml"], 0, "clm-policy lint: 1 file, no problems\n"),
        (["lint", "tests/fixtures/lint/team.yaml"], 1, None),
        (["lint", "nothere"], 2, "nothere: no such file or directory\n"),
        (["lint", "schemas"], 2, "clm-policy: no policy files (*.yaml, *.yml) under schemas\n"),
        (
            ["lint", "policies/tests/default.test.yaml"],
            2,
            "clm-policy: policies/tests/default.test.yaml is a policy test file: run "
            "`clm-policy test policies/tests/default.test.yaml`\n",
        ),
        (["lint", "--format", "xml"], 2, None),
    ],
)
def test_exit_codes_as_a_process(args: list[str], code: int, stderr: str | None) -> None:
    proc = run_process(*args, cwd=REPO)
    assert proc.returncode == code, proc.stderr
    if stderr is not None:
        assert proc.stderr == stderr


def test_warnings_fail_only_with_strict(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(
        "version: 1\nprofiles:\n  c: {soft_compact: 1, hard_handoff: 2}\n"
        "signals:\n  s: {type: bool, default: false}\n"
    )
    assert invoke("lint", str(path)).exit_code == 0
    assert invoke("lint", str(path), "--strict").exit_code == 1


def test_output_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(FIXTURES)
    out = tmp_path / "lint.sarif"
    result = invoke("lint", "lint", "--format", "sarif", "--output", str(out))
    assert result.exit_code == 1
    assert result.stdout == ""
    assert json.loads(out.read_text())["version"] == "2.1.0"


def test_list_checks() -> None:
    lines = invoke("lint", "--list-checks").stdout.splitlines()
    assert [line.split()[0] for line in lines] == [m.ID for m in CHECKS]
    assert lines[0].split()[1] == "error"
    assert lines[-1].split()[:2] == ["policy-error", "error"]
    assert (
        "extends                 error    `extends` and the placement keys must resolve." in lines
    )


@pytest.mark.parametrize(
    ("when", "message"),
    [
        ("signals.flag == 1", "'==' compares bool with int (never equal): signals.flag == 1"),
        ("status > 3", "'>' compares str with int: status > 3"),
        ("status in (1, 2)", "str can never be one of int values: status in (1, 2)"),
        (
            "tokens.context in 'abc'",
            "int tested for membership in a string: tokens.context in 'abc'",
        ),
        ("status + 1 > 0", "'+' on str and int: status + 1"),
        ("-status == 'x'", "unary minus/plus on str: -status"),
        ("tokens.context", "condition gives int, not true or false: tokens.context"),
        ("len(status) > 0 and tokens.ratio < 0.5", None),
        ("status == 'running' or signals.flag", None),
        ("tokens.window is None or tokens.ratio > 0.5", None),
        ("max(tokens.context, 5) > profile.soft_compact", None),
        ("(tokens.context if signals.flag else 0) > 1", None),
        ("status * 2 == 'xx'", None),
    ],
)
def test_type_mismatch_cases(tmp_path: Path, when: str, message: str | None) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(
        "version: 1\nprofiles:\n  c: {soft_compact: 1, hard_handoff: 2}\n"
        "signals:\n  flag: {type: bool, default: false}\n"
        f'rules:\n  - id: r\n    when: "{when}"\n    action: compact\n'
    )
    found = [p.message for p in lint_paths([str(path)]).problems if p.check == "type-mismatch"]
    assert found == ([message] if message else [])


def test_docs_embed_the_generated_reference() -> None:
    from clm_policy.lint.reference import markdown

    assert markdown() in (REPO / "docs" / "lint.md").read_text()


def test_every_error_loading_names_has_its_check() -> None:
    """The loader names its errors by LoadCheck; lint has one check module for each."""
    from clm_policy.base.errors import LoadCheck
    from clm_policy.lint.checks import LOADING

    assert sorted(m.ID for m in LOADING) == sorted(LoadCheck)
    assert all(isinstance(m.ID, LoadCheck) for m in LOADING)


@pytest.mark.parametrize(
    ("when", "message"),
    [
        (
            'status == "compelted"',
            "status is never 'compelted' (it is one of running, waiting, phase_boundary, "
            "completed, failed, blocked); did you mean 'completed'?",
        ),
        (
            'status in ["running", "paused"]',
            "status is never 'paused' (it is one of running, waiting, phase_boundary, "
            "completed, failed, blocked)",
        ),
        (
            '"blokced" != status',
            "status is never 'blokced' (it is one of running, waiting, "
            "phase_boundary, completed, failed, blocked); did you mean 'blocked'?",
        ),
        ('status == "completed" or status in ("failed", "blocked")', None),
    ],
)
def test_a_status_that_is_none_of_its_values_is_a_type_mismatch(
    tmp_path: Path, when: str, message: str | None
) -> None:
    """A misspelt status made a rule that never fires, and the lint passed it."""
    path = tmp_path / "p.yaml"
    path.write_text(
        f"version: 1\nextends: default\nrules:\n  - id: x\n    when: '{when}'\n    action: compact\n"
    )
    found = [(p.check, p.message) for p in lint_paths([str(path)]).problems]
    assert found == ([("type-mismatch", message)] if message else [])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "profiles:\n  coding: {soft_compact: 0.8, hard_handoff: 350000}\n",
            "profiles.coding.soft_compact: expected an integer, got number 0.8 "
            "(a share is written as '80%')",
        ),
        (
            "profiles:\n  coding: {soft_compact: 180%, hard_handoff: 350000}\n",
            "profiles.coding.soft_compact: expected tokens (an integer) or a share like '70%', "
            "got string '180%' (a share is at most 100%)",
        ),
        (
            'profiles:\n  coding: {soft_compact: "250,000", hard_handoff: 350000}\n',
            "profiles.coding.soft_compact: expected tokens (an integer) or a share like '70%', "
            "got string '250,000' (tokens are written as a plain number: 250000)",
        ),
        (
            'signals:\n  s: {type: int, default: "0"}\n',
            "signals.s: default '0' is not an int (write it without quotes: 0)",
        ),
        (
            'signals:\n  s: {type: bool, default: "true"}\n',
            "signals.s: default 'true' is not a bool (write it without quotes: true)",
        ),
        ("signals:\n  s: {type: int, default: x}\n", "signals.s: default 'x' is not an int"),
    ],
    ids=["fraction", "over-100", "commas", "quoted-int", "quoted-bool", "plain"],
)
def test_a_value_written_almost_right_says_how_to_write_it(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("version: 1\nextends: default\n" + text)
    assert [(p.check, p.message) for p in lint_paths([str(path)]).problems] == [("schema", message)]


def test_a_message_part_its_value_cannot_be_formatted_as_is_a_type_mismatch(
    tmp_path: Path,
) -> None:
    """`{status:.0%}` passed the lint, and every decision that said the message failed."""
    path = tmp_path / "p.yaml"
    path.write_text(
        "version: 1\nextends: default\nrules:\n  - id: x\n    when: tokens.context > 1\n"
        "    action: compact\n"
        '    because: "{status:.0%} {tokens.context:,} {tokens.ratio:.0%} {step:.1f}"\n'
    )
    assert [(p.line, p.col, p.message) for p in lint_paths([str(path)]).problems] == [
        (7, 16, "':.0%' cannot format str: status")
    ]


def test_a_tab_that_indents_is_named(tmp_path: Path) -> None:
    """libyaml says only "found character that cannot start any token"."""
    path = tmp_path / "p.yaml"
    path.write_text("version: 1\nextends: default\nprofiles:\n  coding:\n\tsoft_compact: 5\n")
    assert [(p.line, p.col, p.message) for p in lint_paths([str(path)]).problems] == [
        (
            5,
            1,
            "YAML syntax error: found character that cannot start any token (while scanning "
            "for the next token); it is a tab: YAML indents with spaces only",
        )
    ]


def test_a_folder_is_searched_without_other_tools_packages(tmp_path: Path) -> None:
    """`lint .` in a JavaScript or Python project read node_modules' YAML and a virtual
    environment's (one not named with a dot) as policies, each an error."""
    for vendored in ("node_modules/pkg/config.yaml", "venv/lib/python3.12/site-packages/x.yml"):
        (tmp_path / vendored).parent.mkdir(parents=True)
        (tmp_path / vendored).write_text("a: 1\n")
    (tmp_path / "venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "team.yaml").write_text("version: 1\nextends: default\n")
    result = invoke("lint", str(tmp_path))
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr == "clm-policy lint: 1 file, no problems\n"
    result = invoke("lint", str(tmp_path / "node_modules"))  # named, it is what the user asked
    assert (result.exit_code, result.stdout.split(": ")[0]) == (
        1,
        f"{tmp_path}/node_modules/pkg/config.yaml:1:1",
    )


@pytest.mark.parametrize(
    "comment",
    [
        "# clm-lint disable unused-signal",
        "# clm-lint: disable-line unused-signal",
        "# clm-lint disable-line",
        "# CLM-LINT disable-line unused-signal",
        "# clm-lint disable-line unused-signal  # a leftover",
        "# clm-policy: disable=unused-signal",
    ],
)
def test_a_comment_meant_as_a_disable_comment_that_is_not_one_is_reported(
    comment: str, tmp_path: Path
) -> None:
    """It silenced nothing and said nothing: the warning it was written for stayed, unexplained."""
    path = tmp_path / "p.yaml"
    path.write_text(
        f"version: 1\nextends: default\nsignals:\n  spare: {{type: int, default: 0}}  {comment}\n"
    )
    result = invoke("lint", "--strict", str(path))
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        f"{path}:4:3: warning [unused-signal] signal 'spare' is declared but never read",
        f"{path}:4:35: warning [disable-comment] not a disable comment, it silences nothing: "
        "write `# clm-lint disable-line CHECK[,CHECK]` or `# clm-lint disable-file CHECK[,CHECK]`",
    ]


def test_output_that_names_a_file_the_run_reads_is_refused(tmp_path: Path) -> None:
    """`-o` naming the policy (or the parent it extends) replaced it with the report."""
    parent = tmp_path / "org.yaml"
    parent.write_text("version: 1\nextends: default\n")
    child = tmp_path / "team.yaml"
    child.write_text("version: 1\nextends: org.yaml\n")
    for target in (child, parent, tmp_path / "." / "org.yaml"):
        result = invoke("lint", str(child), "--output", str(target))
        assert (result.exit_code, result.stdout) == (2, "")
        assert result.stderr == (
            f"{target}: is a file this run read: --output would replace it with the report; "
            "name another file\n"
        )
    assert (child.read_text(), parent.read_text()) == (
        "version: 1\nextends: org.yaml\n",
        "version: 1\nextends: default\n",
    )


def test_a_new_profile_a_letter_off_an_inherited_one_is_reported(tmp_path: Path) -> None:
    """`researh:` made a new profile and left `research` as the parent had it, silently."""
    path = tmp_path / "team.yaml"
    path.write_text(
        "version: 1\nextends: default\nprofiles:\n"
        "  researh: {soft_compact: 200000, hard_handoff: 300000}\n"
        "  coding_long: {soft_compact: 300000, hard_handoff: 400000}\n"
        "  tool_light: {soft_compact: 300000, hard_handoff: 400000}\n"
    )
    result = invoke("lint", "--strict", str(path))
    assert (result.exit_code, result.stdout) == (
        1,
        f"{path}:4:3: warning [similar-profile] profile 'researh' is new here; did you mean the "
        "inherited 'research'? (its values change nothing for 'research')\n",
    )


@pytest.mark.parametrize(
    "when",
    [
        "tokens.ratio > 0.5 and tokens.contxt > 3",
        '"tokens.ratio > 0.5 and tokens.contxt > 3"',
        "\"'é✓' == 'x' and tokens.contxt > 1\"",  # ast counts columns in UTF-8 bytes
        "status == 'é✓' and tokens.contxt > 1",
        '"status == \\"x\\" and tokens.contxt > 1"',  # an escape is two characters written
        '"tokens.ratio >\\t tokens.contxt > 1"',
        "\"status == '\\u00e9' or tokens.contxt > 1\"",
        "'status == ''x'' and tokens.contxt > 2'",  # a quote doubled
        "tokens.ratio > 0.5\n      and tokens.contxt > 3",  # a plain scalar over lines
        '"tokens.ratio > 0.5 and\n      tokens.contxt > 3"',
        "'tokens.ratio > 0.5   \n\n      and tokens.contxt > 3'",
        '"tokens.ratio > 0.5 and \\\n      tokens.contxt > 3"',  # an escaped line break
    ],
)
def test_a_position_inside_an_expression_is_where_the_file_has_it(
    tmp_path: Path, when: str
) -> None:
    """A problem inside a ``when:`` is reported at the line and column the name is written
    at, whatever stands between the scalar's start and it: characters of several bytes,
    escapes, doubled quotes, lines folded into one."""
    path = tmp_path / "p.yaml"
    text = (
        f"version: 1\nextends: default\nrules:\n  - id: x\n    when: {when}\n    action: compact\n"
    )
    path.write_text(text)
    lines = text.splitlines()
    line = next(i for i, t in enumerate(lines, 1) if "tokens.contxt" in t)
    col = lines[line - 1].index("tokens.contxt") + 1
    assert [(p.check, p.line, p.col) for p in lint_paths([str(path)]).problems] == [
        ("unknown-name", line, col)
    ]


@pytest.mark.parametrize(
    "source",
    [
        "  - id: x\n    when: \"'é' == 'x' and >= 3\"\n    action: compact\n",
        "  - id: x\n    when: tokens.ratio > 1\n    action: compact\n"
        '    because: "à \\"{tokens.contxt}\\""\n',
        "  - id: x\n    when: tokens.ratio > 1\n    action: compact\n"
        "    because: 'l''état {tokens.ratio:.0%} ✓ {tokens.contxt}'\n",
    ],
)
def test_a_position_in_a_syntax_error_or_a_message_is_where_the_file_has_it(
    tmp_path: Path, source: str
) -> None:
    path = tmp_path / "p.yaml"
    text = f"version: 1\nextends: default\nrules:\n{source}"
    path.write_text(text)
    marker = "tokens.contxt" if "contxt" in text else ">="
    lines = text.splitlines()
    line = next(i for i, t in enumerate(lines, 1) if marker in t)
    col = lines[line - 1].index(marker) + 1
    assert [(p.line, p.col) for p in lint_paths([str(path)]).problems] == [(line, col)]


def test_a_signal_read_only_by_a_rule_or_guard_set_aside_is_not_called_unused(
    tmp_path: Path,
) -> None:
    """A rule or guard whose expression does not compile is set aside while the rest is
    checked; the signals it names are still read by it, so only its own error is reported."""
    path = tmp_path / "p.yaml"
    path.write_text(
        "version: 1\nextends: default\nsignals:\n"
        "  busy: {type: bool, default: false}\n"
        "  calls: {type: int, default: 0}\n"
        "  spare: {type: int, default: 0}\n"
        "rules:\n"
        "  - {id: z, when: signals.busy = True, action: compact}\n"
        "guards:\n"
        "  compact:\n"
        "    - {id: g, when: tokens.ratio > 0.8, severity: warn,\n"
        "       message: '{signals . calls} {tokns}'}\n"
    )
    assert [(p.line, p.check) for p in lint_paths([str(path)]).problems] == [
        (6, "unused-signal"),
        (8, "expression-syntax"),
        (12, "unknown-name"),
    ]


def test_a_guard_on_the_action_of_a_rule_set_aside_is_not_called_unused(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        "version: 1\nprofiles:\n  coding: {soft_compact: 250000, hard_handoff: 350000}\n"
        "rules:\n  - {id: big, when: tokens.contxt > 5, action: handoff}\n"
        "guards:\n  handoff:\n    - {id: g, when: step < 2, severity: block}\n"
    )
    assert [(p.line, p.check) for p in lint_paths([str(path)]).problems] == [(5, "unknown-name")]


@pytest.mark.parametrize(
    ("when", "message"),
    [
        (
            "tokens.context > 300000 and tokens.context < 200000",
            "tokens.context > 300000 and tokens.context < 200000 never hold together",
        ),
        (
            "200000 > tokens.context and (step > 1 and tokens.context >= 200000)",
            "200000 > tokens.context and tokens.context >= 200000 never hold together",
        ),
        ("0 < step < 5 and step >= 5", "0 < step < 5 and step >= 5 never hold together"),
        ("step == 3 and step > 3", "step == 3 and step > 3 never hold together"),
        (
            "status == 'waiting' and status == 'blocked'",
            "status == 'waiting' and status == 'blocked' never hold together",
        ),
        ("step >= 5 and step <= 5", None),  # 5 meets both
        ("step > 5 or step < 2", None),
        ("step > 5 and message_count < 2", None),
        ("status != 'waiting' and status == 'blocked'", None),
        ("not (step > 5 and step < 2)", None),
        ("tokens.context > profile.soft_compact and tokens.context < 10", None),
    ],
)
def test_a_rule_whose_parts_never_hold_together_can_never_fire(
    tmp_path: Path, when: str, message: str | None
) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        "version: 1\nextends: default\nrules:\n"
        f'  - id: x\n    when: "{when}"\n    before: phase_boundary\n    action: compact\n'
    )
    found = [(p.check, p.message) for p in lint_paths([str(path)]).problems]
    assert found == (
        [("unreachable-rule", f"rule 'x' can never fire: {message}")] if message else []
    )


@pytest.mark.parametrize(
    ("when", "message"),
    [
        (
            "tokens.ratio > 80",
            "tokens.ratio is a share of the window, from 0 to 1: 80 is never reached (for 80% "
            "write 0.8)",
        ),
        (
            "0.5 < tokens.ratio < 85.5",
            "tokens.ratio is a share of the window, from 0 to 1: 85.5 is never reached (for "
            "85.5% write 0.855)",
        ),
        (
            "tokens.ratio >= profile.soft_compact",
            "tokens.ratio is a share of the window (0 to 1), profile.soft_compact counts tokens: "
            "compare tokens.context with profile.soft_compact",
        ),
        (
            "step > 2 and 0.8 < tokens.context",
            "tokens.context counts tokens: 0.8 is a share; compare tokens.ratio with 0.8, or "
            "tokens.context with a number of tokens",
        ),
        ("tokens.ratio > 0.8", None),
        ("tokens.ratio >= 1", None),
        ("tokens.ratio * 100 > 80", None),
        ("tokens.context >= profile.soft_compact", None),
        ("tokens.context > 0", None),
        ("step > 0.5", None),
    ],
)
def test_a_share_compared_with_tokens_is_a_unit_mismatch(
    tmp_path: Path, when: str, message: str | None
) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        "version: 1\nextends: default\ndefaults: {context_window: 1000000}\nrules:\n"
        f"  - id: x\n    when: {when}\n    before: phase_boundary\n    action: compact\n"
    )
    found = [(p.check, p.line, p.col, p.message) for p in lint_paths([str(path)]).problems]
    col = 11 + (when.index(" and ") + 5 if " and " in when else 0)  # at the comparison
    assert found == ([("unit-mismatch", 6, col, message)] if message else [])


def test_the_names_a_unit_is_known_of_are_names_rules_read() -> None:
    from clm_policy.lint.checks import unit_mismatch
    from clm_policy.policy.names import known_names

    assert set(known_names({})) >= unit_mismatch.SHARES | unit_mismatch.TOKENS


def test_explain_shows_a_checks_documentation_as_the_docs_do() -> None:
    result = invoke("lint", "--explain", "unreachable-rule")
    assert result.exit_code == 0
    doc = (REPO / "docs" / "lint.md").read_text()
    assert result.stdout.startswith("### `unreachable-rule`\n\nLevel: **warning**. ")
    assert result.stdout in doc + "\n"  # the same section, word for word
    result = invoke("lint", "--explain", "unreachable")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (
        "clm-policy lint: no check named 'unreachable'; did you mean 'unreachable-rule'? "
        "(clm-policy lint --list-checks lists them) (try 'clm-policy lint --help')\n"
    )


@pytest.mark.parametrize(
    ("body", "found"),
    [
        ("rules:\n  - {id: x, when: tokens.ratio > 0.8, action: handoff}\n", [(6, 19)]),
        (
            "rules:\n  - {id: x, when: step > 1 or profile.context_window < 9, action: handoff}\n",
            [(6, 31)],
        ),
        (
            "rules: [{id: c, when: step > 3, action: compact}]\n"
            "guards:\n  compact:\n    - {id: g, when: tokens.window < 10, severity: warn}\n",
            [(8, 21)],
        ),
        (
            "rules:\n"
            "  - {id: x, when: tokens.window is not None and tokens.ratio > 0.8, action: handoff}\n"
            "  - {id: y, when: tokens.ratio != None and tokens.ratio > 0.9, action: handoff}\n",
            [],
        ),
        (
            "defaults: {context_window: 1000000}\n"
            "rules:\n  - {id: x, when: tokens.ratio > 0.8, action: handoff}\n",
            [],
        ),
    ],
)
def test_a_condition_reading_the_window_says_what_to_do_without_one(
    tmp_path: Path, body: str, found: list[tuple[int, int]]
) -> None:
    """Without a window, tokens.ratio is None, the comparison fails and decide exits 2."""
    path = tmp_path / "p.yaml"
    path.write_text(
        "version: 1\nprofiles:\n  coding: {soft_compact: 250000, hard_handoff: 350000}\n"
        "  research: {soft_compact: 250000, hard_handoff: 350000}\n" + body
    )
    problems = lint_paths([str(path)]).problems
    assert [(p.line, p.col) for p in problems] == found
    assert all(
        p.check == "window-unknown"
        and p.message.endswith(
            "is None where the window is unknown (profiles coding, research declare no "
            "context_window), and the decision then fails: write 'tokens.window is not None "
            "and ...', or give the profiles a context_window"
        )
        for p in problems
    )


def test_the_names_none_without_a_window_are_the_names_that_may_be_none() -> None:
    from clm_policy.policy.names import WINDOW_NAMES, known_names

    nullable = {n for n, info in known_names({}).items() if "None" in info.type}
    assert set(WINDOW_NAMES) == nullable
