"""The Agent protocol, and the simulated agent that plays a scenario."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import islice
from typing import Any, Protocol

from clm_policy.lifecycle.estimate import estimate_message_tokens
from clm_policy.models.enums import MessageRole, TaskStatus
from clm_policy.models.scenario import ScenarioFile, ScenarioStep
from clm_policy.models.state import AgentStepResult, Message


class Agent(Protocol):
    """What the loop drives: a step on the current messages, its handoff when asked, a hint,
    a fresh start."""

    def step(self, messages: Sequence[Message]) -> AgentStepResult: ...
    def write_handoff(self, messages: Sequence[Message], request: str) -> AgentStepResult: ...
    def inject_context(self, system_addon: str) -> None: ...
    def reset_with_seed(self, seed_messages: Sequence[Message]) -> None: ...


class ScriptedStep(AgentStepResult):
    """A step result with the scenario's facts, and what the step needed and did not find in
    its context (``missing``; ``interventions``: a person said it again)."""

    FIELDS = (*AgentStepResult.FIELDS, "step", "missing", "interventions")
    __slots__ = ("interventions", "missing", "step")

    def __init__(
        self,
        *,
        step: ScenarioStep | None = None,
        missing: list[str] | None = None,
        interventions: int = 0,
        **result: Any,
    ) -> None:
        super().__init__(**result)
        self.step = step
        self.missing = [] if missing is None else missing
        self.interventions = interventions


class SimulatedAgent:
    """Plays a scenario's steps in order, deterministically, as a provider would report them:
    ``input_tokens`` is the context it was sent, ``output_tokens`` what the step adds."""

    def __init__(self, scenario: ScenarioFile) -> None:
        self.scenario = scenario
        self._steps = ((spec, n) for spec in scenario.steps for n in range(1, spec.repeat + 1))
        self.system_addons: list[str] = []
        self.played = 0  # scenario steps consumed (a resumed run skips them)
        self.needs_asked = 0  # facts the steps needed (``needs:``), and those not found
        self.needs_missing = 0
        self._last: tuple[ScenarioStep, int] | None = None  # the step played last

    def skip(self, count: int) -> None:
        """Advance past ``count`` steps already played (resuming a persisted session)."""
        for _ in islice(self._steps, count):
            self.played += 1

    @property
    def total(self) -> int:
        return sum(spec.repeat for spec in self.scenario.steps)

    def step(self, messages: Sequence[Message]) -> AgentStepResult:
        try:
            spec, n = next(self._steps)
            self.played += 1
            self._last = spec, n
        except StopIteration:
            return AgentStepResult(task_status=TaskStatus.COMPLETED)
        missing = self._missing(spec, messages)
        if missing and spec.on_missing == "fail":
            said = f"I cannot go on: my context lacks {'; '.join(missing)}. The task fails here."
            return ScriptedStep(
                messages_added=[Message(role=MessageRole.ASSISTANT, content=said)],
                task_status=TaskStatus.FAILED,
                missing=missing,
            )
        added: list[Message] = []
        if missing:  # a person says again what the agent lost
            text = "\n".join(f"- {fact}" for fact in missing)
            added.append(Message(role=MessageRole.USER, content=f"You lost track of this:\n{text}"))
        turns = ((MessageRole.USER, spec.user), (MessageRole.ASSISTANT, spec.say))
        for role, words in (*turns, (MessageRole.TOOL, spec.tool)):  # the user's, said, a tool's
            if words is not None:
                tokens = spec.tokens if role is MessageRole.ASSISTANT else None
                added.append(
                    Message(role=role, content=words.replace("{n}", str(n)), tokens=tokens)
                )
        usage = self.scenario.report_usage
        sent = estimate_message_tokens(messages) + self.scenario.system_prompt_tokens
        return ScriptedStep(
            messages_added=added,
            tool_calls=spec.tool_calls,
            input_tokens=sent if usage else 0,
            output_tokens=estimate_message_tokens(added) if usage else 0,
            # the script's last step completes the task unless it says otherwise
            task_status=spec.task_status
            or (TaskStatus.COMPLETED if self.played >= self.total else TaskStatus.RUNNING),
            step=spec,
            missing=missing,
            interventions=1 if missing else 0,
        )

    def _missing(self, spec: ScenarioStep, messages: Sequence[Message]) -> list[str]:
        """The facts ``spec`` needs that the context does not hold (found as a recall finds
        them)."""
        if not spec.needs:
            return []
        from clm_policy.lifecycle.verify import Fact, verify

        context = [m.content for m in messages] + self.system_addons
        recall = verify([Fact("needs", text) for text in spec.needs], context)
        self.needs_asked += recall.asked
        self.needs_missing += len(recall.missing)
        return [fact.text for fact in recall.missing]

    def write_handoff(self, messages: Sequence[Message], request: str) -> AgentStepResult:
        """The ``handoff:`` of the step played last (none when it has none)."""

        spec, n = self._last if self._last is not None else (None, 0)
        if spec is None or spec.handoff is None:
            return AgentStepResult()
        text = spec.handoff.replace("{n}", str(n))
        return AgentStepResult(
            messages_added=[
                Message(role=MessageRole.USER, content=request),
                Message(role=MessageRole.ASSISTANT, content=text),
            ]
        )

    def inject_context(self, system_addon: str) -> None:
        self.system_addons.append(system_addon)

    def reset_with_seed(self, seed_messages: Sequence[Message]) -> None:
        self.system_addons = []
