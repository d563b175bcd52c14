"""Which file a policy reference names: a bundled policy by name, or a path.

A path that exists must be a regular file within the policy size limit: it is refused here,
before anything reads it (the policy cache hashes a policy's bytes before it is parsed).
"""

from __future__ import annotations

import os
from pathlib import Path

from clm_policy.errors import InputError, PolicyError, quote
from clm_policy.resources import bundled_policy, bundled_policy_names
from clm_policy.textio import POLICY_LIMIT, check_file, path_kind


def resolve_source(source: str | Path, relative_to: Path | None = None) -> tuple[Path, str]:
    """The file a policy reference names, and how to show it in messages."""
    text = str(source)
    if isinstance(source, str) and "/" not in text and not text.endswith((".yaml", ".yml")):
        path = bundled_policy(text)
        if path_kind(path) == "file":
            return path, f"<bundled>/{text}.yaml"
        local = (relative_to or Path()) / text
        if path_kind(local) != "file":
            known = ", ".join(bundled_policy_names())
            raise PolicyError(f"no bundled policy named {quote(text)} (bundled: {known})")
    path = Path(text)
    if relative_to is not None and not path.is_absolute():
        path = Path(os.path.normpath(relative_to / path))
    shown = str(path) if relative_to is not None else text
    try:
        check_file(path, shown, POLICY_LIMIT, "policy")
    except InputError as exc:
        raise PolicyError(exc.message, exc.location) from None
    return path, shown
