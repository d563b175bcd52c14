"""The engine: a compiled policy that decides, and explains its decision.

``Policy.decide`` walks the rules in order; the first whose ``when`` holds proposes its
action (none: ``otherwise``). The proposed action's guards then run: a ``block`` guard that
holds turns the action into ``continue`` unless ``force`` is given and the guard is
``overridable``; a ``warn`` guard lets it through with a warning. ``Policy.explain`` does the
same and also returns every rule and guard with the values of the names it read.
"""

from __future__ import annotations

from clm_policy.base.errors import EvaluationError, StateError, quote
from clm_policy.base.record import Record, field
from clm_policy.base.suggest import suggest
from clm_policy.models.decision import Decision, GuardFinding
from clm_policy.models.enums import Action
from clm_policy.models.fields import signal_value_fits
from clm_policy.models.state import direct_values
from clm_policy.policy.template import fitted

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any

    from clm_policy.base.errors import Location
    from clm_policy.models.decision import Explanation
    from clm_policy.models.state import StateLike
    from clm_policy.policy.expr import CompiledExpression
    from clm_policy.policy.template import Template

NO_WINDOW = (
    "set tokens.context_window or tokens.model in the state, or context_window in the profile"
)
"""How a state with no known window gets one (the end of the error that says so)."""
DEFAULT_MIN_RECALL = 0.9
"""A profile's ``min_recall`` when it sets none (the compaction pipelines' too, when given no
profile)."""
DEFAULT_SEED_TOKENS = 2500
"""A profile's ``seed_tokens`` when it sets none (a seed's budget when given no profile)."""


class Threshold(Record):
    """A threshold in tokens, or as a percentage of the context window."""

    tokens: int | None = None
    percent: float | None = None

    @classmethod
    def parse(cls, value: int | str) -> Threshold:
        if isinstance(value, str):
            return cls(percent=float(value.rstrip("%")))
        return cls(tokens=value)

    def resolve(self, window: int | None) -> int | None:
        if self.tokens is not None:
            return self.tokens
        if window is None or self.percent is None:
            return None
        return int(window * self.percent / 100)

    def __str__(self) -> str:
        return f"{self.percent:g}%" if self.percent is not None else str(self.tokens)


class Profile(Record):
    """A task profile: thresholds and the figures rules read as ``profile.*``.

    ``min_recall`` is the share of a session's facts a compaction's next context must hold;
    under it the compaction becomes a handoff (``verify_failed``; docs/verification.md).
    ``seed_tokens`` is the most a handoff's seed may take (characters / 4). ``locations``: where
    soft_compact, hard_handoff and context_window were written (for lint)."""

    name: str
    soft_compact: Threshold
    hard_handoff: Threshold
    min_steps_between_compacts: int = 5
    prefer_handoff_on_phase: bool = True
    retain_recent_messages: int = 6
    context_window: int | None = None
    description: str | None = None
    locations: dict[str, Location] = field(default_factory=dict)
    min_recall: float = DEFAULT_MIN_RECALL
    seed_tokens: int = DEFAULT_SEED_TOKENS
    UNCOMPARED = ("locations",)

    def constants(self) -> dict[str, Any]:
        """The names rules read whose value this profile alone fixes (clm_policy.policy.prune;
        the thresholds may depend on the window, and are not among them)."""
        return {
            "profile.name": self.name,
            "profile.min_steps_between_compacts": self.min_steps_between_compacts,
            "profile.prefer_handoff_on_phase": self.prefer_handoff_on_phase,
            "profile.retain_recent_messages": self.retain_recent_messages,
            "profile.context_window": self.context_window,
        }


class Rule(Record):
    """A rule: when ``when`` holds (the first that does), propose ``action``; ``location`` is
    its entry in its file."""

    id: str
    when: CompiledExpression
    action: Action
    because: Template | None
    description: str | None = None
    location: Location | None = None
    UNCOMPARED = ("location",)


class Guard(Record):
    """A guard of ``action``: a ``block`` or ``warn`` (``severity``) when ``when`` holds;
    ``location`` is its entry in its file."""

    id: str
    action: Action
    when: CompiledExpression
    severity: str
    overridable: bool
    message: Template | None
    description: str | None = None
    location: Location | None = None
    UNCOMPARED = ("location",)


class Signal(Record):
    """A declared signal: its type and the value rules read when a state gives none."""

    type: str
    default: bool | int | float | str
    description: str | None = None


class Price(Record):
    """What a model's tokens cost, per million input and output tokens (``prices:``)."""

    input: float
    output: float


def longest_prefix(names: Iterable[str], model: str | None) -> str | None:
    """The longest of ``names`` that ``model`` starts with (None: none, or no model)."""
    return max((m for m in names if model.startswith(m)), key=len, default=None) if model else None


class _Memo:
    """A slot for what an object works out on first use (a record's slots are its fields)."""

    __slots__ = ("_cache",)
    _cache: dict[Any, Any]


