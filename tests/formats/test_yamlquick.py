"""The quick YAML reader (clm_policy.formats.yamlquick) gives exactly what libyaml's events
build (clm_policy.formats.yamlbuild) — the data, its types and every mark — or declines.

Held on every YAML file of the project, on generated documents in the styles people write
(and some they should not), and on random edits of the bundled policies; and it must read the
bundled and example policies itself, or the cold compile would import ruamel after all.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from clm_policy.formats.yamlbuild import Builder
from clm_policy.formats.yamlquick import quick_read

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted(
    p
    for pattern in ("**/*.yaml", "**/*.yml")
    for p in ROOT.glob(pattern)
    if ".venv" not in p.parts and ".git" not in p.parts
)
POLICIES = sorted(
    [*(ROOT / "policies").glob("*.yaml"), *(ROOT / "policies" / "examples").glob("*.yaml")]
)


def built(text: str) -> tuple[Any, Any] | None:
    """What libyaml's events build, or None when it refuses the text."""
    builder = Builder(text, "f.yaml")
    try:
        builder.build()
    except Exception:
        return None
    return builder.root, builder.marks


def check(text: str) -> bool:
    """Whether the quick reader read ``text``; when it did, it read what libyaml reads."""
    quick = quick_read(text)
    if quick is None:
        return False
    # repr keeps the types (1, 1.0, True, '1') and the order of keys
    assert repr(quick) == repr(built(text)), text
    return True


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_yaml_file_of_the_project_reads_the_same(path: Path) -> None:
    check(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", POLICIES, ids=lambda p: p.name)
def test_the_bundled_and_example_policies_are_read_without_libyaml(path: Path) -> None:
    assert check(path.read_text(encoding="utf-8"))


# -- generated documents ----------------------------------------------------------------------

WORDS = ["soft", "hard_handoff", "a b", "x-y", "é", "日本", "🙂", "C#", "a:b", "url://x", "~x"]
PLAIN = [
    "1",
    "-1",
    "0x1F",
    "0o17",
    "1_000",
    "1.5",
    "-2.5e3",
    ".inf",
    ".NaN",
    "60%",
    "true",
    "False",
    "null",
    "~",
    "yes",
    "2026-01-01",
    "2026-01-01 10:00:00",
    'status == "x" and y',
    "{tokens.context} >= {profile.soft}",
    "a # not at the end",
    "it's",
    "-x",
    "x -",
    "9" * 30,
]


class Gen:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self.lines: list[str] = []

    def word(self) -> str:
        return self.r.choice(WORDS) + self.r.choice(["", str(self.r.randint(0, 99))])

    def comment(self, indent: int) -> None:
        if self.r.random() < 0.15:
            self.lines.append(" " * self.r.randint(0, indent + 2) + "# note: " + self.word())
        if self.r.random() < 0.1:
            self.lines.append(" " * self.r.choice([0, indent, indent + 5]))

    def scalar(self) -> str:
        kind = self.r.random()
        if kind < 0.5:
            text = self.r.choice([*PLAIN, self.word()])
        elif kind < 0.7:
            text = "'" + (self.word() + " 'q' # x").replace("'", "''") + "'"
        elif kind < 0.85:
            text = '"' + self.word() + " # 'x'" + '"'
        elif kind < 0.92:
            text = "[" + ", ".join(self.flow() for _ in range(self.r.randint(0, 3))) + "]"
        else:
            pairs = [f"{self.word()}: {self.flow()}" for _ in range(self.r.randint(0, 3))]
            text = "{" + ", ".join(pairs) + "}"
        if self.r.random() < 0.2:
            text += self.r.choice(["  # trailing", " #x", "   "])
        return text

    def flow(self) -> str:
        if self.r.random() < 0.1:
            return "[" + ", ".join(self.r.choice(PLAIN[:8]) for _ in range(2)) + "]"
        return self.r.choice([*PLAIN[:17], "'q'", '"d"', self.word()])

    def block_scalar(self, indent: int) -> str:
        header = self.r.choice(["|", ">"]) + self.r.choice(["", "-", "+"])
        step = self.r.choice([1, 2, 4])
        for n in range(self.r.randint(1, 4)):
            if n and self.r.random() < 0.2:
                self.lines.append("")
            # (a more indented line: kept apart by folding, declined; mostly not)
            extra = " " * self.r.choice([0, 0, 0, 0, 0, 2]) if n else ""
            self.lines.append(" " * (indent + step) + extra + self.r.choice(PLAIN + WORDS))
        for _ in range(self.r.choice([0, 0, 1, 2])):
            self.lines.append("")
        return header

    def mapping(self, indent: int, depth: int, first_prefix: str | None = None) -> None:
        keys = list(dict.fromkeys(self.word() for _ in range(self.r.randint(1, 4))))
        for n, key in enumerate(keys):
            self.comment(indent)
            prefix = first_prefix if (n == 0 and first_prefix is not None) else " " * indent
            self.entry(prefix + key + ":", indent, depth)

    def entry(self, head: str, indent: int, depth: int) -> None:
        roll = self.r.random()
        if depth < 3 and roll < 0.2:
            self.lines.append(head + self.r.choice(["", "  # c"]))
            self.mapping(indent + self.r.choice([2, 4]), depth + 1)
        elif depth < 3 and roll < 0.35:
            self.lines.append(head)
            self.sequence(indent + self.r.choice([0, 2]), depth + 1)
        elif roll < 0.45:
            at = len(self.lines)
            self.lines.append("")
            self.lines[at] = head + " " + self.block_scalar(indent)
        else:
            self.lines.append(head + " " + self.scalar())

    def sequence(self, indent: int, depth: int) -> None:
        for _ in range(self.r.randint(1, 3)):
            self.comment(indent)
            roll = self.r.random()
            if depth < 3 and roll < 0.4:
                self.mapping(indent + 2, depth + 1, first_prefix=" " * indent + "- ")
            elif depth < 3 and roll < 0.5:
                self.lines.append(" " * indent + "-")
                self.mapping(indent + 2, depth + 1)
            elif roll < 0.6:
                at = len(self.lines)
                self.lines.append("")
                self.lines[at] = " " * indent + "- " + self.block_scalar(indent)
            else:
                self.lines.append(" " * indent + "- " + self.scalar())

    def document(self) -> str:
        if self.r.random() < 0.1:
            self.sequence(0, 0)
        else:
            self.mapping(0, 0)
        return "\n".join(self.lines) + self.r.choice(["\n", "\n", "", "\n\n"])


def test_generated_documents_read_the_same() -> None:
    read = 0
    for seed in range(3000):
        read += check(Gen(seed).document())
    assert read > 1000  # most are in the shapes it reads: the comparison is not empty


MUTATIONS = [" ", ":", "-", "#", "'", '"', "\n", "{", "}", "[", "]", ",", "|", ">", "x", "é", "1"]


@pytest.mark.parametrize("path", POLICIES, ids=lambda p: p.name)
def test_edited_policies_read_the_same_or_are_declined(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    r = random.Random(path.name)
    read = 0
    for _ in range(400):
        edited = text
        for _ in range(r.randint(1, 3)):
            at = r.randrange(len(edited))
            how = r.random()
            if how < 0.4:
                edited = edited[:at] + r.choice(MUTATIONS) + edited[at:]
            elif how < 0.7:
                edited = edited[:at] + edited[at + 1 :]
            else:
                edited = edited[:at] + r.choice(MUTATIONS) + edited[at + 1 :]
        read += check(edited)  # (what libyaml refuses, it must never accept)
    assert read > 100


@pytest.mark.parametrize(
    "text",
    [
        "a:\n- 1\n- 2\nb: x\n",  # a sequence as indented as its key
        "a:\n    - 1\n    -   two  # c\n",
        "a: |-\n  x\n   y\n\nb: 1\n",
        "a: >+\n  x\n\n  y\n\n\nb: 2\n",
        "a: >\n    x\n    y\n",
        "a: {b: [1, 2.5, -3], c: 'd', e: {}}  # c\n",
        "a: 'it''s'  # c\nb: \"x # y\"\n",
        "- id: x\n  when: >-\n    a\n    b\n- id: y\n",
        "-\n  a: 1\n- b\n",
        "é: 日本 🙂\nb: {c: é}\n",  # columns count characters
        "a: 60%\nb: .inf\nc: ~\nd: 2026-01-01\ne: 0x1F\nf: yes\n",
        "# head\n\na:   b   \n   # between\n\nc: d\n",
    ],
)
def test_it_reads_the_shapes_people_write(text: str) -> None:
    assert check(text)


def test_what_it_declines_is_what_it_cannot_be_sure_of() -> None:
    for text in [
        "a: 1\n\tb: 2\n",  # a tab
        "a: 1\r\n",  # a carriage return
        "\ufeffa: 1\n",  # a byte order mark
        "%YAML 1.2\n---\na: 1\n",  # a directive
        "a: &x 1\nb: *x\n",  # an anchor and an alias
        "a: !!str 1\n",  # a tag
        "<<: {a: 1}\n",  # a merge key
        "? a\n: 1\n",  # a complex key
        "'a': 1\n",  # a quoted key
        "1: a\n",  # a key that is no string
        "a: 1\na: 2\n",  # a duplicate key
        "a:\nb: 1\n",  # an empty value
        "a: one\n  two\n",  # a plain scalar over two lines
        'a: "x\\ty"\n',  # an escape
        "a: [1,\n  2]\n",  # a flow collection over two lines
        "a: |2\n   x\n",  # an indentation indicator
        "a: >\n  x\n    more\n",  # a more indented line in a folded scalar
        "a: |\n\n  x\n",  # a blank line first
        "",  # nothing
        "# only a comment\n",
        "x\n",  # a scalar document
    ]:
        assert quick_read(text) is None, text


def test_reading_a_policy_imports_no_ruamel(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from clm_policy.formats.yamlio import load_yaml\n"
        "from clm_policy.policy.sources import resolve_source\n"
        "load_yaml(*resolve_source('claude-code'))\n"
        "load_yaml(*resolve_source('default'))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('ruamel', '_ruamel_yaml')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True
    )
    assert done.stdout == "[]\n"
