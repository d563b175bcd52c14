"""Where the bundled policies and schemas are.

In a wheel they live inside the package (``clm_policy/_bundled``); in a source checkout
(editable install, tests) they are the repository's top-level ``policies/`` and ``schemas/``.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:  # pathlib is imported where a Path is returned (decide runs without it)
    from pathlib import Path

_PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # clm_policy/


def bundled_folder(kind: str) -> str:
    """``policies``, ``schemas`` or ``integrations``: the directory holding the bundled files
    of that kind."""
    inside = os.path.join(_PACKAGE, "_bundled", kind)
    if os.path.isdir(inside):
        return inside
    return os.path.join(os.path.dirname(_PACKAGE), kind)


def bundled_dir(kind: str) -> Path:
    """:func:`bundled_folder` as a Path."""
    from pathlib import Path

    return Path(bundled_folder(kind))


def bundled_policy_file(name: str) -> str:
    """Where the bundled policy ``name`` would be (whether or not it exists)."""
    return os.path.join(bundled_folder("policies"), f"{name}.yaml")


def bundled_policy_names() -> list[str]:
    return sorted(p.stem for p in bundled_dir("policies").glob("*.yaml"))


def schema_path(name: str) -> Path:
    return bundled_dir("schemas") / f"{name}.schema.json"


def schema_names() -> list[str]:
    return sorted(
        p.name.removesuffix(".schema.json") for p in bundled_dir("schemas").glob("*.schema.json")
    )
