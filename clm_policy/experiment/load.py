"""Load an experiment file: validate it (errors at file:line:col), load every arm's policy and
summarizer, expand every workload into scenarios, check each arm can play each of them — all
before anything runs or is written.

A workload is a scenario (``run``'s format, clm_policy.loop.scenario), a glob of them, the
scenarios a memory repository's ``clm-policy run`` sessions played (``recorded``), or real
transcripts (``transcript``), each played as a *trace*: one step per model request, adding
the tokens the request added (clm_policy.experiment.workloads).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from clm_policy.base.errors import ClmError, InputError, Location, quote
from clm_policy.experiment.workloads import Workload, expand
from clm_policy.lifecycle.compaction import Summarizer, summarizer_name
from clm_policy.memory.mem0settings import Mem0Settings
from clm_policy.models.experiment import ExperimentFile
from clm_policy.policy.engine import Policy

EXPERIMENT_LIMIT = 1024 * 1024
Where = Callable[..., Location]  # where a path into the file is written: at("arms", 0, "name")


@dataclass(frozen=True)
class Arm:
    name: str
    policy: Policy
    policy_shown: str
    profile: str | None
    memory: str
    summarizer: Summarizer
    summarizer_shown: str


@dataclass(frozen=True)
class Experiment:
    path: str
    name: str
    description: str | None
    seed: int
    baseline: str
    bootstrap: int
    confidence: float
    arms: tuple[Arm, ...]
    workloads: tuple[Workload, ...]
    mem0: Mem0Settings | None
    """Mem0's model, when an arm uses the mem0 or hybrid backend."""

    def profile(self, arm: Arm, workload: Workload) -> str:
        """The profile ``arm`` plays ``workload`` under: the first of these that names one."""
        return (
            arm.profile or workload.profile or workload.spec.profile or arm.policy.default_profile
        )


def load_experiment(path: str | Path) -> Experiment:
    """The experiment ``path`` describes, checked (see the module's docstring); Mem0's model
    and the openai summarizer are configured from the environment."""
    from clm_policy.formats.validate import validate_document
    from clm_policy.formats.yamlio import load_yaml

    shown = str(path)
    doc = load_yaml(Path(path), shown, limit=EXPERIMENT_LIMIT, what="experiment")
    spec = validate_document(doc, ExperimentFile, "experiment")
    folder = Path(path).resolve().parent

    def at(*where: str | int) -> Location:
        return doc.location(list(where))

    names: dict[str, int] = {}
    for i, arm in enumerate(spec.arms):
        if arm.name in names:
            raise InputError(
                f"arm {quote(arm.name)} is named twice (first as arms[{names[arm.name]}])",
                at("arms", i, "name"),
            )
        names[arm.name] = i
    baseline = spec.baseline or spec.arms[0].name
    if baseline not in names:
        from clm_policy.base.suggest import suggest

        raise InputError(
            f"baseline {quote(baseline)} is no arm{suggest(baseline, list(names))} "
            f"(arms: {', '.join(names)})",
            at("baseline"),
        )
    arms = tuple(_arm(spec, i, folder, os.environ, at) for i in range(len(spec.arms)))
    workloads: list[Workload] = []
    taken: set[str] = set()
    for i, item in enumerate(spec.workloads):
        try:
            workloads += expand(item, folder, taken)
        except ClmError as exc:  # where in the file it read, when the problem is in that file
            inner = f"{exc.location}: " if getattr(exc, "location", None) is not None else ""
            raise InputError(f"workloads[{i}]: {inner}{exc.message}", at("workloads", i)) from None
    experiment = Experiment(
        shown,
        spec.name,
        spec.description,
        spec.seed,
        baseline,
        spec.bootstrap,
        spec.confidence,
        arms,
        tuple(workloads),
        _mem0(spec, os.environ, at) if any(a.memory != "file" for a in arms) else None,
    )
    for i, chosen in enumerate(arms):
        for w in experiment.workloads:
            name = experiment.profile(chosen, w)
            if name not in chosen.policy.profiles:
                known = ", ".join(sorted(chosen.policy.profiles))
                raise InputError(
                    f"arm {quote(chosen.name)}: policy {chosen.policy.name} has no profile "
                    f"{quote(name)} (for workload {w.name}; profiles: {known})",
                    at("arms", i),
                )
    return experiment


def _arm(spec: ExperimentFile, i: int, folder: Path, env: Mapping[str, str], where: Where) -> Arm:
    from clm_policy.lifecycle.summarizers import summarizer_from_env
    from clm_policy.policy.cache import load_policy_cached

    arm = spec.arms[i]
    ref = arm.policy
    if "/" in ref or ref.endswith((".yaml", ".yml")):
        ref = str((folder / ref).resolve()) if not Path(ref).is_absolute() else ref
    try:
        policy = load_policy_cached(ref)
    except ClmError as exc:
        if exc.location is not None and exc.location.line > 0:
            raise  # a problem inside the policy file (or a parent): its own file:line:col
        raise InputError(
            f"arm {quote(arm.name)}: policy: {exc.message}", where("arms", i, "policy")
        ) from None
    if arm.profile is not None and arm.profile not in policy.profiles:
        raise InputError(
            f"arm {quote(arm.name)}: policy {policy.name} has no profile {quote(arm.profile)} "
            f"(profiles: {', '.join(sorted(policy.profiles))})",
            where("arms", i, "profile"),
        )
    try:
        summarizer = summarizer_from_env(env, arm.summarizer)
    except ClmError as exc:
        raise InputError(
            f"arm {quote(arm.name)}: summarizer: {exc.message}", where("arms", i, "summarizer")
        ) from None
    shown = summarizer_name(summarizer)
    return Arm(arm.name, policy, arm.policy, arm.profile, arm.memory, summarizer, shown)


def _mem0(spec: ExperimentFile, env: Mapping[str, str], where: Where) -> Mem0Settings:
    from clm_policy.memory.mem0store import available

    if not available():
        raise InputError(
            "an arm uses Mem0 (memory: mem0 or hybrid): pip install 'clm-policy[mem0]'",
            where("arms"),
        )
    if spec.mem0.model == "offline":
        settings = Mem0Settings.offline_model()
    else:
        try:
            settings = Mem0Settings.from_env(env)
        except ClmError as exc:
            raise InputError(
                f"{exc.message} (or `mem0: {{model: offline}}` in the experiment)", where("mem0")
            ) from None
    if spec.mem0.timeout is not None:
        settings = replace(settings, timeout=spec.mem0.timeout)
    return settings
