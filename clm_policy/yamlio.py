"""The one YAML loader (keeps the line and column of every node) and the round-trip writer.

Everything that reads YAML — policies, test files, scenarios — goes through :func:`load_yaml`,
so syntax errors, duplicate keys and empty files are reported the same way everywhere, as
``file:line:col: message``. Before the parser sees a text, :mod:`clm_policy.yamldepth` refuses
one nested too deeply (ruamel's scanner is quadratic in the depth). Merge keys
(``<<: *base``) work, and a merged value is located where it is written.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq, merge_attrib
from ruamel.yaml.constructor import ConstructorError, RoundTripConstructor
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode
from ruamel.yaml.reader import ReaderError
from ruamel.yaml.scalarstring import (
    DoubleQuotedScalarString,
    FoldedScalarString,
    LiteralScalarString,
    SingleQuotedScalarString,
)

from clm_policy.errors import QUOTE_LIMIT, InputError, Location, quote
from clm_policy.textio import POLICY_LIMIT, read_text
from clm_policy.yamldepth import check_depth

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
                kl, kc = _position(node, step, key=last and key)
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


def _position(node: CommentedMap, step: PathKey, *, key: bool) -> tuple[int, int]:
    """0-based line and column of ``step``'s key or value in ``node``, or in the mapping a
    merge key (``<<: *base``) took it from."""
    if step in node.lc.data:
        line, col = node.lc.key(step) if key else node.lc.value(step)
        return line, col
    for source in getattr(node, merge_attrib, ()):
        if isinstance(source, CommentedMap) and step in source:
            return _position(source, step, key=key)
    return node.lc.line, node.lc.col


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


class _DuplicateKey(MarkedYAMLError):
    """A key given twice in one mapping: at the second, naming the line of the first."""

    def __init__(self, key: object, first: Node, second: Node) -> None:
        super().__init__(problem="duplicate key", problem_mark=second.start_mark)
        self.key = key
        self.first_line = first.start_mark.line + 1
        self.line, self.col = second.start_mark.line + 1, second.start_mark.column + 1


class _Constructor(RoundTripConstructor):
    """ruamel's round-trip constructor, with errors that say where and what exactly."""

    def check_mapping_key(
        self, node: MappingNode, key_node: Node, mapping: Any, key: Any, value: Any
    ) -> bool:
        if not isinstance(key_node, ScalarNode):  # ("? [a, b]": no file of ours has one)
            raise ConstructorError(
                problem="a key must be a string, not a mapping or a list",
                problem_mark=key_node.start_mark,
            )
        if key not in mapping:
            return True
        # ruamel reports the start of the mapping as "the first": find the first key itself
        for earlier, _ in node.value:
            if earlier is key_node:
                break
            if self.constructed_objects.get(earlier, _MISSING) == key:
                raise _DuplicateKey(key, earlier, key_node)
        raise _DuplicateKey(key, node, key_node)

    def construct_yaml_int(self, node: ScalarNode) -> Any:
        try:
            return super().construct_yaml_int(node)
        except ValueError:  # more digits than Python converts (4,300)
            raise ConstructorError(
                problem=f"integer too long ({len(node.value)} digits)",
                problem_mark=node.start_mark,
            ) from None


_MISSING = object()
_Constructor.add_constructor("tag:yaml.org,2002:int", _Constructor.construct_yaml_int)


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.Constructor = _Constructor
    yaml.preserve_quotes = True
    yaml.allow_duplicate_keys = False
    return yaml


_QUOTED = re.compile(r"'([^']*)'|\"([^\"]*)\"")


def _problem(text: object) -> str:
    """One line of a parser's message, each quoted part of it cut short (a message quotes
    the offending token, which may be a whole line of someone's file)."""

    def cut(match: re.Match[str]) -> str:
        inner = match.group(1) if match.group(1) is not None else match.group(2)
        if len(inner) <= QUOTE_LIMIT:
            return match.group(0)
        return quote(inner)

    flat = _QUOTED.sub(cut, " ".join(str(text).split()))
    return flat if len(flat) <= 4 * QUOTE_LIMIT else flat[: 4 * QUOTE_LIMIT] + "…"


def parse_yaml(text: str, file: str) -> YamlDocument:
    """Parse ``text``; syntax errors, duplicate keys and nesting deeper than
    :data:`clm_policy.yamldepth.MAX_DEPTH` become :class:`InputError` (check ``yaml-syntax``)."""
    check_depth(text, file)
    try:
        root = _yaml().load(text)
    except RecursionError:
        # ruamel's parser recurses once per nesting level; check_depth stops that long before
        raise InputError(
            "YAML nested too deeply", Location(file, 1, 1), check="yaml-syntax"
        ) from None
    except _DuplicateKey as exc:
        where = Location(file, exc.line, exc.col)
        raise InputError(
            f"duplicate key {quote(exc.key)} (first at line {exc.first_line})",
            where,
            check="yaml-syntax",
        ) from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        problem = _problem(exc.problem or exc.context or "invalid YAML")
        if exc.context and exc.problem:
            problem = f"{problem} ({_problem(exc.context)})"
        raise InputError(
            f"YAML syntax error: {problem}", Location(file, line, col), check="yaml-syntax"
        ) from None
    except ReaderError as exc:  # a character YAML does not allow (a control character)
        before = text[: exc.position]
        where = Location(file, before.count("\n") + 1, exc.position - before.rfind("\n"))
        char = chr(exc.character) if isinstance(exc.character, int) else exc.character
        raise InputError(
            f"YAML syntax error: {_problem(exc.reason)} ({char!r})", where, check="yaml-syntax"
        ) from None
    except YAMLError as exc:
        raise InputError(
            f"YAML error: {_problem(exc)}", Location(file, 1, 1), check="yaml-syntax"
        ) from None
    return YamlDocument(file=file, text=text, root=root)


def load_yaml(
    path: Path, display: str | None = None, *, limit: int = POLICY_LIMIT, what: str = "policy"
) -> YamlDocument:
    """Read and parse one YAML file. An empty file is an error: there is nothing to use.

    A file that cannot be read as text (too large, binary, not UTF-8, not a regular file) is
    reported like a syntax error (check ``yaml-syntax``): nothing else can be checked in it.
    """
    shown = display or str(path)
    try:
        text = read_text(path, shown, limit=limit, what=what)
    except InputError as exc:
        raise InputError(exc.message, exc.location, check="yaml-syntax") from None
    doc = parse_yaml(text, shown)
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