class Policy(Record, _Memo):
    """A loaded, checked and compiled policy. Build it with :func:`clm_policy.load_policy`.

    ``confirm`` lists the actions a person confirms before they happen; ``prices`` what a
    model's tokens cost (by model name, for the metrics of ``clm-policy report``)."""

    name: str
    path: str
    digest: str
    files: tuple[str, ...]
    profiles: dict[str, Profile]
    default_profile: str
    signals: dict[str, Signal]
    models: dict[str, int]
    rules: tuple[Rule, ...]
    otherwise: Action
    guards: dict[Action, tuple[Guard, ...]]
    description: str | None = None
    source_paths: tuple[str, ...] = ()
    confirm: frozenset[Action] = frozenset()
    prices: dict[str, Price] = field(default_factory=dict)
    HASHABLE = False

    def _memo(self) -> dict[Any, Any]:
        """What decisions work out once per policy (a copy made with ``replace`` starts
        afresh, as its profiles may differ)."""
        try:
            return self._cache
        except AttributeError:
            self._cache = {}
            return self._cache

    @property
    def provenance(self) -> str:
        """The policy as a commit it decided names it (the ``Clm-Policy`` trailer):
        ``path@digest``, the file and the hash of its content."""
        return f"{self.path}@{self.digest}"

    # -- the public verbs -------------------------------------------------------------

    def decide(
        self, state: StateLike, profile: str | None = None, *, force: bool = False
    ) -> Decision:
        """What to do now for ``state`` under ``profile`` (see the module docstring)."""
        prof = self.profile(profile or state.profile)
        names, window, source = self.namespace(state, prof)
        rule = next((r for r in self._live(prof) if r.when.evaluate(names)), None)
        return self._finish(rule, names, prof, window, source, force)

    def _live(self, prof: Profile) -> tuple[Rule, ...]:
        """The rules that can fire under ``prof`` (clm_policy.policy.prune), worked out once."""
        cache = self._memo()
        key = ("live", prof.name)
        live = cache.get(key)
        if live is None or live[0] is not prof:
            from clm_policy.policy.prune import cannot_fire

            fixed = prof.constants()
            kept = tuple(r for r in self.rules if not cannot_fire(r.when.tree, fixed))
            live = cache[key] = (prof, kept)
        rules: tuple[Rule, ...] = live[1]
        return rules

    def explain(
        self, state: StateLike, profile: str | None = None, *, force: bool = False
    ) -> Explanation:
        """The decision, with every rule and guard, the values they read and their result.

        The decision is exactly :meth:`decide`'s. Rules after the deciding one and guards of
        other actions are evaluated too, for the record; if one of those fails on this state
        (which :meth:`decide` never evaluates), its trace carries the error instead of failing.
        """
        from clm_policy.models.decision import Explanation, GuardTrace, RuleTrace

        prof = self.profile(profile or state.profile)
        names, window, source = self.namespace(state, prof)
        rule = next((r for r in self.rules if r.when.evaluate(names)), None)
        decision = self._finish(rule, names, prof, window, source, force)
        rule_traces = [
            RuleTrace(id=r.id, action=r.action, decided=r is rule, **self._trace(r.when, names))
            for r in self.rules
        ]
        findings = {
            f.guard: (kind, f.message)
            for kind, found in (
                ("blocked", decision.blocked_by),
                ("warned", decision.warnings),
                ("overridden", decision.overridden),
            )
            for f in found
        }
        guard_traces = []
        for action, guards in self.guards.items():
            for g in guards:
                applies = action == decision.proposed
                outcome, message = findings.get(g.id, ("passed", None))
                guard_traces.append(
                    GuardTrace(
                        id=g.id,
                        guards=action,
                        severity=g.severity,
                        overridable=g.overridable,
                        outcome=outcome if applies else "not-applicable",
                        message=message if applies else None,
                        **self._trace(g.when, names),
                    )
                )
        return Explanation(
            decision=decision, rules=rule_traces, otherwise=self.otherwise, guards=guard_traces
        )

    # -- helpers ------------------------------------------------------------------------

    def _trace(self, expr: CompiledExpression, names: Mapping[str, Any]) -> dict[str, Any]:
        try:
            result: bool | None = bool(expr.evaluate(names))
            error = None
        except EvaluationError as exc:
            result, error = None, exc.message
        return {
            "expression": expr.text,
            "location": str(expr.location),
            "names": {n: names[n] for n in expr.names},
            "result": result,
            "error": error,
        }

    def profile(self, name: str | None) -> Profile:
        chosen = name or self.default_profile
        try:
            return self.profiles[chosen]
        except KeyError:
            known = ", ".join(self.profiles)
            raise StateError(
                f"unknown profile {quote(chosen)}{suggest(chosen, self.profiles)} "
                f"(policy {self.name} has: {known})"
            ) from None

    def window_for(self, state: StateLike, prof: Profile) -> tuple[int | None, str | None]:
        """The context window and where it came from: state, model table, profile, or none."""
        tokens = state.tokens
        if tokens.context_window is not None:
            return tokens.context_window, "state"
        best = longest_prefix(self.models, tokens.model)
        if best is not None:
            return self.models[best], f"model {best}"
        if prof.context_window is not None:
            return prof.context_window, f"profile {prof.name}"
        return None, None

    def namespace(
        self, state: StateLike, prof: Profile
    ) -> tuple[dict[str, Any], int | None, str | None]:
        """The plain values every expression of this policy may read, for ``state``."""
        window, source = self.window_for(state, prof)
        soft = prof.soft_compact.resolve(window)
        hard = prof.hard_handoff.resolve(window)
        if soft is None or hard is None:
            which = "soft_compact" if soft is None else "hard_handoff"
            raise StateError(
                f"profile '{prof.name}' gives {which} as a share of the context window, but "
                f"no window is known: {NO_WINDOW}"
            )
        tokens = state.tokens
        last = state.last_compact_step
        names = direct_values(state)  # the names declared with the state's fields
        names.update(
            {
                "tokens.window": window,
                "tokens.ratio": tokens.context_tokens / window if window else None,
                "steps_since_compact": state.step_index - (last if last is not None else 0),
                "compacted_before": last is not None,
                "message_count": len(state.messages),
                "blocker_count": len(state.blockers),
            }
        )
        names.update(self._fixed(prof, soft, hard))
        if state.signals:
            self._apply_signals(state.signals, names)
        return names, window, source

    def _fixed(self, prof: Profile, soft: int, hard: int) -> dict[str, Any]:
        """The names a profile and its thresholds fix, and the signals' defaults (made once
        per profile and thresholds)."""
        cache = self._memo()
        key = ("fixed", prof.name, soft, hard)
        found = cache.get(key)
        if found is None or found[0] is not prof:
            values = prof.constants()
            values["profile.soft_compact"] = soft
            values["profile.hard_handoff"] = hard
            for sname, signal in self.signals.items():
                values[f"signals.{sname}"] = signal.default
            if len(cache) > 256:  # thresholds as shares of many windows: keep it small
                cache.clear()
            found = cache[key] = (prof, values)
        fixed: dict[str, Any] = found[1]
        return fixed

    def _apply_signals(self, given: Mapping[str, Any], names: dict[str, Any]) -> None:
        for sname, value in given.items():
            signal = self.signals.get(sname)
            if signal is None:
                declared = ", ".join(self.signals) or "none"
                raise StateError(
                    f"signal {quote(sname)} is not declared by policy {self.name}"
                    f"{suggest(sname, self.signals)} (declared: {declared})",
                    path=("signals", sname),
                )
            if not signal_value_fits(signal.type, value):
                from clm_policy.formats.textio import with_article

                raise StateError(
                    f"signal '{sname}' must be {with_article(signal.type)}, got {quote(value)}",
                    path=("signals", sname),
                )
            names[f"signals.{sname}"] = value

    def _finish(
        self,
        rule: Rule | None,
        names: dict[str, Any],
        prof: Profile,
        window: int | None,
        source: str | None,
        force: bool,
    ) -> Decision:
        proposed = rule.action if rule is not None else self.otherwise
        blocked: list[GuardFinding] = []
        warned: list[GuardFinding] = []
        overridden: list[GuardFinding] = []
        for guard in self.guards.get(proposed, ()):
            if not guard.when.evaluate(names):
                continue
            text = guard.message.render(names) if guard.message is not None else guard.when.text
            finding = GuardFinding(guard=guard.id, severity=guard.severity, message=text)
            if guard.severity == "warn":
                warned.append(finding)
            elif force and guard.overridable:
                overridden.append(finding)
            else:
                blocked.append(finding)
        if rule is None:
            reason = f"no rule held; otherwise {proposed.value}"
        elif rule.because is not None:
            reason = rule.because.render(names)
        else:
            reason = rule.when.text
        # several guards' messages are each capped, and the whole rationale is too
        if blocked:
            why = "; ".join(f"{f.guard}: {f.message}" for f in blocked)
            rationale = fitted(
                f"{proposed.value} blocked by ", why, f" (proposed because {reason})"
            )
        elif overridden:
            past = "; ".join(f"{f.guard}: {f.message}" for f in overridden)
            rationale = fitted(f"{reason} (forced past ", past, ")")
        else:
            rationale = reason
        return Decision(
            action=Action.CONTINUE if blocked else proposed,
            trigger=rule.id if rule is not None else None,
            rationale=rationale,
            proposed=proposed,
            blocked_by=blocked,
            warnings=warned,
            overridden=overridden,
            forced=bool(overridden) and not blocked,
            policy=self.name,
            profile=prof.name,
            context_tokens=names["tokens.context"],
            context_window=window,
            window_source=source,
        )
