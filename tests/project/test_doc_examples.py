"""Every console example in README.md and docs/*.md runs as written.

A ```console block holds commands (``$ ...``; a line ending in ``\\`` or inside an open quote
goes on) and, under a command, the output it shows. The commands of one page run in order, in
one folder holding the repository's bundled files (``policies/``, ``docs/examples/``,
``examples/``), as the
page implies: a memory repository made by an earlier example is there for a later one. Home is
a fresh folder where Claude Code and Codex have left sessions (``~/.claude/projects/``,
``~/.codex/sessions/``), from tests/fixtures/transcripts.

The commands of one block run one after the other as in a shell (a ``cd`` lasts to the
block's end; each block starts in the page's folder). A command must exit 0. What this harness
needs to know besides stands in HTML comments right above the block, never in what a reader
copies — one per command it concerns, which it names by how the command starts:

    <!-- example: `clm-policy lint docs/examples/draft-policy.yaml` exit 1 -->
    <!-- example: `pip install -e '.[mem0]'` not run: an install; .ci/run installs the extra -->
    <!-- example: `clm-policy experiment examples/` needs mem0 -->

``exit N``: the exit code it must give. ``not run: REASON``: it cannot run here (a real
agent, a network, an id only a real session has). ``needs EXTRA``: it needs an optional extra
of the package; where the extra is installed it runs like any other, and where it is not it
must refuse with exit 2 and the extra's install hint (``pip install 'clm-policy[mem0]'``) —
what a reader without the extra sees —, its output then not compared. Output shown under a
command is compared with what it printed on standard output: all of it, or, where the page
elides lines with ``...``, each run of lines between them in order. Commit ids, times and the
folder are the same in both once written as ``<hash>``, ``<time>``, ``<stamp>`` and ``<dir>``.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import FIXTURES, REPO

ALL_PAGES = ["README.md", *sorted(f"docs/{p.name}" for p in (REPO / "docs").glob("*.md"))]
NOTE = re.compile(r"<!-- example: `([^`]+)` (not run: [^>]+?|exit \d+|needs [a-z0-9_-]+) -->")
HARNESS_MARK = re.compile(r"\[(?:not run|exit \d+|needs )")
EXTRAS = {"mem0": "mem0", "mcp": "mcp"}  # an optional extra -> the module it installs


@dataclass
class Example:
    command: str
    line: int
    output: list[str] = field(default_factory=list)
    block: int = 0
    skipped: str | None = None
    """Why it cannot run here (``not run: REASON``), or None."""
    exit_code: int = 0
    needs: str | None = None
    """The optional extra it needs (``needs mem0``), or None."""

    def note(self, mark: str) -> None:
        if mark.startswith("not run: "):
            self.skipped = mark.removeprefix("not run: ").strip()
        elif mark.startswith("exit "):
            self.exit_code = int(mark.removeprefix("exit "))
        else:
            self.needs = mark.removeprefix("needs ")
            assert self.needs in EXTRAS, f"line {self.line}: no extra {self.needs!r}"


def examples(page: str) -> list[Example]:
    """The commands of the page's console blocks, in order, with the output each shows and
    the notes above their block."""
    text = (REPO / page).read_text()
    found: list[Example] = []
    for number, block in enumerate(re.finditer(r"^```console\n(.*?)^```", text, flags=re.S | re.M)):
        first = text.count("\n", 0, block.start(1)) + 1
        assert not HARNESS_MARK.search(block.group(1)), (
            f"{page}:{first}: a note for the test harness inside a block a reader copies: "
            "put it in an <!-- example: ... --> comment above the block"
        )
        lines = block.group(1).splitlines()
        mine: list[Example] = []
        i = 0
        while i < len(lines):
            line = lines[i]
            if not line.startswith("$ "):
                assert mine, f"{page}:{first + i}: output before any command"
                mine[-1].output.append(line)
                i += 1
                continue
            command, start = line[2:], i
            while command.endswith("\\") or not _complete(command):
                i += 1
                command += "\n" + lines[i]
            mine.append(Example(command, first + start, block=number))
            i += 1
        for prefix, mark in _notes(text, block.start()):
            named = [e for e in mine if e.command.startswith(prefix)]
            named = [e for e in named if _bare(e.command) == prefix] or named  # exact first
            assert len(named) == 1, (
                f"{page}:{first}: the note for `{prefix}` names {len(named)} commands of the "
                "block below it, not one"
            )
            named[0].note(mark)
        found += mine
    return found


def _notes(text: str, fence: int) -> list[tuple[str, str]]:
    """The ``<!-- example: ... -->`` lines right above the fence at offset ``fence``."""
    above = text[:fence].splitlines()
    notes = []
    while above and above[-1].startswith("<!-- example: "):
        found = NOTE.fullmatch(above.pop())
        assert found is not None, f"a note the harness cannot read: {above!r}"
        notes.append((found.group(1), found.group(2)))
    return notes[::-1]


def _bare(command: str) -> str:
    """``command`` without its comment."""
    return command.split(" #")[0].rstrip()


def _installed(extra: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(EXTRAS[extra]) is not None


def _complete(command: str) -> bool:
    try:
        shlex.split(command, comments=True)
    except ValueError:  # an open quote: the command goes on on the next line
        return False
    return True


def _setup(folder: Path) -> dict[str, str]:
    """The folder a page's examples run in, and their environment."""
    shutil.copytree(REPO / "policies", folder / "policies")
    shutil.copytree(REPO / "docs" / "examples", folder / "docs" / "examples")
    shutil.copytree(REPO / "examples", folder / "examples")
    home = folder.parent / "home"
    _sessions(home)
    bin_dir = str(Path(sys.executable).parent)  # this worktree's clm-policy
    return {
        **os.environ,
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "COLUMNS": "100",
    }


