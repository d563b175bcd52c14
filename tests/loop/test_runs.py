"""clm_policy.loop.runs called directly: what a run starts from, what a resume restores and
refuses, the threshold overrides, and carrying a plan out."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from clm_policy.base.errors import AgentError, EndpointError, InputError
from clm_policy.loop.runs import RunPlan, execute, first_state, plan_run, with_overrides
from clm_policy.loop.scenario import load_scenario, scenario_digest
from clm_policy.models.state import AgentStepResult, Message
from clm_policy.policy.compile import load_policy
from clm_policy.policy.engine import Threshold

from conftest import REPO, git, invoke

ENV = {"CLM_POLICY_OPENAI_MODEL": "m1", "OPENAI_API_KEY": "sk-test"}


def plan(memory: Path, **given: Any) -> RunPlan:
    options: dict[str, Any] = {
        "scenario": None,
        "policy_ref": None,
        "profile": None,
        "resume": None,
        "soft_compact": None,
        "hard_handoff": None,
        "continue_after_handoff": False,
    }
    return plan_run(str(memory), **(options | given))


def refused(memory: Path, message: str, **given: Any) -> None:
    with pytest.raises(InputError) as info:
        plan(memory, **given)
    assert info.value.message == message


# -- the first state, the overrides ---------------------------------------------------------


def test_first_state_from_a_scenario() -> None:
    spec, _ = load_scenario("demo")
    state = first_state(spec, "demo.2", "research")
    assert (state.session_id, state.profile, state.goal) == ("demo.2", "research", spec.goal)
    assert state.tokens.context_tokens == spec.system_prompt_tokens == 4000
    assert (state.tokens.context_window, state.tokens.model) == (spec.context_window, spec.model)
    assert (state.constraints, state.source_of_truth) == (spec.constraints, spec.source_of_truth)
    assert state.step_index == 0


def test_overrides_replace_one_profile_only() -> None:
    policy = load_policy("default")
    assert with_overrides(policy, "coding", None, None) is policy
    changed = with_overrides(policy, "coding", 1000, None)
    coding = changed.profile("coding")
    assert (coding.soft_compact, coding.hard_handoff) == (
        Threshold(tokens=1000),
        policy.profile("coding").hard_handoff,
    )
    assert changed.profile("research") == policy.profile("research")
    assert policy.profile("coding").soft_compact == Threshold(tokens=250000)  # untouched


@pytest.mark.parametrize(
    ("soft", "hard", "message"),
    [
        (400000, None, "--soft-compact (400000) must be below --hard-handoff (350000)"),
        (None, 250000, "--soft-compact (250000) must be below --hard-handoff (250000)"),
        (5, 5, "--soft-compact (5) must be below --hard-handoff (5)"),
    ],
)
def test_overrides_keep_soft_below_hard(soft: int | None, hard: int | None, message: str) -> None:
    with pytest.raises(InputError) as info:
        with_overrides(load_policy("default"), "coding", soft, hard)
    assert info.value.message == message


# -- a new run ------------------------------------------------------------------------------


def test_a_new_run_is_checked_and_writes_nothing(tmp_path: Path) -> None:
    memory = tmp_path / "mem"
    got = plan(memory, scenario="compaction", profile="research", soft_compact=40000)
    assert not memory.exists()
    assert (got.create_memory, got.resumed, got.played, got.agent) == (True, False, 0, "simulated")
    assert (got.state.session_id, got.profile) == ("scenario-b", "research")
    assert got.policy.profile("research").soft_compact == Threshold(tokens=40000)
    assert got.record == {
        "scenario": "compaction",
        "scenario_digest": scenario_digest(load_scenario("compaction")[0]),
        "policy": "default",
        "profile": "research",
        "soft_compact": 40000,
        "hard_handoff": None,
        "continue_after_handoff": False,
    }


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"profile": "nosuch"}, "--profile: unknown profile 'nosuch'"),
        ({"goal": "g"}, "--goal is for --agent openai (the simulated agent plays a scenario)"),
        (
            {"agent": "openai", "scenario": "demo"},
            "--scenario is for the simulated agent; --agent openai works on --goal",
        ),
        ({"agent": "openai"}, "--agent openai needs --goal TEXT: what the model is to work on"),
        ({"agent": "openai", "goal": "  "}, "--goal is empty"),
        ({"agent": "robot"}, "--agent 'robot': choose one of simulated, openai"),
        ({"resume": "demo"}, "{memory}: no memory repository to resume from"),
    ],
)
def test_bad_input_is_refused(tmp_path: Path, given: dict[str, Any], message: str) -> None:
    memory = tmp_path / "mem"
    with pytest.raises(InputError) as info:
        plan(memory, **given)
    assert info.value.message.startswith(message.format(memory=memory))
    assert not memory.exists()


def test_an_openai_run(tmp_path: Path) -> None:
    now = datetime(2026, 12, 1, tzinfo=UTC)
    got = plan(tmp_path / "mem", agent="openai", goal=" Outline it ", env=ENV, now=now)
    assert (got.state.session_id, got.state.goal, got.max_steps) == (
        "openai-20261201",
        "Outline it",
        20,
    )
    assert got.state.tokens.estimated
    assert got.record["agent"] == "openai"
    assert "scenario" not in got.record


# -- a resume -------------------------------------------------------------------------------


@pytest.fixture
def stopped(tmp_path: Path) -> Path:
    """A memory repository where session scenario-b stopped after 3 steps, run with the
    research profile and overridden limits."""
    memory = tmp_path / "mem"
    first = plan(
        memory,
        scenario="compaction",
        profile="research",
        soft_compact=40000,
        hard_handoff=900000,
        max_steps=3,
    )
    assert execute(first, str(memory)).result.stopped_reason == "max_steps"
    return memory


def test_a_resume_restores_what_the_run_was_started_with(stopped: Path) -> None:
    got = plan(stopped, resume="scenario-b")
    assert (got.resumed, got.played, got.create_memory) == (True, 3, False)
    assert (got.profile, got.state.session_id, got.state.step_index) == (
        "research",
        "scenario-b",
        3,
    )
    research = got.policy.profile("research")
    assert (research.soft_compact, research.hard_handoff) == (
        Threshold(tokens=40000),
        Threshold(tokens=900000),
    )
    assert got.spec is not None
    assert got.spec.session == "scenario-b"


@pytest.mark.parametrize("stop_at", [23, 30, 42])
def test_a_run_stopped_and_resumed_commits_what_an_unbroken_run_commits(
    tmp_path: Path, stop_at: int
) -> None:
    # the demo compacts at steps 23 and 42: a run stopped there or between them (the
    # step's decision carried out) goes on with the next step when resumed, never deciding
    # the step again (once, a compaction at step 42 was committed twice)
    def subjects(memory: Path) -> list[str]:
        return git(memory, "log", "--reverse", "--format=%s").splitlines()

    whole = tmp_path / "whole"
    go_on = {"scenario": "demo", "continue_after_handoff": True}
    execute(plan(whole, **go_on), str(whole))
    parts = tmp_path / "parts"
    first = execute(plan(parts, **go_on, max_steps=stop_at), str(parts))
    assert first.result.stopped_reason == "max_steps"
    run_json = parts / "sessions" / "demo" / "run.json"
    assert json.loads(run_json.read_text(encoding="utf-8"))["decided"] is True
    execute(plan(parts, resume="demo", continue_after_handoff=None), str(parts))
    unbroken = subjects(whole)
    assert [s for s in subjects(parts) if "max_steps" not in s] == unbroken
    assert sum("demo step 42, soft_compact" in s for s in unbroken) == 1


def test_a_resume_takes_limits_given_anew(stopped: Path) -> None:
    got = plan(stopped, resume="scenario-b", soft_compact=50000)
    research = got.policy.profile("research")
    assert (research.soft_compact, research.hard_handoff) == (
        Threshold(tokens=50000),
        Threshold(tokens=900000),
    )
    assert (got.record["soft_compact"], got.record["hard_handoff"]) == (50000, 900000)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (
            {"agent": "openai"},
            "session 'scenario-b' was run with the simulated agent (its scenario is in "
            "sessions/scenario-b/run.json): --agent openai cannot resume it",
        ),
        ({"goal": "g"}, "--goal: session 'scenario-b' keeps the goal it was started with"),
    ],
)
def test_a_resume_refuses_to_change_the_agent(
    stopped: Path, given: dict[str, Any], message: str
) -> None:
    refused(stopped, message, resume="scenario-b", **given)


def test_an_ended_session_is_not_resumed_and_its_id_is_not_reused(stopped: Path) -> None:
    done = execute(plan(stopped, resume="scenario-b"), str(stopped))
    assert done.result.stopped_reason == "completed"
    refused(
        stopped, "session 'scenario-b' ended (completed); nothing to resume", resume="scenario-b"
    )
    again = plan(stopped, scenario="compaction")
    assert (again.taken, again.taken_stopped, again.state.session_id) == (
        "scenario-b",
        "completed",
        "scenario-b.2",
    )


def test_a_session_not_made_by_run_needs_a_scenario(stopped: Path) -> None:
    record = json.loads(git(stopped, "show", "HEAD:sessions/scenario-b/run.json"))
    assert record["scenario"] == "compaction"
    (stopped / "sessions" / "scenario-b" / "run.json").write_text("{}")
    git(stopped, "commit", "-qam", "forget how it was run")
    refused(
        stopped,
        "session 'scenario-b' was not made by `clm-policy run`: give --scenario",
        resume="scenario-b",
    )
    assert plan(stopped, resume="scenario-b", scenario="compaction").played == 0


# -- carrying a plan out --------------------------------------------------------------------


class _Failing:
    """An agent whose endpoint fails on the second step."""

    def __init__(self) -> None:
        self.steps = 0

    def step(self, messages: Sequence[Message]) -> AgentStepResult:
        self.steps += 1
        if self.steps == 2:
            raise EndpointError("POST http://model/chat/completions: HTTP 500")
        return AgentStepResult(output_tokens=10)

    def write_handoff(self, messages: Sequence[Message], request: str) -> AgentStepResult:
        return AgentStepResult()

    def inject_context(self, system_addon: str) -> None:
        pass

    def reset_with_seed(self, seed_messages: Sequence[Message]) -> None:
        pass


def test_execute_creates_the_repository_and_plays(tmp_path: Path) -> None:
    memory = tmp_path / "mem"
    events: list[str] = []
    done = execute(
        plan(memory, scenario="compaction"),
        str(memory),
        listener=lambda event, _data: events.append(event),
    )
    assert (done.result.stopped_reason, done.result.compact_count, done.pending) == (
        "completed",
        len([e for e in events if e == "compact"]),
        None,
    )
    assert done.result.compact_count >= 1
    assert git(memory, "log", "-1", "--format=%s").startswith("clm(session): scenario-b")


def test_a_failing_agent_is_raised_again_with_how_to_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = tmp_path / "mem"
    ready = plan(memory, scenario="compaction")
    monkeypatch.setattr(RunPlan, "make_agent", lambda _self: _Failing())
    with pytest.raises(AgentError) as info:
        execute(ready, str(memory))
    assert type(info.value) is EndpointError
    assert info.value.message == (
        "POST http://model/chat/completions: HTTP 500; session scenario-b is saved at step 1 "
        f"(stopped: endpoint_error); to go on: clm-policy run --memory {memory} "
        "--resume scenario-b"
    )


def test_a_session_interrupted_just_past_its_handoff_stays_handed_off(tmp_path: Path) -> None:
    """Ctrl-C right after the handoff's commit (the listener hears of the handoff before the
    run's end is committed): the session ended with its handoff, and `--resume` refuses it."""
    memory = tmp_path / "mem"

    def interrupt_at_handoff(event: str, _data: dict[str, Any]) -> None:
        if event == "handoff":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        execute(plan(memory, scenario="demo"), str(memory), listener=interrupt_at_handoff)
    record = json.loads(git(memory, "show", "HEAD:sessions/demo/run.json"))
    assert record["stopped"] == "handoff"
    assert git(memory, "log", "-1", "--format=%s").startswith("clm(handoff): demo step ")
    refused(memory, "session 'demo' ended (handoff); nothing to resume", resume="demo")


