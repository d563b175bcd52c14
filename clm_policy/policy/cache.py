"""A content-keyed cache of compiled policies, for the command line's start-up time.

Parsing YAML and validating it costs more than a decision; a process that decides once
(``clm-policy decide``) would pay it every time. The cache stores the compiled policy keyed by
the content of every file in its ``extends`` chain, the package version and the Python
version, so an edit to any of those files is a miss. It is an optimisation only: any problem
reading or writing it falls back to a plain load. ``CLM_POLICY_NO_CACHE=1`` turns it off;
``CLM_POLICY_CACHE_DIR`` moves it (default ``$XDG_CACHE_HOME/clm-policy`` or
``~/.cache/clm-policy``). Policies with errors are never cached.

An entry is JSON, never pickle: a cache directory may be shared, restored from a CI cache or
planted, and reading it must not be able to run code. It holds the policy as plain data and
every ``when:`` expression and message template as source text with its position; loading
compiles those again through :func:`~clm_policy.policy.expr.compile_expression`, so the
sandbox's allow-list check runs on every load and an entry with a refused expression is a
miss. A cache directory or entry that is a symlink, is not owned by the current user, or that
group or others may write is ignored (the policy is loaded without the cache); the directory
is created ``0700`` and entries ``0600``.
"""

from __future__ import annotations

import json
import os
import sys

from clm_policy.base.digest import files_fingerprint, sha256, sha256_hex
from clm_policy.base.errors import InputError, Location
from clm_policy.base.paths import REACH_ENV
from clm_policy.base.privatefiles import (
    cache_dir,
    private_dir,
    read_private,
    read_regular,
    write_private,
)
from clm_policy.models.enums import Action
from clm_policy.policy.engine import Guard, Policy, Price, Profile, Rule, Signal, Threshold
from clm_policy.policy.expr import CompiledExpression, SourceSpan, compile_expression
from clm_policy.policy.names import SIGNAL_TYPES, NameInfo, known_names
from clm_policy.policy.sources import locate_source
from clm_policy.policy.template import Template, compile_template

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    T = TypeVar("T")
    E = TypeVar("E", Rule, Guard)
    StrPath = str | os.PathLike[str]

__all__ = ["cache_dir", "decode_policy", "encode_policy", "entry_path", "load_policy_cached"]

_FORMAT = b"clm-policy-cache-3"  # part of every key: entries of another format are never read
_SUFFIX = ".json"
ENTRY_LIMIT = 16 * 1024 * 1024  # a compiled policy of the 1 MiB policy limit is far smaller


_FINGERPRINT: list[str] = []  # this process's: its code does not change while it runs


def _code_fingerprint() -> str:
    """The modules a cached policy is built by, by size and modification time: a changed
    clm-policy (an upgrade, a developer's edit) never loads a policy cached by another. Worked
    out once per process (a server loads the policy on every call)."""
    if _FINGERPRINT:
        return _FINGERPRINT[0]
    here = os.path.dirname(os.path.realpath(__file__))
    package = os.path.dirname(here)
    try:
        own = sorted(name for name in os.listdir(here) if name.endswith(".py"))
    except OSError:
        own = []
    _FINGERPRINT.append(
        files_fingerprint(
            (
                *(os.path.join(here, name) for name in own),
                os.path.join(package, "models", "enums.py"),
                os.path.join(package, "base", "errors.py"),
                os.path.join(package, "base", "record.py"),
            )
        )
    )
    return _FINGERPRINT[0]


def _key(shown: str, path: str, content: bytes) -> str:
    from clm_policy import __version__

    h = sha256(_FORMAT)
    # the folders the person lets extends: reach (a policy allowed once is not served after)
    allowed = os.environ.get(REACH_ENV, "")
    for part in (__version__, sys.version, _code_fingerprint(), shown, os.path.realpath(path)):
        h.update(part.encode() + b"\0")
    h.update(allowed.encode("utf-8", "surrogateescape") + b"\0")
    h.update(content)
    return str(h.hexdigest())[:32]


def entry_path(directory: StrPath, source: StrPath) -> str:
    """Where the entry for ``source`` lives in ``directory`` (whether or not it exists)."""
    path, shown = locate_source(source)
    return os.path.join(directory, f"{_key(shown, path, _policy_bytes(path, shown))}{_SUFFIX}")


def _policy_bytes(path: str, shown: str) -> bytes:
    """A policy file's bytes, read with the policy size limit (a file swapped for something
    huge after it was checked is still never read whole)."""
    from clm_policy.formats.textio import POLICY_LIMIT, read_bytes

    return read_bytes(path, shown, limit=POLICY_LIMIT, what="policy")


def load_policy_cached(source: StrPath) -> Policy:
    """Like :func:`clm_policy.policy.compile.load_policy`, through the cache."""
    directory = cache_dir()
    if directory is None or not hasattr(os, "geteuid"):
        return _load(source)  # off, or no POSIX owner to check an entry against
    try:
        entry = entry_path(directory, source)
    except (OSError, InputError):
        return _load(source)  # which says what is wrong with the file
    if private_dir(directory):
        policy = _read(entry)
        if policy is not None:
            return policy
    elif os.path.lexists(directory):
        return _load(source)  # someone else's, shared, or a symlink: not ours to trust
    policy = _load(source)
    _write(directory, entry, policy)
    return policy


