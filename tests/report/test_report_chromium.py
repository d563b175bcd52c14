"""The report page in a real browser: headless Chromium (Debian's ``chromium`` package) loads
it from a file, with the network off, and draws the chart; a script planted in the memory
repository is only text. Skipped, saying why, where Chromium is not installed."""

from __future__ import annotations

import json
import struct
import subprocess
import zlib
from collections import Counter
from pathlib import Path

import pytest

from conftest import git, invoke

CHROMIUM = Path("/usr/bin/chromium")
pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="Debian's chromium is not installed (/usr/bin/chromium; apt-get install chromium)",
)

SERIES, HARD, SOFT, COMPACT = (9, 105, 218), (207, 34, 46), (191, 135, 0), (188, 76, 0)


def chromium(tmp_path: Path, page: Path, *what: str) -> str:
    done = subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--hide-scrollbars",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=1200,1400",  # the metrics, the sessions and the first chart whole
            *what,
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def pixels(png: bytes) -> tuple[int, int, list[tuple[int, int, int]]]:
    """Width, height and RGB pixels of an 8-bit, non-interlaced RGB or RGBA PNG."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    at, data, header = 8, b"", b""
    while at < len(png):
        (length,) = struct.unpack(">I", png[at : at + 4])
        kind, body = png[at + 4 : at + 8], png[at + 8 : at + 8 + length]
        at += 12 + length
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            data += body
    width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert (depth, color in (2, 6), interlace) == (8, True, 0)
    size = 3 if color == 2 else 4
    raw, stride = zlib.decompress(data), width * size
    out: list[tuple[int, int, int]] = []
    previous = bytearray(stride)
    for row in range(height):
        kind = raw[row * (stride + 1)]
        line = bytearray(raw[row * (stride + 1) + 1 : (row + 1) * (stride + 1)])
        if kind == 2:  # Up, every byte at once: bytewise sums without carries between bytes
            line = bytearray(_add_bytes(line, previous))
        elif kind in (1, 3, 4):
            _unfilter(kind, line, previous, size)
        out.extend(tuple(line[i : i + 3]) for i in range(0, stride, size))  # type: ignore[misc]
        previous = line
    return width, height, out


def _add_bytes(a: bytes | bytearray, b: bytes | bytearray) -> bytes:
    """Each byte of ``a`` plus ``b``'s, modulo 256."""
    x, y = int.from_bytes(a, "big"), int.from_bytes(b, "big")
    low = int.from_bytes(b"\x7f" * len(a), "big")
    total = ((x & low) + (y & low)) ^ ((x ^ y) & ~low & ((1 << (8 * len(a))) - 1))
    return total.to_bytes(len(a), "big")


def _unfilter(kind: int, line: bytearray, previous: bytearray, size: int) -> None:
    """Undo PNG filter ``kind`` (Sub, Average, Paeth) of ``line`` in place."""
    for i in range(len(line)):
        left = line[i - size] if i >= size else 0
        if kind == 1:
            line[i] = (line[i] + left) & 0xFF
            continue
        up = previous[i]
        if kind == 3:
            line[i] = (line[i] + (left + up) // 2) & 0xFF
            continue
        corner = previous[i - size] if i >= size else 0
        p = left + up - corner
        pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
        best = left if pa <= pb and pa <= pc else up if pb <= pc else corner
        line[i] = (line[i] + best) & 0xFF


def near(found: list[tuple[int, int, int]], color: tuple[int, int, int]) -> int:
    """How many pixels of ``found`` are within 60 of ``color`` (each colour judged once)."""
    return sum(
        count
        for p, count in Counter(found).items()
        if sum(abs(a - b) for a, b in zip(p, color, strict=True)) <= 60
    )


def test_the_page_renders_in_chromium(memory: Path, tmp_path: Path) -> None:
    assert invoke("run", "--memory", str(memory), "--format", "json").exit_code == 0
    path = memory / "sessions/demo/decisions.jsonl"
    planted = {
        "step": 44,
        "action": "continue",
        "rationale": "<script>document.title='owned'</script>",
    }
    path.write_text(path.read_text() + json.dumps(planted) + "\n")
    git(memory, "commit", "-q", "-am", "planted")
    page = tmp_path / "report.html"
    assert invoke("report", "--memory", str(memory), "-o", str(page)).exit_code == 0

    dom = chromium(tmp_path, page, "--dump-dom")
    assert "<title>clm-policy report: " in dom  # the planted script did not run
    assert "&lt;script&gt;document.title='owned'&lt;/script&gt;" in dom
    assert dom.count("<script") == 0
    assert dom.count('<polyline class="series"') == 2  # demo and demo-2, continued from it

    shot = tmp_path / "shot.png"
    chromium(tmp_path, page, f"--screenshot={shot}")
    width, height, found = pixels(shot.read_bytes())
    assert (width, height) == (1200, 1400)
    # the first screen holds the metrics and the first chart, drawn: its line, the hard threshold
    assert near(found, SERIES) > 100
    assert near(found, HARD) > 100