CLAUDE_ID = "7c1e4a52-93d0-4b8e-a6f1-2d5c8e90b3a7"  # the Claude Code fixtures' session id
CODEX_ID = "0199a2c4-5b7e-7c31-9d0e-4f2a8b6c1d3e"
COMPACTED = [  # sessions in which Claude Code compacted on its own, at 161,000, 162,000, ...
    "1d4a6f2e-8b3c-4e5d-9f7a-2b6c8d0e1f3a",
    "2e5b7a3f-9c4d-4f6e-8a8b-3c7d9e1f2a4b",
    "3f6c8b4a-ad5e-4a7f-9b9c-4d8eaf2a3b5c",
    "4a7d9c5b-be6f-4b8a-8cad-5e9fb03b4c6d",
    "5b8eadc6-cf7a-4c9b-9dbe-6fa0c14c5d7e",
    "6c9fbed7-d08b-4dac-8ecf-70b1d25d6e8f",
]


def _sessions(home: Path) -> None:
    """The sessions a Claude Code and Codex user has on disk: a project in /home/me/shop with
    one session that never compacted and six that did (calibrate needs five), and one Codex
    rollout."""
    shop = home / ".claude" / "projects" / "-home-me-shop"
    shop.mkdir(parents=True)
    shutil.copy(FIXTURES / "transcripts" / "claude_session.jsonl", shop / f"{CLAUDE_ID}.jsonl")
    compacted = (FIXTURES / "transcripts" / "claude_compact_then_usage.jsonl").read_text()
    for i, sid in enumerate(COMPACTED, start=1):
        text = compacted.replace(CLAUDE_ID, sid)
        (shop / f"{sid}.jsonl").write_text(
            text.replace('"preTokens":167094', f'"preTokens":{160_000 + 1000 * i}')
        )
    day = home / ".codex" / "sessions" / "2026" / "11" / "30"
    day.mkdir(parents=True)
    rollout = day / f"rollout-2026-11-30T10-00-00-{CODEX_ID}.jsonl"
    shutil.copy(FIXTURES / "transcripts" / "codex_rollout.jsonl", rollout)


PLACEHOLDERS = [
    (re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:[+-]\d{2}:\d{2}|Z)?"), "<time>"),
    (re.compile(r"\b\d{8}T\d{6}Z"), "<stamp>"),
    (re.compile(r"\b[0-9a-f]{12}(?:[0-9a-f]{28})?\b"), "<hash>"),
]


def _normal(text: str, folder: Path) -> str:
    text = text.replace(str(folder.parent / "home"), "/home/me").replace(str(folder), "<dir>")
    for pattern, placeholder in PLACEHOLDERS:
        text = pattern.sub(placeholder, text)
    return text.rstrip()


def _check_output(example: Example, stdout: str, folder: Path, where: str) -> None:
    shown = [_normal(line, folder) for line in example.output]
    while shown and not shown[-1]:
        shown.pop()
    actual = [_normal(line, folder) for line in stdout.splitlines()]
    if not any(line.strip() == "..." for line in shown):
        assert actual == shown, where
        return
    runs: list[list[str]] = [[]]
    for line in shown:
        if line.strip() == "...":
            runs.append([])
        else:
            runs[-1].append(line)
    at = 0
    for run in (r for r in runs if r):
        found = next(
            (i for i in range(at, len(actual) - len(run) + 1) if actual[i : i + len(run)] == run),
            None,
        )
        assert found is not None, (where, run, actual)
        at = found + len(run)


PAGES = [page for page in ALL_PAGES if examples(page)]
SLOW = {"README.md", "docs/experiments.md"}
"""Pages whose examples play the memory experiment (a minute of the suite's time on two cores):
``pytest -m slow`` runs them (.ci/run does)."""


