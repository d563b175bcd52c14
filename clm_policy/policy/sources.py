"""Which file a policy reference names: a bundled policy by name, or a path."""

from __future__ import annotations

import os
from pathlib import Path

from clm_policy.errors import PolicyError
from clm_policy.resources import bundled_policy, bundled_policy_names


def resolve_source(source: str | Path, relative_to: Path | None = None) -> tuple[Path, str]:
    """The file a policy reference names, and how to show it in messages."""
    text = str(source)
    if isinstance(source, str) and "/" not in text and not text.endswith((".yaml", ".yml")):
        path = bundled_policy(text)
        if path.is_file():
            return path, f"<bundled>/{text}.yaml"
        local = (relative_to or Path()) / text
        if not local.is_file():
            known = ", ".join(bundled_policy_names())
            raise PolicyError(f"no bundled policy named '{text}' (bundled: {known})")
    path = Path(text)
    if relative_to is not None and not path.is_absolute():
        path = Path(os.path.normpath(relative_to / path))
    return path, str(path) if relative_to is not None else text
