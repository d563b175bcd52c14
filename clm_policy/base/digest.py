"""SHA-256 without ``hashlib``: the per-prompt commands key their caches by content.

``hashlib`` loads OpenSSL; CPython's own SHA-256 module is built in and gives the same digest.
Where it is missing (another Python), ``hashlib`` it is.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    Hasher = Callable[..., Any]


def _constructor() -> Hasher:
    for module in ("_sha256", "_sha2"):  # CPython 3.11; 3.12 and later
        try:
            found: Hasher = __import__(module).sha256
        except (ImportError, AttributeError):
            continue
        return found
    from hashlib import sha256

    return sha256


sha256: Hasher = _constructor()


def sha256_hex(data: bytes) -> str:
    """The hexadecimal SHA-256 of ``data``."""
    return str(sha256(data).hexdigest())


def files_fingerprint(paths: Iterable[str]) -> str:
    """The files at ``paths`` by name, size and modification time (``name:size:mtime``, joined
    by ``;``; a missing one left out): a cache keyed by it misses once any of them changes."""
    parts = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            continue
        parts.append(f"{os.path.basename(path)}:{st.st_size}:{st.st_mtime_ns}")
    return ";".join(parts)
