"""Compose YAML into ruamel's node tree with libyaml, fast, with every node's position.

ruamel's own composer resolves each scalar's tag through a slow versioned resolver; here
libyaml (``ruamel.yaml.clib``) composes and calls back :func:`_resolve`, which uses ruamel's
YAML 1.2 patterns compiled once. Without the extension (not CPython) ruamel's pure-Python
parser composes instead, with the same tags. Nodes keep their ``start_mark`` (line, column):
:mod:`.fastload` turns the tree into plain data and locates paths in it.
"""

from __future__ import annotations

import gc
import importlib
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.reader import ReaderError
from ruamel.yaml.resolver import implicit_resolvers
from ruamel.yaml.tag import Tag

from clm_policy.errors import InputError, Location

MAX_DEPTH = 100  # nesting levels; a test file needs about six

CORE = "tag:yaml.org,2002:"
_TAGS: dict[str, Tag] = {}


def _tag(name: str) -> Tag:
    full = CORE + name
    return _TAGS.setdefault(full, Tag(suffix=full))


STR, SEQ, MAP, MERGE = _tag("str"), _tag("seq"), _tag("map"), _tag("merge")

# ruamel's own YAML 1.2 implicit resolvers (so scalars resolve exactly as in policy files),
# by first character, compiled eagerly: ruamel wraps them in a lazy proxy that is slow to use.
_RESOLVERS: dict[str, list[tuple[Tag, re.Pattern[str]]]] = {}
for _versions, _name, _regexp, _first in implicit_resolvers:
    if (1, 2) in _versions:
        for _ch in _first:
            _RESOLVERS.setdefault(_ch, []).append(
                (_tag(_name.removeprefix(CORE)), re.compile(_regexp.pattern, _regexp.flags))
            )


def _resolve(kind: type[Node], value: str | None, implicit: tuple[bool, bool]) -> Tag:
    """The tag of an untagged node (the resolver the C composer calls back)."""
    if kind is ScalarNode:
        if implicit[0] and value is not None:
            for tag, regexp in _RESOLVERS.get(value[:1], ()):
                if regexp.match(value):
                    return tag
        return STR
    return SEQ if kind is SequenceNode else MAP


def _canonical_tags(node: Node) -> None:
    """Give every node of a tree composed by ruamel's pure parser our shared tag objects."""
    stack = [node]
    seen: set[int] = set()
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        current.ctag = _TAGS.get(str(current.ctag), current.ctag)
        if isinstance(current, SequenceNode):
            stack.extend(current.value)
        elif isinstance(current, MappingNode):
            for pair in current.value:
                stack.extend(pair)


class _TooDeep(Exception):
    """Raised from inside the C composer: ``parent`` is the collection nested too deep."""

    def __init__(self, parent: Node | None) -> None:
        super().__init__()
        self.parent = parent


def _c_composer() -> type[Any] | None:
    """A libyaml composer that resolves tags with :func:`_resolve`, or None without libyaml."""
    try:
        c_parser: Any = importlib.import_module("_ruamel_yaml").CParser
    except ImportError:  # pragma: no cover - ruamel.yaml.clib is installed on CPython
        return None

    class Composer(c_parser):  # type: ignore[misc]
        # The callbacks libyaml's composer makes around every node it composes. It composes
        # by C recursion, which a document nested some 50,000 levels deep crashes (SIGSEGV):
        # count the depth here and stop long before.
        depth = 0

        def descend_resolver(self, parent: Node | None, index: Any) -> None:
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise _TooDeep(parent)

        def ascend_resolver(self) -> None:
            self.depth -= 1

        resolve = staticmethod(_resolve)

    return Composer


_COMPOSER = _c_composer()


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while building a big tree of new objects.

    Every few hundred allocations the collector walks the young objects, and ever more often
    the whole growing tree: composing a 2 MB file takes about 2.5x as long with it on. The
    objects built here hold no reference cycles that would need it.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def compose(text: str, file: str) -> Node | None:
    """The node tree of the first document of ``text`` (None when empty)."""
    try:
        if _COMPOSER is None:  # without ruamel.yaml.clib (not CPython)
            node: Node | None = YAML(typ="safe", pure=True).compose(text)
            if node is not None:
                _canonical_tags(node)
            return node
        composer = _COMPOSER(text)
        try:
            node = composer.get_single_node()
        finally:
            composer.dispose()
        return node
    except _TooDeep as exc:
        where = node_location(file, exc.parent) if exc.parent is not None else Location(file, 1, 1)
        raise InputError(f"nested more than {MAX_DEPTH} levels deep", where) from None
    except RecursionError:  # the pure-Python composer recurses too
        raise InputError(
            f"nested more than {MAX_DEPTH} levels deep", Location(file, 1, 1)
        ) from None
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        problem = " ".join(str(exc.problem or exc.context or "invalid YAML").split())
        if exc.context and exc.problem:
            problem = f"{problem} ({' '.join(str(exc.context).split())})"
        raise InputError(f"YAML syntax error: {problem}", Location(file, line, col)) from None
    except ReaderError as exc:
        before = text[: exc.position]
        line = before.count("\n") + 1
        col = exc.position - (before.rfind("\n") + 1) + 1
        char = chr(exc.character) if isinstance(exc.character, int) else exc.character
        raise InputError(
            f"YAML syntax error: {exc.reason} ({char!r})", Location(file, line, col)
        ) from None
    except YAMLError as exc:
        raise InputError(
            f"YAML error: {' '.join(str(exc).split())}", Location(file, 1, 1)
        ) from None


def node_location(file: str, node: Node) -> Location:
    """Where ``node`` starts, 1-based."""
    mark = node.start_mark
    return Location(file, mark.line + 1, mark.column + 1)
