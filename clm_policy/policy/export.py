"""A compiled policy written back as one self-contained YAML policy (extends merged)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from clm_policy.base.termsafe import terminal_safe
from clm_policy.formats.yamlio import dump_yaml
from clm_policy.policy.compile import PROFILE_DEFAULTS
from clm_policy.policy.engine import Guard, Policy, Profile, Rule


def _profile(p: Profile) -> CommentedMap:
    out = CommentedMap()
    if p.description:
        out["description"] = p.description
    for threshold, key in ((p.soft_compact, "soft_compact"), (p.hard_handoff, "hard_handoff")):
        out[key] = threshold.tokens if threshold.tokens is not None else str(threshold)
    out["min_steps_between_compacts"] = p.min_steps_between_compacts
    out["prefer_handoff_on_phase"] = p.prefer_handoff_on_phase
    out["retain_recent_messages"] = p.retain_recent_messages
    if p.context_window is not None:
        out["context_window"] = p.context_window
    for key in ("min_recall", "seed_tokens"):  # written when not the default
        if getattr(p, key) != PROFILE_DEFAULTS[key]:
            out[key] = getattr(p, key)
    return out


def _comment(text: str) -> str:
    """A file name for a comment: one line, shown as a terminal shows it (a comment has no
    escapes of its own; :func:`~clm_policy.formats.yamlio.dump_yaml` keeps the data exact)."""
    return terminal_safe(text, lines=False)


def _entries(entries: Sequence[Rule | Guard], indent: int) -> CommentedSeq:
    """Rules, or one action's guards, each after a comment saying where it was written."""
    seq = CommentedSeq()
    for i, e in enumerate(entries):
        item = CommentedMap(id=e.id)
        if e.description:
            item["description"] = e.description
        item["when"] = e.when.text
        if isinstance(e, Rule):
            item["action"] = e.action.value
            text, key = e.because, "because"
        else:
            item["severity"] = e.severity
            item["overridable"] = e.overridable
            text, key = e.message, "message"
        if text is not None:
            item[key] = text.text
        seq.append(item)
        seq.yaml_set_comment_before_after_key(
            i, before=f"from {_comment(str(e.when.location))}", indent=indent
        )
    return seq


def resolved_yaml(policy: Policy) -> str:
    doc = CommentedMap()
    doc["version"] = 1
    doc["name"] = policy.name
    doc.yaml_set_start_comment(
        "Resolved policy (extends merged): "
        + " <- ".join(_comment(f) for f in reversed(policy.files))
        + f"\nhash of its files (their paths and content) {policy.digest}"
    )
    if policy.description:
        doc["description"] = policy.description
    doc["default_profile"] = policy.default_profile
    doc["profiles"] = CommentedMap((n, _profile(p)) for n, p in policy.profiles.items())
    if policy.models:
        doc["models"] = CommentedMap(policy.models)
    if policy.prices:
        doc["prices"] = CommentedMap(
            (m, CommentedMap(input=p.input, output=p.output)) for m, p in policy.prices.items()
        )
    if policy.signals:
        signals = CommentedMap()
        for name, s in policy.signals.items():
            spec: dict[str, Any] = {"type": s.type, "default": s.default}
            if s.description:
                spec["description"] = s.description
            signals[name] = CommentedMap(spec)
        doc["signals"] = signals
    doc["rules"] = _entries(policy.rules, 2)
    doc["otherwise"] = policy.otherwise.value
    if policy.confirm:
        doc["confirm"] = sorted(a.value for a in policy.confirm)
    if policy.guards:
        doc["guards"] = CommentedMap((a.value, _entries(gs, 4)) for a, gs in policy.guards.items())
    return dump_yaml(doc)
