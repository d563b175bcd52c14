"""Compile a resolved policy: check profiles, resolve every name, parse every expression once."""

from __future__ import annotations

from functools import partial

from clm_policy.base.errors import ClmError, LoadCheck, PolicyError, Sink
from clm_policy.base.suggest import suggest
from clm_policy.formats.yamlio import scalar_moves, scalar_source, scalar_text_start
from clm_policy.models.enums import Action
from clm_policy.policy.engine import (
    DEFAULT_MIN_RECALL,
    DEFAULT_SEED_TOKENS,
    Guard,
    Policy,
    Price,
    Profile,
    Rule,
    Signal,
    Threshold,
)
from clm_policy.policy.expr import CompiledExpression, SourceSpan, compile_expression
from clm_policy.policy.load import Entry, Origin, ResolvedPolicy, load_resolved
from clm_policy.policy.names import NameInfo, known_names
from clm_policy.policy.template import Template, compile_template

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any, TypeVar

    T = TypeVar("T")
    C = TypeVar("C", CompiledExpression, Template)

# Values a profile gets when neither it nor ``defaults`` sets them (the seed's defaults).
PROFILE_DEFAULTS: dict[str, Any] = {
    "min_steps_between_compacts": 5,
    "prefer_handoff_on_phase": True,
    "retain_recent_messages": 6,
    "context_window": None,
    "description": None,
    "min_recall": DEFAULT_MIN_RECALL,
    "seed_tokens": DEFAULT_SEED_TOKENS,
}


def load_policy(source: str | Path) -> Policy:
    """Load, merge, check and compile a policy file (or a bundled policy by name)."""
    return compile_policy(load_resolved(source))


def _span(origin: Origin, value: object) -> SourceSpan:
    """Where ``value``, the scalar at ``origin``, is written: its start, and how positions
    inside it map to the file's (SourceSpan)."""
    start, indent = scalar_text_start(origin.doc, origin.path)
    if not isinstance(value, str):
        return SourceSpan(start, indent)
    return SourceSpan(start, indent, scalar_moves(origin.doc, origin.path, value, start))


Compiled = dict[tuple[object, ...], tuple[tuple[str, ...], CompiledExpression | Template]]
"""Expressions and templates already compiled, by what each was compiled from (its text, as
written, and where it starts), with the names it reads: a caller that compiles many policies
extending the same parent (lint, a team's folder) passes one, and the parent's rules are
compiled once. A result depends on the names only through whether each name it reads is
known, so it is reused while all of them still are."""
_COMPILED_KEPT = 4096  # entries a Compiled holds at most (then it starts over)


def _memoised(
    kind: type[C],
    memo: Compiled | None,
    key: tuple[object, ...],
    names: dict[str, NameInfo],
    build: Callable[[], C],
) -> C:
    """``build()``, or the ``kind`` it gave before for ``key`` while every name that reads is
    known (:data:`Compiled`)."""
    found = memo.get(key) if memo is not None else None
    if found is not None and isinstance(found[1], kind) and all(n in names for n in found[0]):
        return found[1]
    result = build()
    if memo is not None:
        if len(memo) >= _COMPILED_KEPT:
            memo.clear()
        memo[key] = (result.names, result)
    return result


def _expr(entry: Entry, names: dict[str, NameInfo], memo: Compiled | None) -> CompiledExpression:
    origin = entry.origin_of("when")
    text = entry.get("when")
    span = _span(origin, text)
    source = scalar_source(origin.doc, origin.path)
    memo = memo if isinstance(text, str) else None  # else compile_expression says what is wrong
    build = partial(compile_expression, text, span, names, source=source)
    return _memoised(CompiledExpression, memo, ("when", text, source, span), names, build)


def _template(
    entry: Entry, name: str, names: dict[str, NameInfo], memo: Compiled | None
) -> Template | None:
    text = entry.get(name)
    if text is None:
        return None
    span = _span(entry.origin_of(name), text)
    memo = memo if isinstance(text, str) else None
    build = partial(compile_template, text, span, names)
    return _memoised(Template, memo, ("template", text, span), names, build)


def _attempt(sink: Sink, build: Callable[[], T]) -> T | None:
    """``build()``, or None when it fails and the sink collects instead of raising."""
    try:
        return build()
    except ClmError as exc:
        sink.report(exc)
        return None


