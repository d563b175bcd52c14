"""clm-policy: context lifecycle management for LLM agents, driven by YAML policies.

>>> from clm_policy import load_policy, SessionState, TokenSnapshot
>>> policy = load_policy("default")
>>> state = SessionState(session_id="s1", tokens=TokenSnapshot(context_tokens=260_000))
>>> policy.decide(state, "coding").action.value
'compact'
"""

from clm_policy.errors import (
    ClmError,
    EvaluationError,
    ExpressionError,
    InputError,
    Location,
    PolicyError,
    StateError,
)
from clm_policy.models import (
    Action,
    AgentStepResult,
    Decision,
    Explanation,
    GuardFinding,
    Message,
    MessageRole,
    SessionState,
    TaskStatus,
    TokenSnapshot,
)
from clm_policy.policy import Policy, load_policy

__version__ = "0.1.0"

__all__ = [
    "Action",
    "AgentStepResult",
    "ClmError",
    "Decision",
    "EvaluationError",
    "Explanation",
    "ExpressionError",
    "GuardFinding",
    "InputError",
    "Location",
    "Message",
    "MessageRole",
    "Policy",
    "PolicyError",
    "SessionState",
    "StateError",
    "TaskStatus",
    "TokenSnapshot",
    "__version__",
    "load_policy",
]
