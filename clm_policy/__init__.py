"""clm-policy: context lifecycle management for LLM agents, driven by YAML policies.

>>> from clm_policy import load_policy, SessionState, TokenSnapshot
>>> policy = load_policy("default")
>>> state = SessionState(session_id="s1", tokens=TokenSnapshot(context_tokens=260_000))
>>> policy.decide(state, "coding").action.value
'compact'
"""

from __future__ import annotations

# Nothing is imported here at run time: the command line installs its Ctrl-C handler right
# after this package is imported (clm_policy.cli.entry), and every public name loads on first
# use. `TYPE_CHECKING` is spelt out so that not even `typing` is imported.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from clm_policy.base.errors import (
        ClmError,
        EvaluationError,
        ExpressionError,
        InputError,
        Location,
        PolicyError,
        StateError,
    )
    from clm_policy.models.decision import Decision, Explanation, GuardFinding
    from clm_policy.models.enums import Action, MessageRole, TaskStatus
    from clm_policy.models.state import AgentStepResult, Message, SessionState, TokenSnapshot
    from clm_policy.policy.compile import load_policy
    from clm_policy.policy.engine import Policy

__version__ = "0.1.0"

# Loaded on first use: pydantic, the YAML parser and the policy compiler cost start-up time,
# and the command line's one-shot decide on a cached policy needs none of them.
_LAZY = {
    "ClmError": "clm_policy.base.errors",
    "EvaluationError": "clm_policy.base.errors",
    "ExpressionError": "clm_policy.base.errors",
    "InputError": "clm_policy.base.errors",
    "Location": "clm_policy.base.errors",
    "PolicyError": "clm_policy.base.errors",
    "StateError": "clm_policy.base.errors",
    "Action": "clm_policy.models.enums",
    "MessageRole": "clm_policy.models.enums",
    "TaskStatus": "clm_policy.models.enums",
    "Decision": "clm_policy.models.decision",
    "Explanation": "clm_policy.models.decision",
    "GuardFinding": "clm_policy.models.decision",
    "AgentStepResult": "clm_policy.models.state",
    "Message": "clm_policy.models.state",
    "SessionState": "clm_policy.models.state",
    "TokenSnapshot": "clm_policy.models.state",
    "load_policy": "clm_policy.policy.compile",
    "Policy": "clm_policy.policy.engine",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'clm_policy' has no attribute {name!r}")


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
