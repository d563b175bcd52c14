"""benchmarks/fidelity/record.py against the pinned binaries: recording the fidelity
benchmark's sessions again gives the files committed under benchmarks/fidelity/recorded/ —
the same files, the same kinds of lines — and the benchmark scores the fresh recording as it
scores the committed one (so the committed files and the recorder cannot drift apart, and a
version bump that changes what the agents write shows here)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from .agents import REPO
from .conftest import skip_module_unless

pytestmark = pytest.mark.agents_e2e
skip_module_unless("claude-code")
skip_module_unless("codex")

BENCH = REPO / "benchmarks"
COMMITTED = BENCH / "fidelity" / "recorded"


def _load(name: str, path: Path) -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


record = _load("record", BENCH / "fidelity" / "record.py")
bench = _load("bench_handoff", BENCH / "bench_handoff.py")


def _kinds(folder: Path) -> list[list[str]]:
    """Each file's line kinds (``type``, and a Codex payload's ``type``), sorted: the agents
    write some lines (bookkeeping, a queue operation beside an attachment) in an order that
    varies by run; without the lines whose number varies too (``record.VARYING``, Codex's
    ``token_usage_record``)."""
    out = []
    for path in sorted(folder.rglob("*.jsonl")):
        kinds = []
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith(record.VARYING) or '"type":"token_usage_record"' in line:
                continue
            obj = json.loads(line)
            payload = obj.get("payload")
            inner = payload.get("type") if isinstance(payload, dict) else None
            if obj.get("type") == "attachment" and isinstance(obj.get("attachment"), dict):
                inner = inner or obj["attachment"].get("type")
            kinds.append(f"{obj.get('type')}:{inner}" if inner else str(obj.get("type")))
        # Claude Code's own account of its API requests (`api-request`, `api-request-blob`),
        # the token reminder it attaches to each request and its running list of the tools
        # used (`tools-used`, written again as the file is flushed): their number follows its
        # retries and its timing, which a loaded machine changes; that they are there is what
        # the readers must meet
        counted = [k for k in kinds if not k.startswith(BY_PRESENCE)]
        out.append(sorted(counted) + sorted({k for k in kinds if k.startswith(BY_PRESENCE)}))
    return out


BY_PRESENCE = ("api-request", "attachment:total_tokens_reminder", "tools-used")


def _differing(now: list[list[str]], kept: list[list[str]]) -> str:
    """Which kinds of lines each file has more or fewer of (the message of a failure)."""
    out = []
    for n, (a, b) in enumerate(zip(now, kept, strict=True)):
        more, fewer = Counter(a) - Counter(b), Counter(b) - Counter(a)
        if more or fewer:
            out.append(f"file {n}: more {dict(more)}, fewer {dict(fewer)}")
    return "; ".join(out)


@pytest.mark.parametrize("name", sorted(record.SESSIONS))
def test_recording_again_gives_the_committed_session(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(record, "OUT", tmp_path)
    (tmp_path / name).mkdir()
    shutil.copy(COMMITTED / name / "truth.yaml", tmp_path / name / "truth.yaml")
    written = record.record(name, None)

    fresh, kept = tmp_path / name, COMMITTED / name
    names = sorted(str(p.relative_to(fresh)) for p in fresh.rglob("*") if p.is_file())
    assert names == sorted(str(p.relative_to(kept)) for p in kept.rglob("*") if p.is_file())
    assert sorted(written) == sorted(
        p for p in fresh.rglob("*") if p.is_file() and p.name != "truth.yaml"
    )
    now_kinds, kept_kinds = _kinds(fresh), _kinds(kept)
    assert now_kinds == kept_kinds, _differing(now_kinds, kept_kinds)

    (now,) = bench.own_sessions(tmp_path)
    (then,) = [s for s in bench.own_sessions(COMMITTED) if s.name == name]
    _, scored_now = bench.run([now])
    _, scored_then = bench.run([then])
    for candidate in ("seed", "agent's own summary"):
        if candidate in scored_then[0]:
            fresh_score, kept_score = scored_now[0][candidate], scored_then[0][candidate]
            assert (fresh_score["found"], fresh_score["asked"], fresh_score["wrong"]) == (
                kept_score["found"],
                kept_score["asked"],
                kept_score["wrong"],
            ), candidate
