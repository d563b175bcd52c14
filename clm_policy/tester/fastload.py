"""Fast YAML loading for big data files (policy test files): plain data, positions kept.

:mod:`clm_policy.yamlio` builds ruamel's round-trip objects, which keep comments and quoting
for rewriting files but cost several seconds on a 10,000-case test file. This module takes the
node tree :mod:`.yamlnodes` composes with libyaml, turns it into plain data itself, and keeps
the tree so that a path into the data can still be located at ``file:line:col`` — but only
when asked, since only errors and failures need it.

Scalars are resolved as YAML 1.2 (core schema), like every other YAML file clm-policy reads:
``yes``/``no``/``on``/``off`` are strings, not booleans, and a strict schema refuses them where
a boolean belongs. Two differences from :func:`clm_policy.yamlio.load_yaml`, because a test
file is data with JSON semantics: timestamps stay strings, and mapping keys must be strings.
Merge keys (``<<: *base``) are supported, to share a ``given`` between cases.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from clm_policy.errors import InputError, Location, quote
from clm_policy.tester.yamlnodes import (
    CORE,
    MAP,
    MAX_DEPTH,
    MERGE,
    SEQ,
    STR,
    compose,
    node_location,
    paused_gc,
)
from clm_policy.textio import TEST_FILE_LIMIT, read_text
from clm_policy.yamlio import MAX_NODES, PathKey, YamlDocument


class _Builder:
    """Turns a node tree into plain data, refusing alias bombs, cycles and odd keys."""

    def __init__(self, file: str, budget: int) -> None:
        self.file = file
        self.budget = budget
        self.active: set[int] = set()

    def at(self, node: Node) -> Location:
        return node_location(self.file, node)

    def build(self, node: Node, depth: int = 0) -> Any:
        self.budget -= 1
        if self.budget < 0:
            raise InputError(
                "document too large once aliases are expanded", Location(self.file, 1, 1)
            )
        if isinstance(node, ScalarNode):
            return self.scalar(node)
        if depth >= MAX_DEPTH:
            raise InputError(f"nested more than {MAX_DEPTH} levels deep", self.at(node))
        if id(node) in self.active:
            raise InputError("an alias refers to a node that contains it", self.at(node))
        if node.ctag is not (SEQ if isinstance(node, SequenceNode) else MAP):
            expected = "seq" if isinstance(node, SequenceNode) else "map"
            if str(node.ctag) != CORE + expected:
                raise InputError(f"unsupported YAML tag {quote(str(node.ctag))}", self.at(node))
        self.active.add(id(node))
        try:
            if isinstance(node, SequenceNode):
                return [self.build(item, depth + 1) for item in node.value]
            return self.mapping(node, depth)
        finally:
            self.active.discard(id(node))

    def mapping(self, node: Node, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        first_line: dict[str, int] = {}
        merged: list[Node] = []
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode):
                raise InputError("a key must be a string", self.at(key_node))
            if key_node.ctag is MERGE:
                merged.extend(
                    value_node.value if isinstance(value_node, SequenceNode) else [value_node]
                )
                continue
            key = self.scalar(key_node)
            if not isinstance(key, str):
                raise InputError(
                    f"a key must be a string, got {quote(key_node.value)}",
                    self.at(key_node),
                )
            if key in out:
                raise InputError(
                    f"duplicate key {quote(key)} (first at line {first_line[key]})",
                    self.at(key_node),
                )
            first_line[key] = key_node.start_mark.line + 1
            out[key] = self.build(value_node, depth + 1)
        for source in merged:
            if not isinstance(source, MappingNode):
                raise InputError("'<<' merges mappings only", self.at(source))
            for key, value in self.build(source, depth + 1).items():
                out.setdefault(key, value)
        return out

    def scalar(self, node: ScalarNode) -> Any:
        tag, value = node.ctag, node.value
        if tag is STR:
            return value
        name = str(tag)
        if not name.startswith(CORE):
            raise InputError(f"unsupported YAML tag {quote(name)}", self.at(node))
        kind = name.removeprefix(CORE)
        try:
            if kind in ("str", "timestamp"):
                return value
            if kind == "null":
                return None
            if kind == "bool":
                return value.lower() == "true"
            if kind == "int":
                return _int(value)
            if kind == "float":
                return _float(value)
        except ValueError:
            pass
        raise InputError(f"cannot read {quote(value)} as a YAML {kind}", self.at(node))


def _int(text: str) -> int:
    if text.isdigit():  # the common case, first
        return int(text)
    digits = text.replace("_", "")
    sign = -1 if digits.startswith("-") else 1
    digits = digits.lstrip("+-")
    for prefix, base in (("0b", 2), ("0o", 8), ("0x", 16)):
        if digits.startswith(prefix):
            return sign * int(digits[2:], base)
    return sign * int(digits)


def _float(text: str) -> float:
    digits = text.replace("_", "").lower()
    if digits.lstrip("+-") == ".inf":
        return float(digits.replace(".inf", "inf"))
    if digits == ".nan":
        return float("nan")
    return float(digits)


@dataclass(frozen=True)
class NodeDocument(YamlDocument):
    """A YAML file as plain data (``root``) with its node tree, to locate paths on demand.

    It stands in for a round-trip :class:`~clm_policy.yamlio.YamlDocument`, so the shared
    error locator (:func:`clm_policy.validate.located_errors`) works on it unchanged.
    """

    tree: Node | None = None

    def location(self, path: Sequence[PathKey], *, key: bool = False) -> Location:
        """Where the node at ``path`` starts (its key when ``key``); see ``YamlDocument``."""
        node = self.tree
        if node is None:
            return Location(self.file, 1, 1)
        where = node_location(self.file, node)
        for i, step in enumerate(path):
            found = _child(node, step)
            if found is None:
                break
            key_node, node = found
            where = node_location(self.file, key_node if key and i == len(path) - 1 else node)
        return where

    def sub(self, path: Sequence[PathKey]) -> NodeDocument:
        """The part of this document at ``path``, as a document of its own (same file)."""
        data = self.node(path)
        node = self.tree
        for step in path:
            found = _child(node, step) if node is not None else None
            node = found[1] if found is not None else None
        return NodeDocument(file=self.file, text=self.text, root=data, tree=node)


def _child(node: Node, step: PathKey) -> tuple[Node, Node] | None:
    """(key node or item, value node) of ``step`` under ``node``, merged keys included."""
    if isinstance(node, SequenceNode) and isinstance(step, int):
        if 0 <= step < len(node.value):
            item: Node = node.value[step]
            return item, item
        return None
    if not isinstance(node, MappingNode):
        return None
    merged: list[Node] = []
    for key_node, value_node in node.value:
        if key_node.ctag is MERGE:
            merged.extend(
                value_node.value if isinstance(value_node, SequenceNode) else [value_node]
            )
        elif isinstance(key_node, ScalarNode) and key_node.value == step:
            return key_node, value_node
    for source in merged:
        found = _child(source, step)
        if found is not None:
            return found
    return None


def parse_fast(text: str, file: str) -> NodeDocument:
    """Parse ``text`` into plain data with its node tree; every problem is an InputError."""
    with paused_gc():
        tree = compose(text, file)
        root = None if tree is None else _Builder(file, MAX_NODES + len(text)).build(tree)
    return NodeDocument(file=file, text=text, root=root, tree=tree)


def load_fast(path: Path, display: str | None = None) -> NodeDocument:
    """Read and parse one YAML file with :func:`parse_fast`; an empty file is an error."""
    shown = display or str(path)
    doc = parse_fast(read_text(path, shown, limit=TEST_FILE_LIMIT, what="policy test"), shown)
    if doc.root is None:
        raise InputError("empty file: expected a YAML mapping", Location(shown, 1, 1))
    return doc
