"""Where the bundled policies and schemas are.

In a wheel they live inside the package (``clm_policy/_bundled``); in a source checkout
(editable install, tests) they are the repository's top-level ``policies/`` and ``schemas/``.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def bundled_dir(kind: str) -> Path:
    """``policies`` or ``schemas``: the directory holding the bundled files of that kind."""
    inside = _PACKAGE / "_bundled" / kind
    if inside.is_dir():
        return inside
    return _PACKAGE.parent / kind


def bundled_policy(name: str) -> Path:
    return bundled_dir("policies") / f"{name}.yaml"


def bundled_policy_names() -> list[str]:
    return sorted(p.stem for p in bundled_dir("policies").glob("*.yaml"))


def schema_path(name: str) -> Path:
    return bundled_dir("schemas") / f"{name}.schema.json"


def schema_names() -> list[str]:
    return sorted(
        p.name.removesuffix(".schema.json") for p in bundled_dir("schemas").glob("*.schema.json")
    )