@pytest.mark.parametrize(
    "page", [pytest.param(p, marks=pytest.mark.slow) if p in SLOW else p for p in PAGES]
)
def test_the_pages_examples_run_as_written(page: str, tmp_path: Path) -> None:
    found = examples(page)
    folder = tmp_path / "work"
    folder.mkdir()
    env = _setup(folder)
    cwd, block = folder, -1
    seen = tmp_path / "cwd"
    for example in found:
        where = f"{page}:{example.line}: $ {example.command}"
        if example.block != block:  # a block starts in the page's folder; a `cd` lasts to its end
            cwd, block = folder, example.block
        if example.skipped is not None:
            continue
        script = f'{example.command}\nstatus=$?\npwd > "{seen}"\nexit $status\n'
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", script],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        cwd = Path(seen.read_text().strip())
        if example.needs is not None and not _installed(example.needs):
            # what a reader without the extra meets: a refusal that says how to install it
            hint = f"pip install 'clm-policy[{example.needs}]'"
            assert done.returncode == 2, (where, done.stdout, done.stderr)
            assert hint in done.stderr + done.stdout, (where, done.stderr)  # (or as JSON)
            continue
        assert done.returncode == example.exit_code, (where, done.stdout, done.stderr)
        if example.output:
            _check_output(example, done.stdout, folder, where)


def test_only_a_few_examples_are_not_run() -> None:
    """The ones that cannot run here say why, and they stay few."""
    skipped = [(page, e.line, e.skipped) for page in PAGES for e in examples(page) if e.skipped]
    total = sum(len(examples(page)) for page in PAGES)
    assert all(reason.strip() for _, _, reason in skipped)
    assert len(skipped) * 8 <= total, skipped


def test_a_command_shown_with_its_prompt_is_in_a_console_block() -> None:
    """A ``$ clm-policy ...`` line in a ```text (or any other) block is never run, so its
    output went unchecked (README's ``decide --explain`` was one): such a block is a
    ```console block, run here, or noted above as not run, saying why."""
    shown = []
    for page in ALL_PAGES:
        text = (REPO / page).read_text()
        for block in re.finditer(r"^```(\w*)\n(.*?)^```", text, flags=re.S | re.M):
            if block.group(1) != "console" and re.search(r"^\$ ", block.group(2), flags=re.M):
                shown.append(f"{page}:{text.count(chr(10), 0, block.start()) + 1}")
    assert shown == [], "a ```console block, so that its commands run: " + ", ".join(shown)


def test_the_reader_sees_commands_output_and_notes() -> None:
    """The block reader itself: continued lines, output, and the notes above a block."""
    sample = examples("docs/claude-code.md")
    (statusline,) = [e for e in sample if "statusline" in e.command and "echo" in e.command]
    assert statusline.command.count("\n") == 2  # the quoted JSON goes on for two more lines
    assert statusline.output == [
        "ctx 46% 82k/180k · compact at 67% · continue · claude-code/coding"
    ]
    (lint,) = [e for e in examples("docs/lint.md") if "draft-policy.yaml" in e.command]
    assert (lint.exit_code, lint.skipped, lint.needs) == (1, None, None)
    (install,) = [e for e in examples("docs/experiments.md") if e.command.startswith("pip ")]
    assert install.skipped == "an install; .ci/run installs the extra"
    needing = [e.command for e in examples("README.md") if e.needs == "mem0"]
    assert needing == [
        "clm-policy experiment examples/experiments/memory.yaml    # file vs mem0 vs hybrid, "
        "two policies (needs Mem0)",
        "CLM_POLICY_MEM0_BASE_URL=offline clm-policy run --memory-backend hybrid   # Mem0 "
        "beside git (needs Mem0; offline stand-in, your endpoint for real)",
    ]


def test_notes_stay_out_of_what_a_reader_copies(tmp_path: Path) -> None:
    """A note in a block is refused, and one that names no command (or two) too."""
    import importlib

    page = tmp_path / "page.md"
    me = importlib.import_module(__name__)
    for text, message in (
        ("```console\n$ clm-policy lint x   # [exit 1]\n```\n", "inside a block"),
        (
            "<!-- example: `clm-policy nothere` exit 1 -->\n```console\n$ clm-policy lint x\n```\n",
            "names 0 commands",
        ),
        (
            "<!-- example: `clm-policy` exit 1 -->\n```console\n$ clm-policy a\n$ clm-policy b\n```\n",
            "names 2 commands",
        ),
    ):
        page.write_text(text)
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(me, "REPO", tmp_path)
            with pytest.raises(AssertionError, match=message):
                examples("page.md")