def test_a_session_handed_off_by_hand_after_its_run_stopped_is_not_resumed(
    tmp_path: Path,
) -> None:
    """loop.md's sequence: a run stops, the session is handed off by hand, then `--resume`:
    the session is over (as `status` says), so the resume is refused, not a second handoff."""
    memory = tmp_path / "mem"
    execute(plan(memory, scenario="demo", max_steps=3), str(memory))
    done = invoke("handoff", "--memory", str(memory), "--session", "demo")
    assert done.exit_code == 0, done.stderr
    commit = git(memory, "rev-parse", "--short=12", "HEAD").strip()
    refused(
        memory,
        f"session 'demo' was handed off after its run stopped (commit {commit}); nothing to resume",
        resume="demo",
    )


def test_a_resume_refuses_to_overwrite_an_edit_of_the_state_not_committed(tmp_path: Path) -> None:
    memory = tmp_path / "mem"
    execute(plan(memory, scenario="demo", max_steps=3), str(memory))
    state_file = memory / "sessions" / "demo" / "state.json"
    edited = state_file.read_text().replace('"goal": "', '"goal": "EDITED ', 1)
    state_file.write_text(edited)
    refused(
        memory,
        "sessions/demo/state.json has changes that are not committed (edited by hand?): the "
        "resume goes on from the committed state and would overwrite them; commit them (git -C "
        f"{memory} commit -- sessions/demo/state.json) or drop them (git -C {memory} checkout -- "
        "sessions/demo/state.json), then resume",
        resume="demo",
    )
    assert state_file.read_text() == edited  # nothing was written
    git(memory, "commit", "-q", "-m", "goal edited", "--", "sessions/demo/state.json")
    assert plan(memory, resume="demo").state.goal.startswith("EDITED ")


