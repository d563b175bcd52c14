"""benchmarks/bench_handoff.py on the project's own fidelity sessions: the figures the issue
asks for hold, the matcher catches a wrong seed, and the committed sessions are what their
generator writes (so the files and the generator cannot drift apart)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from conftest import REPO

BENCH = REPO / "benchmarks"


def _load(name: str) -> ModuleType:
    # benchmarks/ is not a package: load the modules from their files, as the benchmark does.
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    path = BENCH / f"{name}.py" if name != "make_sessions" else BENCH / "fidelity" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


fidelity = _load("handoff_fidelity")
bench = _load("bench_handoff")
make = _load("make_sessions")


@pytest.fixture(scope="module")
def own() -> tuple[dict[str, object], list[dict[str, object]]]:
    result: tuple[dict[str, object], list[dict[str, object]]] = bench.run(bench.OWN)
    return result


def test_every_kind_of_fact_is_covered(own: tuple[dict[str, object], list[object]]) -> None:
    totals, rows = own
    seed = totals["clm seed"]
    assert len(rows) == 7
    low = {
        k: (seed.found.get(k, 0), n)
        for k, n in seed.asked.items()
        if seed.found.get(k, 0) < 0.95 * n
    }
    assert low == {}
    assert set(seed.asked) == set(fidelity.KINDS)  # every kind is asked somewhere


def test_no_stale_or_wrong_fact_and_the_seed_is_short(
    own: tuple[dict[str, object], list[dict[str, object]]],
) -> None:
    totals, rows = own
    assert {k: v for k, v in totals["clm seed"].wrong.items() if v} == {}
    assert max(int(r["seed_tokens"]) for r in rows) <= 2500  # type: ignore[call-overload]


def test_the_seed_covers_as_much_as_the_agents_own_summary(
    own: tuple[dict[str, object], list[dict[str, object]]],
) -> None:
    _totals, rows = own
    compared = [r for r in rows if "agent summary" in r]
    assert len(compared) == 4
    for row in compared:
        assert row["clm seed"]["found"] >= row["agent summary"]["found"], row["session"]  # type: ignore[index]


def test_the_old_way_misses_most_and_gives_stale_facts(
    own: tuple[dict[str, object], list[dict[str, object]]],
) -> None:
    totals, _rows = own
    last = totals["last message"]
    assert sum(last.found.values()) < 0.2 * sum(last.asked.values())
    assert "stale_next_step" in {k for k, v in last.wrong.items() if v}


def test_the_matcher_catches_a_wrong_seed() -> None:
    assert bench.sanity()
    truth = {
        "not_failures": [{"command": "rg -n TODO src"}],
        "files": {"deleted": ["old.py"]},
        "open_failures": [{"command": "mix test | tail -30"}],
    }
    wrong = fidelity.Candidate(
        "wrong",
        "**Open failures:**\n- rg -n TODO src: failed (exit 1)\n**Changed files:**\n- old.py\n",
        sections={
            "Open failures": ["rg -n TODO src: failed (exit 1)"],
            "Changed files": ["old.py"],
        },
    )
    found = fidelity.score(wrong, truth)
    assert {k for k, v in found.wrong.items() if v} == {
        "not_failure_as_failure",
        "deleted_as_changed",
    }
    assert found.found.get("open_failures", 0) == 0  # "mix test" is named nowhere


def test_the_sessions_are_what_the_generator_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(make, "OUT", tmp_path)
    for session in make.SESSIONS:
        session()
    written = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    kept = sorted(
        p.relative_to(make.HERE / "sessions")
        for p in (make.HERE / "sessions").rglob("*")
        if p.is_file()
    )
    assert written == kept
    for relative in written:
        assert (tmp_path / relative).read_bytes() == (
            make.HERE / "sessions" / relative
        ).read_bytes()
