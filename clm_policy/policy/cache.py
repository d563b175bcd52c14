"""A content-keyed cache of compiled policies, for the command line's start-up time.

Parsing YAML and validating it costs more than a decision; a process that decides once
(``clm-policy decide``) would pay it every time. The cache stores the compiled policy keyed by
the content of every file in its ``extends`` chain, the package version and the Python
version, so an edit to any of those files is a miss. It is an optimisation only: any problem
reading or writing it falls back to a plain load. ``CLM_POLICY_NO_CACHE=1`` turns it off;
``CLM_POLICY_CACHE_DIR`` moves it (default ``$XDG_CACHE_HOME/clm-policy`` or
``~/.cache/clm-policy``). Policies with errors are never cached.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
from pathlib import Path

from clm_policy.policy.engine import Policy
from clm_policy.policy.sources import resolve_source

_FORMAT = b"clm-policy-cache-1"


def cache_dir() -> Path | None:
    if os.environ.get("CLM_POLICY_NO_CACHE"):
        return None
    explicit = os.environ.get("CLM_POLICY_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "clm-policy"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _code_fingerprint() -> str:
    """The modules a pickled policy is made of, by size and modification time: a changed
    clm-policy (an upgrade, a developer's edit) never loads a policy pickled by another."""
    package = Path(__file__).resolve().parents[1]
    parts = []
    for module in (
        *sorted((package / "policy").glob("*.py")),
        package / "models" / "enums.py",
        package / "errors.py",
    ):
        try:
            stat = module.stat()
        except OSError:
            continue
        parts.append(f"{module.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return ";".join(parts)


def _key(shown: str, path: Path, content: bytes) -> str:
    from clm_policy import __version__

    h = hashlib.sha256(_FORMAT)
    for part in (__version__, sys.version, _code_fingerprint(), shown, str(path.resolve())):
        h.update(part.encode() + b"\0")
    h.update(content)
    return h.hexdigest()[:32]


def load_policy_cached(source: str | Path) -> Policy:
    """Like :func:`clm_policy.policy.compile.load_policy`, through the cache."""
    directory = cache_dir()
    path, shown = resolve_source(source)
    try:
        content = path.read_bytes() if directory is not None else None
    except OSError:
        content = None
    if directory is None or content is None:
        return _load(source)
    entry = directory / f"{_key(shown, path, content)}.pickle"
    policy = _read(entry)
    if policy is not None:
        return policy
    policy = _load(source)
    _write(entry, policy)
    return policy


def _load(source: str | Path) -> Policy:
    from clm_policy.policy.compile import load_policy

    return load_policy(source)


def _read(entry: Path) -> Policy | None:
    try:
        with entry.open("rb") as fh:
            deps, policy = pickle.load(fh)
        for dep, digest in deps:
            if _digest(Path(dep).read_bytes()) != digest:
                return None
    except Exception:  # a missing, stale, corrupt or foreign entry is just a miss
        return None
    return policy if isinstance(policy, Policy) else None


def _write(entry: Path, policy: Policy) -> None:
    try:
        deps = [(p, _digest(Path(p).read_bytes())) for p in policy.source_paths]
        entry.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=entry.parent, prefix=".tmp-", suffix=".pickle")
        with os.fdopen(fd, "wb") as fh:
            pickle.dump((deps, policy), fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, entry)
    except Exception:
        return  # caching is best effort: a read-only home must not break decide
