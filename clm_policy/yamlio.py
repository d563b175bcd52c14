"""The one YAML loader (keeps the line and column of every node) and the round-trip writer.

Everything that reads YAML — policies, test files, scenarios — goes through :func:`load_yaml`,
so syntax errors, duplicate keys and empty files are reported the same way everywhere, as
``file:line:col: message``.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.constructor import DuplicateKeyError
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.scalarstring import (
    DoubleQuotedScalarString,
    FoldedScalarString,
    LiteralScalarString,
    SingleQuotedScalarString,
)

from clm_policy.errors import InputError, Location
from clm_policy.textio import read_text

PathKey = str | int


@dataclass(frozen=True)
class YamlDocument:
    """A parsed YAML file: the round-trip tree (with positions), its text and its name."""

    file: str
    text: str
    root: Any

    def location(self, path: Sequence[PathKey], *, key: bool = False) -> Location:
        """Where the node at ``path`` starts (its key when ``key`` is true).

        A path that runs past the tree yields the position of the deepest node it reached,
        which is where a missing field belongs.
        """
        node = self.root
        line, col = 1, 1
        if isinstance(node, CommentedMap | CommentedSeq):
            line, col = node.lc.line + 1, node.lc.col + 1
        for i, step in enumerate(path):
            last = i == len(path) - 1
            if isinstance(node, CommentedMap) and step in node:
                if last and key:
                    kl, kc = node.lc.key(step)
                else:
                    kl, kc = node.lc.value(step)
                line, col = kl + 1, kc + 1
                node = node[step]
            elif isinstance(node, CommentedSeq) and isinstance(step, int) and 0 <= step < len(node):
                il, ic = node.lc.item(step)
                line, col = il + 1, ic + 1
                node = node[step]
            else:
                break
        return Location(self.file, line, col)

    def node(self, path: Sequence[PathKey]) -> Any:
        node = self.root
        for step in path:
            node = node[step]
        return node


def scalar_text_start(doc: YamlDocument, path: Sequence[PathKey]) -> tuple[Location, int]:
    """Where the *text* of a scalar starts, and how many columns its content is indented.

    Returns the location of the first character of the string's content (after an opening
    quote; on the line after a ``|``/``>`` indicator) so that a column inside an expression
    can be mapped back to the file. The second value is the column (1-based) that later
    lines of a block scalar start at (0 for flow scalars).
    """
    loc = doc.location(path)
    value = doc.node(path)
    if isinstance(value, SingleQuotedScalarString | DoubleQuotedScalarString):
        return loc.shifted(cols=1), 0
    if isinstance(value, LiteralScalarString | FoldedScalarString):
        lines = doc.text.splitlines()
        nxt = loc.line  # 0-based index of the line after the indicator
        while nxt < len(lines) and not lines[nxt].strip():
            nxt += 1
        if nxt < len(lines):
            indent = len(lines[nxt]) - len(lines[nxt].lstrip(" "))
            return Location(loc.file, nxt + 1, indent + 1), indent + 1
    return loc, 0


def scalar_source(doc: YamlDocument, path: Sequence[PathKey]) -> str | None:
    """A folded (``>``) scalar's lines as written, joined by newlines; None for other styles."""
    value = doc.node(path)
    if not isinstance(value, FoldedScalarString):
        return None
    start, indent = scalar_text_start(doc, path)
    lines = doc.text.splitlines()[start.line - 1 :]
    out: list[str] = []
    for line in lines:
        if line.strip() and len(line) - len(line.lstrip(" ")) < indent - 1:
            break
        out.append(line[indent - 1 :])
    return "\n".join(out).rstrip()


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.allow_duplicate_keys = False
    return yaml


def parse_yaml(text: str, file: str) -> YamlDocument:
    """Parse ``text``; syntax errors and duplicate keys become :class:`InputError`."""
    try:
        root = _yaml().load(text)
    except RecursionError:
        # ruamel's parser recurses once per nesting level; no policy nests deeply
        raise InputError(
            "YAML nested too deeply", Location(file, 1, 1), check="yaml-syntax"
        ) from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        problem = " ".join(str(exc.problem or exc.context or "invalid YAML").split())
        if isinstance(exc, DuplicateKeyError):
            first = exc.context_mark
            where = f" (first at line {first.line + 1})" if first is not None else ""
            key = problem.split('"')[1] if problem.count('"') >= 2 else problem
            raise InputError(
                f"duplicate key '{key}'{where}", Location(file, line, col), check="yaml-syntax"
            ) from None
        if exc.context and exc.problem:
            problem = f"{problem} ({' '.join(str(exc.context).split())})"
        raise InputError(
            f"YAML syntax error: {problem}", Location(file, line, col), check="yaml-syntax"
        ) from None
    except YAMLError as exc:
        raise InputError(f"YAML error: {exc}", Location(file, 1, 1), check="yaml-syntax") from None
    return YamlDocument(file=file, text=text, root=root)


def load_yaml(path: Path, display: str | None = None) -> YamlDocument:
    """Read and parse one YAML file. An empty file is an error: there is nothing to use."""
    shown = display or str(path)
    doc = parse_yaml(read_text(path, shown), shown)
    if doc.root is None:
        raise InputError(
            "empty file: expected a YAML mapping", Location(shown, 1, 1), check="schema"
        )
    return doc


MAX_NODES = 200_000  # after aliases expand; a policy has a few hundred


def to_plain(node: Any, file: str = "<yaml>") -> Any:
    """The tree as plain Python data (dict, list, str, int, float, bool, None).

    Aliases are expanded, within a budget of :data:`MAX_NODES` nodes, so that an alias bomb
    ("billion laughs") or a self-referencing alias is an error rather than a hang.
    """
    budget = [MAX_NODES]
    active: set[int] = set()

    def walk(value: Any) -> Any:
        budget[0] -= 1
        if budget[0] < 0:
            raise InputError(
                f"document too large: more than {MAX_NODES} nodes once aliases are expanded",
                Location(file, 1, 1),
                check="yaml-syntax",
            )
        if isinstance(value, dict | list):
            if id(value) in active:
                raise InputError(
                    "an alias refers to a node that contains it",
                    Location(file, 1, 1),
                    check="yaml-syntax",
                )
            active.add(id(value))
            try:
                if isinstance(value, dict):
                    return {walk(k): walk(v) for k, v in value.items()}
                return [walk(v) for v in value]
            finally:
                active.discard(id(value))
        if isinstance(value, bool) or value is None:
            return value
        if isinstance(value, int):
            return int(value)
        if isinstance(value, float):
            return float(value)
        if isinstance(value, str):
            return str(value)
        return value

    try:
        return walk(node)
    except RecursionError:
        raise InputError(
            "YAML nested too deeply", Location(file, 1, 1), check="yaml-syntax"
        ) from None


def dump_yaml(data: Any) -> str:
    """Render data (plain or round-trip) as block-style YAML."""
    yaml = YAML(typ="rt")
    yaml.default_flow_style = False
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 100
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()
