"""The metrics monitor: after each step, how full the context is and what it cost.

The context is the provider's ``input_tokens`` plus ``output_tokens``, else estimated from
the messages (``estimated``). It is the *current* fill, while ``input/output/total_tokens``
accumulate for cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from clm_policy.lifecycle.estimate import estimate_message_tokens
from clm_policy.models.state import (
    COUNTED_FIELDS,
    READ_FIELDS,
    AgentStepResult,
    SessionState,
    TokenSnapshot,
)


@dataclass
class MetricsMonitor:
    system_prompt_tokens: int = 0

    def update(self, state: SessionState, step: AgentStepResult) -> TokenSnapshot:
        """The snapshot after ``step`` (already merged into ``state.messages``)."""
        before = state.tokens
        context = step.input_tokens + step.output_tokens
        estimated = not (step.input_tokens or step.output_tokens)  # no provider figures
        if estimated:
            context = estimate_message_tokens(state.messages) + self.system_prompt_tokens
        return before.replace(
            context_tokens=context,
            input_tokens=before.input_tokens + step.input_tokens,
            output_tokens=before.output_tokens + step.output_tokens,
            total_tokens=before.total_tokens + step.input_tokens + step.output_tokens,
            estimated=estimated,
        )

    def metrics(self, state: SessionState, step: AgentStepResult) -> dict[str, object]:
        """One line of metrics.jsonl."""
        t = state.tokens
        return {
            "session": state.session_id,
            "step": state.step_index,
            "context_tokens": t.context_tokens,
            "input_tokens": t.input_tokens,
            "output_tokens": t.output_tokens,
            "total_tokens": t.total_tokens,
            "estimated": t.estimated,
            "tool_calls": step.tool_calls,
            "messages": len(state.messages),
            "status": state.status.value,
        }


def seen_state(state: SessionState) -> dict[str, Any]:
    """What a decision reads of ``state``, for its line of decisions.jsonl, from which
    ``clm-policy replay`` re-decides it: every field the engine reads, as SessionState JSON,
    but the lists a decision only counts, whose lengths are in ``lengths``."""

    read = {"session_id", *READ_FIELDS} - set(COUNTED_FIELDS)
    data = state.replace(**{name: [] for name in COUNTED_FIELDS}).as_dict()
    return {
        "state": {name: value for name, value in data.items() if name in read},
        "lengths": {name: len(getattr(state, name)) for name in COUNTED_FIELDS},
    }
