"""The seed a fresh session starts from (clm_policy.lifecycle.seed): within its budget, the most
useful facts first, no long list crowding out the kinds after it, empty sections left out, a
pointer to the manifest and the transcript for the rest."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from clm_policy.lifecycle.handoff import build_manifest
from clm_policy.lifecycle.seed import seed_text
from clm_policy.models.manifest import HandoffManifest
from clm_policy.models.state import SessionState

from conftest import git, invoke

NOW = datetime(2026, 12, 1, 12, tzinfo=UTC)
POINTER = "manifests/20261201T120000Z_s1.json"


def manifest(**changes: object) -> HandoffManifest:
    values: dict[str, object] = {
        "session_id": "s1",
        "goal": "Port the handlers to async",
        "requests": ["Port the handlers to async"],
        "remaining": ["Port h09", "Port h10"],
        "open_failures": ["pytest -q tests/handlers: failed (1 failed, 47 passed in 2.1s)"],
        "transcript": "~/.claude/projects/-home-dev-shop/s1.jsonl",
    }
    values.update(changes)
    return build_manifest(SessionState.model_validate(values), "hard limit", now=NOW)


def test_sections_in_order_and_the_pointer() -> None:
    text = seed_text(manifest(constraints=["no new dependencies"]), manifest_path=POINTER)
    titles = [line for line in text.splitlines() if line.startswith("**")]
    assert titles == [
        "**Goal:** Port the handlers to async",
        "**Status:** in_progress",
        "**Next safe action:** Continue with: Port h09 (then 1 more task)",
        "**Open failures:**",
        "**Remaining tasks:**",
        "**Constraints:**",
    ]
    # empty sections are left out, not printed as "(none)"
    assert "(none)" not in text
    assert "**Blockers:**" not in text
    assert text.endswith(
        f"For more, read the handoff manifest `{POINTER}` and the transcript "
        "`~/.claude/projects/-home-dev-shop/s1.jsonl`.\n"
    )


@pytest.mark.parametrize("tokens", [300, 600, 2500])
def test_the_budget_holds_and_the_first_facts_stay(tokens: int) -> None:
    many = manifest(
        changed_artifacts=[f"shop/handlers/h{n:03d}.py" for n in range(400)],
        commands_and_results=[f"pytest -q tests/test_h{n:03d}.py: passed" for n in range(50)],
        decisions=["keep callbacks in shop/legacy/"],
        constraints=["do not touch shop/legacy/"],
    )
    text = seed_text(many, seed_tokens=tokens, manifest_path=POINTER)
    assert len(text) <= tokens * 4
    for fact in (
        "Port the handlers to async",
        "1 failed, 47 passed",
        "- Port h09",
        "- do not touch shop/legacy/",  # a long list of files does not crowd these out
        "- keep callbacks in shop/legacy/",
    ):
        assert fact in text
    # the newest files and commands are the ones kept
    assert "shop/handlers/h399.py" in text
    assert "shop/handlers/h000.py" not in text
    left = text.splitlines()[-1]
    assert left.startswith("Left out for length: changed files ")
    assert left.endswith(
        f"read the handoff manifest `{POINTER}` and the transcript "
        "`~/.claude/projects/-home-dev-shop/s1.jsonl` for them."
    )


def test_the_goal_status_and_next_step_always_stay() -> None:
    long_goal = "Port the handlers. " * 200
    text = seed_text(manifest(goal=long_goal), seed_tokens=100)
    assert text.splitlines()[4].startswith("**Goal:** Port the handlers. Port")
    assert "**Status:** in_progress" in text
    assert "**Next safe action:** " in text


def test_an_old_manifest_still_gives_a_seed() -> None:
    data = manifest().model_dump(mode="json")
    for key in ("requests", "remaining", "open_failures", "transcript", "last_message"):
        data.pop(key)
    old = HandoffManifest.model_validate(data)
    text = seed_text(old, constraints=["from state.json"], decisions=["also from it"])
    assert "- from state.json" in text
    assert "- also from it" in text
    assert text.endswith("For more, read the handoff manifest.\n")


# -- the profile's seed_tokens ----------------------------------------------------------------


def test_seed_tokens_in_a_policy(tmp_path: Path) -> None:
    from clm_policy.policy.cache import decode_policy, encode_policy
    from clm_policy.policy.compile import load_policy

    assert load_policy("default").profile("coding").seed_tokens == 2500
    path = tmp_path / "team.yaml"
    path.write_text(
        "version: 1\nname: team\nextends: default\ndefaults:\n  seed_tokens: 4000\n"
        "profiles:\n  research: {soft_compact: 285000, hard_handoff: 400000, seed_tokens: 1200}\n"
    )
    team = load_policy(path)
    assert (team.profile("coding").seed_tokens, team.profile("research").seed_tokens) == (
        4000,
        1200,
    )
    again = decode_policy(json.loads(json.dumps(encode_policy(team))))
    assert again == team
    resolved = invoke("resolve", str(path)).stdout
    assert "seed_tokens: 1200" in resolved
    assert "seed_tokens" not in invoke("resolve", "default").stdout


@pytest.mark.parametrize("value", ["99", "-1", "2.5", "'lots'"])
def test_seed_tokens_out_of_range_is_refused(tmp_path: Path, value: str) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(f"version: 1\nextends: default\ndefaults:\n  seed_tokens: {value}\n")
    result = invoke("lint", str(path))
    assert result.exit_code == 1
    assert "seed_tokens" in result.stdout


def test_a_handoff_takes_its_profiles_budget(tmp_path: Path) -> None:
    from clm_policy.lifecycle.pipelines import run_handoff
    from clm_policy.memory.git.write import MemoryRepo
    from clm_policy.memory.init import init_memory

    memory = tmp_path / "mem"
    init_memory(memory)
    state = SessionState.model_validate(
        {"session_id": "s1", "goal": "g", "changed_artifacts": [f"f{n}.py" for n in range(300)]}
    )
    with MemoryRepo(memory) as repo:
        done = run_handoff(repo, state, seed_tokens=200, now=NOW)
    assert len(done.seed[0].content) <= 800
    assert done.recall is not None
    assert done.recall.by_kind["changed_artifacts"][0] < 300  # the budget cut files
    log = git(memory, "log", "-1", "--format=%(trailers:key=Clm-Seed-Tokens,valueonly)")
    assert int(log) <= 200
