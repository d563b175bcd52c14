"""Find policy test files: ``*.test.yaml`` and ``*.test.yml``, recursively under folders.

Hidden folders and files (a name starting with ``.``: ``.git``, ``.venv``) are not searched.
A path that does not exist, a file not named like a test file, and a folder holding no test
file are input errors: the command line reports them and exits 2, running nothing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from clm_policy.base.errors import InputError, Location
from clm_policy.formats.textio import TEST_SUFFIXES, visible_files
from clm_policy.policy.sources import discover as find_files


def _walk(folder: Path) -> list[Path]:
    return sorted(Path(f) for f in visible_files(folder) if f.endswith(TEST_SUFFIXES))


def tests_of(policy: str, within: str) -> tuple[list[tuple[Path, str]], list[str]]:
    """The test files whose ``policy:`` names the policy file ``policy``, found by the rules
    of :func:`discover` under the policy's folder — else under the folder above it, when that
    is inside ``within`` (the project: ``policies/examples/team.yaml`` is tested from
    ``policies/tests/``) — with the names to show; and the folders looked under."""
    from clm_policy.base.errors import ClmError
    from clm_policy.formats.textio import TEST_FILE_LIMIT, read_text
    from clm_policy.policy.sources import locate_source
    from clm_policy.tester.cases import policy_named

    target = os.path.realpath(policy)
    folder = os.path.dirname(os.path.abspath(policy))
    looked: list[str] = []
    inside = os.path.realpath(within)
    for place in (folder, os.path.dirname(folder)):
        if looked and os.path.commonpath([os.path.realpath(place), inside]) != inside:
            break  # never above the project
        looked.append(place)
        found = []
        for path in _walk(Path(place)):
            try:
                ref = policy_named(
                    read_text(path, str(path), limit=TEST_FILE_LIMIT, what="test"), str(path)
                )
                named = locate_source(ref, path.parent)[0] if ref is not None else None
            except ClmError:
                continue  # not readable, or not a test of a policy that exists: not its test
            if named is not None and os.path.realpath(named) == target:
                found.append((path, str(path)))
        if found:
            return found, looked
    return [], looked


def discover(paths: Sequence[str]) -> list[tuple[Path, str]]:
    """The test files under ``paths``, each with the name to show, in order, without repeats."""

    def wanted(name: str) -> bool:
        return name.endswith(TEST_SUFFIXES)

    def refused(text: str) -> InputError | None:
        if wanted(Path(text).name):
            return None
        message = "not a policy test file (its name must end in .test.yaml or .test.yml)"
        return InputError(message, Location(text))

    none = "no test files (*.test.yaml, *.test.yml) under"
    return [(path, str(path)) for path in find_files(paths, wanted, none, refused)]