def compile_policy(
    res: ResolvedPolicy, sink: Sink | None = None, compiled: Compiled | None = None
) -> Policy:
    """Check profiles, resolve every name and compile every expression of ``res``.

    Problems go to ``sink``: raised at once by default; when it collects (lint), each broken
    profile, rule or guard is reported and left out, and the rest still compiles. ``compiled``:
    what earlier calls compiled, reused where it can be and added to (:data:`Compiled`).
    """
    sink = sink or Sink()
    tried = {name: _attempt(sink, partial(_profile, res, name)) for name in res.profiles}
    profiles = {name: p for name, p in tried.items() if p is not None}
    if not res.profiles:
        sink.report(
            PolicyError(
                "a policy needs at least one profile under 'profiles:'",
                res.files[-1].location([]),
                check=LoadCheck.SCHEMA,
            )
        )
    default = _default_profile(res, profiles, sink)
    signals = {
        name: Signal(
            type=spec["type"], default=spec["default"], description=spec.get("description")
        )
        for name, (spec, _) in res.signals.items()
    }
    names = known_names({n: s.type for n, s in signals.items()})
    rules = [_attempt(sink, partial(_rule, e, names, compiled)) for e in res.rules]
    guards: dict[Action, tuple[Guard, ...]] = {}
    for action, entries in res.guards.items():
        built = [_attempt(sink, partial(_guard, e, action, names, compiled)) for e in entries]
        guards[Action(action)] = tuple(g for g in built if g is not None)
    return Policy(
        name=res.name,
        path=res.path,
        digest=res.digest,
        files=tuple(doc.file for doc in res.files),
        profiles=profiles,
        default_profile=default,
        signals=signals,
        models=dict(res.models),
        rules=tuple(r for r in rules if r is not None),
        otherwise=Action(res.otherwise),
        guards=guards,
        description=res.description,
        source_paths=tuple(str(p) for p in res.paths),
        confirm=frozenset(Action(a) for a in res.confirm),
        prices={model: Price(*price) for model, price in res.prices.items()},
    )


def _rule(e: Entry, names: dict[str, NameInfo], memo: Compiled | None) -> Rule:
    return Rule(
        id=e.id,
        when=_expr(e, names, memo),
        action=Action(e.get("action")),
        because=_template(e, "because", names, memo),
        description=e.get("description"),
        location=e.origin.location,
    )


def _guard(e: Entry, action: str, names: dict[str, NameInfo], memo: Compiled | None) -> Guard:
    return Guard(
        id=e.id,
        action=Action(action),
        when=_expr(e, names, memo),
        severity=e.get("severity"),
        overridable=bool(e.get("overridable")),
        message=_template(e, "message", names, memo),
        description=e.get("description"),
        location=e.origin.location,
    )


def _default_profile(res: ResolvedPolicy, profiles: dict[str, Profile], sink: Sink) -> str:
    if res.default_profile is not None:
        name, origin = res.default_profile
        if name in profiles or name in res.profiles:
            return name
        sink.report(
            PolicyError(
                f"default_profile: no profile named '{name}'{suggest(name, res.profiles)}",
                origin.location,
                check=LoadCheck.SCHEMA,
            )
        )
    return "coding" if "coding" in res.profiles else next(iter(res.profiles), "")


def _profile(res: ResolvedPolicy, name: str) -> Profile:
    values: dict[str, tuple[Any, Origin | None]] = {
        k: (v, None) for k, v in PROFILE_DEFAULTS.items()
    }
    values.update(res.defaults)
    values.update(res.profiles[name])
    where = res.profile_origins[name]
    for key in ("soft_compact", "hard_handoff"):
        if key not in values:
            raise PolicyError(
                f"profile '{name}' has no {key} (set it in the profile or under defaults)",
                where.key_location,
                check=LoadCheck.SCHEMA,
            )
    soft = Threshold.parse(values["soft_compact"][0])
    hard = Threshold.parse(values["hard_handoff"][0])
    window = values["context_window"][0]
    soft_at, hard_at = soft.resolve(window), hard.resolve(window)
    if soft.percent is not None and hard.percent is not None:
        soft_at, hard_at = int(soft.percent * 1000), int(hard.percent * 1000)
    if soft_at is not None and hard_at is not None and soft_at >= hard_at:
        origin = values["soft_compact"][1] or where
        raise PolicyError(
            f"profile '{name}': soft_compact ({soft}) must be below hard_handoff ({hard})",
            origin.location,
            check=LoadCheck.THRESHOLD_ORDER,
        )
    return Profile(
        name=name,
        soft_compact=soft,
        hard_handoff=hard,
        min_steps_between_compacts=values["min_steps_between_compacts"][0],
        prefer_handoff_on_phase=values["prefer_handoff_on_phase"][0],
        retain_recent_messages=values["retain_recent_messages"][0],
        context_window=window,
        description=values["description"][0],
        min_recall=float(values["min_recall"][0]),
        seed_tokens=int(values["seed_tokens"][0]),
        locations={
            key: (origin or where).location
            for key, (_, origin) in values.items()
            if key in ("soft_compact", "hard_handoff", "context_window")
        },
    )
