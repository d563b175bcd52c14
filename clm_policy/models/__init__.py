"""Pydantic models: the state a decision reads, the decision, and the explain trace."""

from clm_policy.models.decision import (
    Action,
    Decision,
    Explanation,
    GuardFinding,
    GuardTrace,
    RuleTrace,
)
from clm_policy.models.state import (
    AgentStepResult,
    Message,
    MessageRole,
    SessionState,
    SignalValue,
    TaskStatus,
    TokenSnapshot,
)

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
