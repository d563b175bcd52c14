"""A scenario step that needs a fact: found in the context it is given, or a person says it
again (``on_missing: ask``: one human intervention), or the task fails (``fail``); and the
memory backend is told what each compaction takes out of the context."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from clm_policy.loop.agent import SimulatedAgent
from clm_policy.loop.control import LoopResult, OuterControlLoop
from clm_policy.loop.runs import first_state
from clm_policy.memory.git.write import MemoryRepo
from clm_policy.memory.store import GitMemoryStore, Remembered
from clm_policy.models.scenario import ScenarioFile
from clm_policy.policy.compile import load_policy

POLICY = """\
version: 1
name: small
extends: default
profiles:
  coding: {soft_compact: 3000, hard_handoff: 6000}
"""


def scenario(on_missing: str, planted_late: bool = False) -> ScenarioFile:
    planted = {"user": "Staging is read-only on Fridays.", "say": "Noted.", "tokens": 100}
    work = {"say": "Working (part {n}).", "tokens": 500, "repeat": 8}
    steps = [work, planted] if planted_late else [planted, work]
    return ScenarioFile.model_validate(
        {
            "version": 1,
            "goal": "Deploy the release",
            "profile": "coding",
            "steps": [
                *steps,
                {
                    "say": "Deploying.",
                    "needs": ["staging is read-only on Fridays"],
                    "on_missing": on_missing,
                },
                {"say": "Released.", "status": "completed"},
            ],
        }
    )


@dataclass
class Recording(GitMemoryStore):
    """The git store, keeping what the loop told it."""

    events: list[Remembered] = field(default_factory=list)

    def remember(self, event: Remembered) -> None:
        self.events.append(event)


def play(
    memory: Path, tmp_path: Path, spec: ScenarioFile
) -> tuple[LoopResult, list[Remembered], SimulatedAgent]:
    (tmp_path / "small.yaml").write_text(POLICY)
    policy = load_policy(tmp_path / "small.yaml")
    agent = SimulatedAgent(spec)
    with MemoryRepo(memory) as repo:
        store = Recording(repo)
        loop = OuterControlLoop(agent, policy, first_state(spec, "s", "coding"), repo, memory=store)
        result = loop.run()
    return result, store.events, agent


def test_a_fact_compacted_away_costs_an_intervention(memory: Path, tmp_path: Path) -> None:
    result, events, agent = play(memory, tmp_path, scenario("ask"))
    state = result.final_state
    assert (state.status.value, state.human_interventions) == ("completed", 1)
    assert (agent.needs_asked, agent.needs_missing) == (1, 1)
    said = [m.content for m in state.messages if m.role.value == "user"]
    assert said[-1] == "You lost track of this:\n- staging is read-only on Fridays"
    # the compaction told the backend what it dropped: the planted line among it
    (event,) = events
    assert (event.kind, event.session) == ("compact", "s")
    assert event.messages[:2] == (
        ("user", "Staging is read-only on Fridays."),
        ("assistant", "Noted."),
    )
    assert all(role != "system" for role, _ in event.messages)


def test_a_fact_still_in_the_context_is_found(memory: Path, tmp_path: Path) -> None:
    result, _, agent = play(memory, tmp_path, scenario("fail", planted_late=True))
    state = result.final_state
    assert (state.status.value, state.human_interventions) == ("completed", 0)
    assert (agent.needs_asked, agent.needs_missing) == (1, 0)


def test_on_missing_fail_fails_the_task(memory: Path, tmp_path: Path) -> None:
    result, _, _ = play(memory, tmp_path, scenario("fail"))
    assert result.stopped_reason == "failed"
    assert result.final_state.messages[-1].content == (
        "I cannot go on: my context lacks staging is read-only on Fridays. The task fails here."
    )
