"""The documents clm-policy reads and writes: the state a decision reads, the decision and its
explain trace, the handoff manifest (plain classes generated from their declarations in
:mod:`clm_policy.models.shapes`), and the files people write (policy, policy tests,
scenarios, experiments: pydantic, read at the edge).

Names are loaded on first use, so that importing :mod:`clm_policy.models.enums` (which the
fast ``decide`` path needs) loads nothing else.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from clm_policy.models.decision import (
        Decision,
        Explanation,
        GuardFinding,
        GuardTrace,
        RuleTrace,
    )
    from clm_policy.models.enums import Action, MessageRole, SignalValue, TaskStatus
    from clm_policy.models.state import AgentStepResult, Message, SessionState, TokenSnapshot

_WHERE = {
    **dict.fromkeys(("Action", "MessageRole", "SignalValue", "TaskStatus"), "enums"),
    **dict.fromkeys(
        ("Decision", "Explanation", "GuardFinding", "GuardTrace", "RuleTrace"), "decision"
    ),
    **dict.fromkeys(("AgentStepResult", "Message", "SessionState", "TokenSnapshot"), "state"),
}


def __getattr__(name: str) -> Any:
    import importlib

    if name in _WHERE:
        return getattr(importlib.import_module(f"clm_policy.models.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'clm_policy.models' has no attribute {name!r}")


__all__ = [
    "Action",
    "AgentStepResult",
    "Decision",
    "Explanation",
    "GuardFinding",
    "GuardTrace",
    "Message",
    "MessageRole",
    "RuleTrace",
    "SessionState",
    "SignalValue",
    "TaskStatus",
    "TokenSnapshot",
]