def _load(source: StrPath) -> Policy:
    from pathlib import Path

    from clm_policy.policy.compile import load_policy

    return load_policy(source if isinstance(source, str | Path) else Path(os.fspath(source)))


# -- who may have written it -------------------------------------------------------------


# entries this process has decoded, by their bytes: a process that loads the policy on every
# call (the MCP server) compiles its expressions once while the entry stays the same
_DECODED: dict[bytes, tuple[list[tuple[str, str]], Policy]] = {}
_DECODED_KEPT = 8


def _read(entry: str) -> Policy | None:
    raw = read_private(entry, ENTRY_LIMIT)
    if raw is None:
        return None  # missing, a symlink, or not this user's alone
    try:
        known = _DECODED.get(raw)
        if known is None:
            data = json.loads(raw)
            pairs = (_of(list, pair) for pair in _of(list, data["deps"]))
            deps = [(_of(str, name), digest) for name, digest in pairs]
            known = (deps, decode_policy(data["policy"]))
            if len(_DECODED) >= _DECODED_KEPT:
                _DECODED.clear()
            _DECODED[raw] = known
        deps, policy = known
        if any(_file_digest(name) != digest for name, digest in deps):
            return None
        return policy
    except Exception:  # a stale, corrupt, foreign or refused entry is just a miss
        return None


def _file_digest(name: str) -> str | None:
    """The digest of a regular file (never a FIFO or a device a tampered entry names)."""
    data = read_regular(name)
    return None if data is None else sha256_hex(data)


def _write(directory: str, entry: str, policy: Policy) -> None:
    try:
        data = {
            "deps": [[p, sha256_hex(_policy_bytes(p, p))] for p in policy.source_paths],
            "policy": encode_policy(policy),
        }
    except Exception:
        return  # caching is best effort: a read-only home must not break decide

    write_private(directory, os.path.basename(entry), json.dumps(data, separators=(",", ":")))


# -- the compiled policy as plain data -------------------------------------------------------
#
# Every field of Policy, Profile, Rule, Guard and Signal is written out by name and read back
# by name; tests pin the names to the records' fields, so a field forgotten here fails a test.


class _Malformed(ValueError):
    """A cache entry whose data is not what encode_policy writes."""


_KINDS = {str: "a string", int: "an integer", bool: "a boolean", list: "a list", dict: "an object"}


def _of(kind: type[T], value: Any) -> T:
    """``value``, when it is exactly of the JSON type ``kind``."""
    if type(value) is not kind:
        raise _Malformed(f"expected {_KINDS[kind]}, got {value!r}")
    return value


def _opt(kind: type[T], value: Any) -> T | None:
    return None if value is None else _of(kind, value)


def _share(value: Any) -> float:
    """A share between 0 and 1 (a float; JSON writes 1.0 back as 1.0)."""
    if type(value) is not float or not 0.0 <= value <= 1.0:
        raise _Malformed(f"expected a share from 0 to 1, got {value!r}")
    return value


def _decode_location(value: Any) -> Location:
    file, line, col = _of(list, value)
    return Location(_of(str, file), _of(int, line), _of(int, col))


def _decode_span(value: Any) -> SourceSpan:
    items = _of(list, value)
    if len(items) not in (2, 3):
        raise _Malformed(f"expected a span of 2 or 3 items, got {value!r}")
    moves = tuple(_decode_move(m) for m in _of(list, items[2])) if len(items) == 3 else ()
    return SourceSpan(_decode_location(items[0]), _of(int, items[1]), moves)


def _decode_move(value: Any) -> tuple[int, int, int, int]:
    line, col, file_line, file_col = (_of(int, v) for v in _of(list, value))
    return line, col, file_line, file_col


def _decode_expression(value: Any, names: dict[str, NameInfo]) -> CompiledExpression:
    data = _of(dict, value)
    # parsed and checked again: an entry is data, and data is not trusted to be allowed
    return compile_expression(
        _of(str, data["text"]), _decode_span(data["span"]), names, source=_of(str, data["source"])
    )


def _decode_template(value: Any, names: dict[str, NameInfo]) -> Template | None:
    if value is None:
        return None
    data = _of(dict, value)
    return compile_template(_of(str, data["text"]), _decode_span(data["span"]), names)


def _decode_threshold(value: Any) -> Threshold:
    tokens, percent = _of(list, value)
    if percent is not None and type(percent) is not float:
        raise _Malformed(f"expected a percentage, got {percent!r}")
    return Threshold(tokens=_opt(int, tokens), percent=percent)


