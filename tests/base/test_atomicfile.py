"""clm_policy.base.atomicfile: the one atomic write — content, permissions, the temporary file
removed on every failure, names relative to a folder descriptor, and an import of ``os`` only.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from clm_policy.base import atomicfile

from probes import probe_code


@pytest.fixture
def umask() -> Iterator[None]:
    """A umask of 077 for the test (restored after): a mode given is kept all the same."""
    old = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_writes_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    atomicfile.replace(target, b"first")
    atomicfile.replace(str(target), b"second")
    assert target.read_bytes() == b"second"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]


@pytest.mark.usefixtures("umask")
@pytest.mark.parametrize(("mode", "expected"), [(None, 0o600), (0o600, 0o600), (0o644, 0o644)])
def test_mode(tmp_path: Path, mode: int | None, expected: int) -> None:
    target = tmp_path / "f"
    atomicfile.replace(target, b"x", mode=mode)
    assert _mode(target) == expected  # None: 0o666 less the umask (077 here)


def test_a_new_file_gets_the_umask(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        atomicfile.replace(tmp_path / "f", b"x")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "f") == 0o644


@pytest.mark.parametrize("failing", ["fsync", "replace"])
@pytest.mark.parametrize("error", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_a_failure_leaves_the_target_and_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str, error: BaseException
) -> None:
    target = tmp_path / "settings.json"
    target.write_bytes(b"old")

    def fail(*_args: object, **_kwargs: object) -> None:
        raise error

    monkeypatch.setattr(os, failing, fail)
    with pytest.raises(type(error)):
        atomicfile.replace(target, b"new")
    monkeypatch.undo()
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["settings.json"]


def test_a_symlink_at_the_target_is_replaced_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.write_bytes(b"keep me")
    target = tmp_path / "target"
    target.symlink_to(outside)
    atomicfile.replace(target, b"new")
    assert not target.is_symlink()
    assert (target.read_bytes(), outside.read_bytes()) == (b"new", b"keep me")


def test_a_taken_temporary_name_is_never_written_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file (or a link) already at the temporary name is left alone; another name is used."""
    victim = tmp_path / "victim"
    victim.write_bytes(b"untouched")
    draws = iter([b"\x00" * 8, b"\x01" * 8])
    monkeypatch.setattr(os, "urandom", lambda _n: next(draws))
    planted = tmp_path / f".out.{'00' * 8}{atomicfile.TEMP_SUFFIX}"
    planted.symlink_to(victim)
    atomicfile.replace(tmp_path / "out", b"data")
    assert (tmp_path / "out").read_bytes() == b"data"
    assert victim.read_bytes() == b"untouched"
    assert planted.is_symlink()


def test_relative_to_a_folder_descriptor(tmp_path: Path) -> None:
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        atomicfile.replace("note.md", b"hello", dir_fd=fd, temp_prefix=".clm-", fsync=False)
        with pytest.raises(ValueError, match="a bare name is expected"):
            atomicfile.replace("sub/note.md", b"x", dir_fd=fd)
    finally:
        os.close(fd)
    assert (tmp_path / "note.md").read_bytes() == b"hello"
    assert [p.name for p in tmp_path.iterdir()] == ["note.md"]


def test_imports_only_os() -> None:
    """The status line and the hooks import it (through clm_policy.base.privatefiles) on every
    refresh and prompt: nothing beyond ``os`` (and ``__future__``'s flag) may come with it."""
    done = probe_code(
        "files", "import clm_policy.base.atomicfile, clm_policy.base.privatefiles", isolated=True
    )
    assert done.loaded == []
    assert done.new == [
        "__future__",
        "clm_policy",
        "clm_policy.base",
        "clm_policy.base.atomicfile",
        "clm_policy.base.privatefiles",
    ]
