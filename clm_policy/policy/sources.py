"""Which file a policy reference names: a bundled policy by name, or a path.

A path that exists must be a regular file within the policy size limit: it is refused here,
before anything reads it (the policy cache hashes a policy's bytes before it is parsed).

A reference written in a file — ``extends:``, a policy test's ``policy:`` — stays inside the
file's reach (:func:`reach`; :func:`clm_policy.base.paths.folder_reach`): the repository the
first file of the chain is in (the nearest folder above it holding ``.git``) — outside any, the
working directory when the file is below it, else the file's own folder tree — and the folders
the person names in ``CLM_POLICY_EXTENDS_PATH``. A pull request's policy in CI is that first
file: what it names must not be a file on the runner (``/etc/passwd``,
``~/.config/gh/hosts.yml`` through ``../``, or a committed link that leads out). The target's
real path is checked before anything asks whether it exists, and the refusal names only what
was written, so it tells nothing of the file (there or not, a policy or a secret).
"""

from __future__ import annotations

import os

from clm_policy.base.errors import InputError, Location, PolicyError, quote
from clm_policy.base.paths import Reach, folder_reach
from clm_policy.base.resources import bundled_policy_file, bundled_policy_names
from clm_policy.formats.textio import POLICY_LIMIT, check_file, path_kind

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path


def reach(first: str | os.PathLike[str]) -> Reach:
    """The reach of references in the chain that starts at the file ``first``: that of its
    folder (:func:`folder_reach`)."""
    return folder_reach(os.path.dirname(os.path.abspath(first)))


def check_found(path: str | os.PathLike[str], folder: str | os.PathLike[str]) -> None:
    """Refuse a file found by searching ``folder`` whose real path leads outside the
    folder's reach (a committed link to a file on the runner): an :class:`InputError`
    naming the file only."""
    within = folder_reach(folder)
    shown = os.fspath(path)
    try:
        within.check(shown, shown, "it")
    except PolicyError as exc:
        raise InputError(f"{shown}: a link, not read: {exc.message}") from None


def discover(
    paths: Sequence[str],
    wanted: Callable[[str], bool],
    none_under: str,
    refused: Callable[[str], InputError | None],
) -> list[Path]:
    """The files ``paths`` name, in order, without repeats (``lint``'s and ``test``'s): a file
    unless ``refused`` (given the path as written) says why not; a folder's files whose name is
    ``wanted`` (:func:`~clm_policy.formats.textio.visible_files`), each :func:`check_found`,
    and "``none_under`` FOLDER" when there are none. Anything else is an :class:`InputError`."""
    from pathlib import Path

    from clm_policy.base.errors import Location, UsageError
    from clm_policy.formats.textio import visible_files

    if any(not text.strip() for text in paths):  # Path("") is "."; "$POLICY" unset, say
        raise UsageError("an empty PATH names nothing: give a file or a folder ('.' for this one)")
    unique: dict[Path, Path] = {}
    for text in paths:
        given = Path(text)
        kind = path_kind(given)
        if kind == "folder":
            files = sorted(Path(f) for f in visible_files(given) if wanted(os.path.basename(f)))
            if not files:
                raise InputError(f"{none_under} {text}")
            for found in files:  # a committed link to a file on the runner: not read
                check_found(found, given)
        elif kind == "file":
            refusal = refused(text)
            if refusal is not None:
                raise refusal
            files = [given]
        elif kind == "other":
            raise InputError("not a regular file or a folder", Location(text))
        else:
            raise InputError("no such file or directory", Location(text))
        for path in files:
            unique.setdefault(path.resolve(), path)
    return list(unique.values())


def locate_source(
    source: str | os.PathLike[str],
    relative_to: str | os.PathLike[str] | None = None,
    *,
    within: Reach | None = None,
    what: str | None = None,
) -> tuple[str, str]:
    """The file a policy reference names (a string: no pathlib on the quick paths), and how
    to show it in messages. A name without a slash or a ``.yaml``/``.yml`` ending is a bundled
    policy, unless no bundled policy has that name and a file of that name is there.
    ``within``: a reference written in a file, which must stay inside that :class:`Reach`
    (``what``: how the refusal names it, else ``extends target REF``)."""
    text = os.fspath(source)
    if isinstance(source, str) and "/" not in text and not text.endswith((".yaml", ".yml")):
        bundled = bundled_policy_file(text)
        if path_kind(bundled) == "file":
            return bundled, f"<bundled>/{text}.yaml"
        local = os.path.join(os.fspath(relative_to or ""), text)
        if within is not None:
            within.check(local, text, what)
        if path_kind(local) == "missing":  # (a folder of that name: said below, as a file's)
            known = ", ".join(bundled_policy_names())
            raise PolicyError(f"no bundled policy named {quote(text)} (bundled: {known})")
    path = text
    if relative_to is not None and not os.path.isabs(path):
        path = os.path.normpath(os.path.join(os.fspath(relative_to), path))
    if within is not None:
        within.check(path, text, what)
    shown = path if relative_to is not None else text
    try:
        check_file(path, shown, POLICY_LIMIT, "policy")
    except InputError as exc:
        raise PolicyError(exc.message, exc.location) from None
    if relative_to is None:
        _bundled_instead(text)
    return path, shown


def _bundled_instead(text: str) -> None:
    """Refuse a policy file the user named that is not there when a bundled policy has its
    name (``policies/default.yaml`` outside a checkout of clm-policy), saying how to name
    that one; any other missing file is said where it is read."""
    stem = os.path.splitext(os.path.basename(text))[0]
    if not stem or path_kind(text) != "missing":
        return
    if path_kind(bundled_policy_file(stem)) == "file":
        said = f"no such file; a bundled policy has that name: give it as {quote(stem)}, alone"
        raise PolicyError(said, Location(text))
