"""Policies: load (extends, merge), the expression sandbox, and the deciding engine."""

from clm_policy.policy.compile import compile_policy, load_policy
from clm_policy.policy.engine import Guard, Policy, Profile, Rule, Signal, Threshold
from clm_policy.policy.load import ResolvedPolicy, load_resolved

__all__ = [
    "Guard",
    "Policy",
    "Profile",
    "ResolvedPolicy",
    "Rule",
    "Signal",
    "Threshold",
    "compile_policy",
    "load_policy",
    "load_resolved",
]
