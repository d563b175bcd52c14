"""Reading a file named by data without ever blocking (clm_policy.base.privatefiles)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from clm_policy.base.privatefiles import read_private, read_regular


def test_a_regular_file_whole_limited_or_its_end(tmp_path: Path) -> None:
    file = tmp_path / "t.jsonl"
    file.write_bytes(b"0123456789")
    assert read_regular(file) == b"0123456789"
    assert read_regular(file, 4) == b"01234"  # one more than the limit: the caller sees "over"
    assert read_regular(file, 4, last=True) == b"6789"
    assert read_regular(file, 40, last=True) == b"0123456789"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_what_is_not_a_regular_file_is_none_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # no writer: a plain open would wait for one for ever
    for path in (fifo, tmp_path, tmp_path / "missing", "/dev/zero", "bad\0name"):
        assert read_regular(path, 10) is None
        assert read_regular(path, 10, last=True) is None


def test_private_refuses_a_link_and_a_file_others_may_write(tmp_path: Path) -> None:
    file = tmp_path / "entry"
    file.write_bytes(b"{}")
    file.chmod(0o600)
    (tmp_path / "link").symlink_to(file)
    assert read_private(file, 10) == read_regular(tmp_path / "link", 10) == b"{}"
    assert read_private(tmp_path / "link", 10) is None
    file.chmod(0o666)
    assert read_private(file, 10) is None