def test_a_resume_refuses_a_scenario_that_changed_since_the_session_started(
    tmp_path: Path,
) -> None:
    """A resume skips the steps played: of a changed script, it would play the wrong ones (a
    shorter one ended the task as completed with no step played)."""
    memory = tmp_path / "mem"
    scenario = tmp_path / "mv.yaml"
    original = (REPO / "clm_policy" / "scenarios" / "compaction.yaml").read_text()
    scenario.write_text(original)
    execute(plan(memory, scenario=str(scenario), max_steps=2), str(memory))
    scenario.write_text(original + "# a comment changes nothing a resume plays\n")
    assert plan(memory, resume="scenario-b").resumed
    scenario.write_text(original.replace("repeat: 20", "repeat: 1"))
    refused(
        memory,
        f"the scenario {scenario} changed since session 'scenario-b' started: a resume plays on "
        "from where the session stopped in the scenario it started with; put the file back, or "
        "give --scenario FILE to play the changed one on from there",
        resume="scenario-b",
    )
    assert plan(memory, resume="scenario-b", scenario=str(scenario)).resumed  # given anew
    scenario.unlink()
    with pytest.raises(InputError) as info:
        plan(memory, resume="scenario-b")
    assert info.value.message.endswith(
        "(the scenario session 'scenario-b' started with; give --scenario)"
    )
