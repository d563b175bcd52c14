"""Which file a policy reference names: a bundled policy by name, or a path.

A path that exists must be a regular file within the policy size limit: it is refused here,
before anything reads it (the policy cache hashes a policy's bytes before it is parsed).
"""

from __future__ import annotations

import os

from clm_policy.base.errors import InputError, PolicyError, quote
from clm_policy.base.resources import bundled_policy_file, bundled_policy_names
from clm_policy.formats.textio import POLICY_LIMIT, check_file, path_kind

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


def resolve_source(source: str | Path, relative_to: Path | None = None) -> tuple[Path, str]:
    """The file a policy reference names, and how to show it in messages."""
    from pathlib import Path

    path, shown = locate_source(source, relative_to)
    return Path(path), shown


def locate_source(
    source: str | os.PathLike[str], relative_to: str | os.PathLike[str] | None = None
) -> tuple[str, str]:
    """:func:`resolve_source` without pathlib: the file's path as a string, and how to show
    it. A name without a slash or a ``.yaml``/``.yml`` ending is a bundled policy, unless no
    bundled policy has that name and a file of that name is there."""
    text = os.fspath(source)
    if isinstance(source, str) and "/" not in text and not text.endswith((".yaml", ".yml")):
        bundled = bundled_policy_file(text)
        if path_kind(bundled) == "file":
            return bundled, f"<bundled>/{text}.yaml"
        local = os.path.join(os.fspath(relative_to or ""), text)
        if path_kind(local) != "file":
            known = ", ".join(bundled_policy_names())
            raise PolicyError(f"no bundled policy named {quote(text)} (bundled: {known})")
    path = text
    if relative_to is not None and not os.path.isabs(path):
        path = os.path.normpath(os.path.join(os.fspath(relative_to), path))
    shown = path if relative_to is not None else text
    try:
        check_file(path, shown, POLICY_LIMIT, "policy")
    except InputError as exc:
        raise PolicyError(exc.message, exc.location) from None
    return path, shown