def _decode_profile(value: Any) -> Profile:
    d = _of(dict, value)
    return Profile(
        name=_of(str, d["name"]),
        soft_compact=_decode_threshold(d["soft_compact"]),
        hard_handoff=_decode_threshold(d["hard_handoff"]),
        min_steps_between_compacts=_of(int, d["min_steps_between_compacts"]),
        prefer_handoff_on_phase=_of(bool, d["prefer_handoff_on_phase"]),
        retain_recent_messages=_of(int, d["retain_recent_messages"]),
        context_window=_opt(int, d["context_window"]),
        description=_opt(str, d["description"]),
        locations={_of(str, k): _decode_location(v) for k, v in _of(dict, d["locations"]).items()},
        min_recall=_share(d["min_recall"]),
        seed_tokens=_of(int, d["seed_tokens"]),
    )


def _decode_signal(value: Any) -> Signal:
    d = _of(dict, value)
    kind, default = _of(str, d["type"]), d["default"]
    if kind not in SIGNAL_TYPES or type(default) not in (bool, int, float, str):
        raise _Malformed(f"not a signal: {value!r}")
    return Signal(type=kind, default=default, description=_opt(str, d["description"]))


def _decode_price(value: Any) -> Price:
    d = _of(dict, value)
    figures = d["input"], d["output"]
    if any(type(f) is not float or not 0 <= f < float("inf") for f in figures):
        raise _Malformed(f"not a price: {value!r}")
    return Price(*figures)


def _decode_entry(kind: type[E], value: Any, names: dict[str, NameInfo]) -> E:
    """A rule or a guard, each field decoded as its name says."""
    d = _of(dict, value)
    if kind is Guard and d["severity"] not in ("block", "warn"):
        raise _Malformed(f"not a guard severity: {d['severity']!r}")
    decoders: dict[str, Callable[[Any], Any]] = {
        "id": lambda v: _of(str, v),
        "when": lambda v: _decode_expression(v, names),
        "action": lambda v: Action(_of(str, v)),
        "because": lambda v: _decode_template(v, names),
        "severity": lambda v: _of(str, v),
        "overridable": lambda v: _of(bool, v),
        "message": lambda v: _decode_template(v, names),
        "description": lambda v: _opt(str, v),
        "location": lambda v: None if v is None else _decode_location(v),
    }
    return kind(**{name: decoders[name](d[name]) for name in kind.FIELDS})


def encode_policy(value: Any) -> Any:
    """A policy (``value``) as JSON-ready plain data, for :func:`decode_policy`: a record field
    by field (a position, a threshold and a span as lists; an expression or a template as its
    source text and position), an enumeration by its value, a tuple as a list, a set sorted."""
    if isinstance(value, CompiledExpression | Template):
        if isinstance(value, CompiledExpression) and not value.source:
            raise _Malformed("an expression without its source text cannot be cached")
        if value.span is None:
            raise _Malformed("an expression without its position cannot be cached")
        span = [encode_policy(value.span.start), value.span.block_indent]
        if value.span.moves:
            span.append([list(move) for move in value.span.moves])
        if isinstance(value, Template):
            return {"text": value.text, "span": span}
        return {"text": value.text, "source": value.source, "span": span}
    if isinstance(value, Location | Threshold):
        return [getattr(value, name) for name in value.FIELDS]
    if isinstance(value, Policy | Profile | Rule | Guard | Signal | Price):
        return {name: encode_policy(getattr(value, name)) for name in value.FIELDS}
    if isinstance(value, Action):
        return value.value
    if isinstance(value, dict):
        return {encode_policy(k): encode_policy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [encode_policy(v) for v in value]
    if isinstance(value, frozenset):
        return sorted(encode_policy(v) for v in value)
    return value


def decode_policy(value: Any) -> Policy:
    """The policy :func:`encode_policy` wrote, its expressions compiled and checked again.

    Raises ``ValueError`` (or ``KeyError``) for data of another shape and
    :class:`~clm_policy.base.errors.ExpressionError` for an expression the sandbox refuses.
    """
    d = _of(dict, value)
    signals = {_of(str, k): _decode_signal(v) for k, v in _of(dict, d["signals"]).items()}
    names = known_names({n: s.type for n, s in signals.items()})
    return Policy(
        name=_of(str, d["name"]),
        path=_of(str, d["path"]),
        digest=_of(str, d["digest"]),
        files=tuple(_of(str, f) for f in _of(list, d["files"])),
        profiles={_of(str, k): _decode_profile(v) for k, v in _of(dict, d["profiles"]).items()},
        default_profile=_of(str, d["default_profile"]),
        signals=signals,
        models={_of(str, k): _of(int, v) for k, v in _of(dict, d["models"]).items()},
        rules=tuple(_decode_entry(Rule, r, names) for r in _of(list, d["rules"])),
        otherwise=Action(_of(str, d["otherwise"])),
        guards={
            Action(_of(str, a)): tuple(_decode_entry(Guard, g, names) for g in _of(list, gs))
            for a, gs in _of(dict, d["guards"]).items()
        },
        description=_opt(str, d["description"]),
        source_paths=tuple(_of(str, p) for p in _of(list, d["source_paths"])),
        confirm=frozenset(Action(_of(str, a)) for a in _of(list, d["confirm"])),
        prices={_of(str, m): _decode_price(p) for m, p in _of(dict, d["prices"]).items()},
    )
