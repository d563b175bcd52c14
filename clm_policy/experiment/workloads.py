"""The workloads of an experiment, each a scenario every arm plays the same way.

- ``scenario: NAME|FILE`` — a bundled scenario or a file in ``run``'s format;
- ``scenarios: GLOB`` — every scenario file the glob matches (relative to the experiment);
- ``recorded: DIR`` — a memory repository: the scenario each of its first sessions played
  under ``clm-policy run`` (``run.json``; a chained session ``<id>-2`` is part of its first);
- ``transcript: GLOB`` — Claude Code transcripts or Codex rollouts, each played as a *trace*:
  one step per model request of the main chain, adding the tokens that request added (its
  context's growth; after the agent's own compaction, its output). A trace holds no facts and
  no needs: it compares policies (when and how often they compact or hand off, the tokens
  spent), never memory backends.

Each workload gets a unique name (the scenario's, the file's stem, the session id, made
unique with ``.2``, ``.3``): its session id in every arm's memory repository.
"""

from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass
from pathlib import Path

from clm_policy.base.errors import InputError, quote
from clm_policy.models.experiment import WorkloadSpec
from clm_policy.models.scenario import ScenarioFile

MAX_WORKLOADS = 1000
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


@dataclass(frozen=True)
class Workload:
    name: str
    shown: str
    """Where it comes from: a scenario file, a bundled name, a session, a transcript."""
    kind: str
    spec: ScenarioFile
    profile: str | None
    max_steps: int | None
    continue_after_handoff: bool


def expand(item: WorkloadSpec, folder: Path, taken: set[str]) -> list[Workload]:
    """The workloads ``item`` names (paths relative to ``folder``); ``taken`` holds the names
    given so far and is updated."""
    kind, ref = item.kind, item.ref
    if kind == "scenario":
        found = [_scenario(ref, folder)]
    elif kind == "scenarios":
        found = [_scenario(p, folder) for p in _glob(ref, folder)]
    elif kind == "recorded":
        found = _recorded(ref, folder)
    else:
        found = [_trace(p) for p in _glob(ref, folder)]
    settings = (item.profile, item.max_steps, item.continue_after_handoff)
    out = [
        Workload(_unique(name, taken), shown, kind, spec, *settings) for name, shown, spec in found
    ]
    if len(taken) > MAX_WORKLOADS:
        raise InputError(f"more than {MAX_WORKLOADS} workloads")
    return out


def _unique(name: str, taken: set[str]) -> str:
    base = _UNSAFE.sub("-", name).lstrip(".-_")[:90] or "workload"
    candidate, number = base, 1
    while candidate in taken:
        number += 1
        candidate = f"{base}.{number}"
    taken.add(candidate)
    return candidate


def _glob(pattern: str, folder: Path) -> list[str]:
    full = pattern if Path(pattern).is_absolute() else str(folder / pattern)
    found = sorted(p for p in glob.glob(full, recursive=True) if os.path.isfile(p))
    if not found:
        raise InputError(f"{quote(pattern)} matches no file")
    return found


def _scenario(ref: str, folder: Path) -> tuple[str, str, ScenarioFile]:
    from clm_policy.loop.scenario import load_scenario

    is_file = "/" in ref or ref.endswith((".yaml", ".yml"))
    target = str(folder / ref) if is_file and not Path(ref).is_absolute() else ref
    spec, shown = load_scenario(target)
    name = spec.name or Path(target).stem
    return name, shown, spec


def _recorded(ref: str, folder: Path) -> list[tuple[str, str, ScenarioFile]]:
    from clm_policy.memory.git.write import MemoryRepo
    from clm_policy.memory.layout import is_memory_repo
    from clm_policy.memory.sessions import load_session, session_ids

    where = ref if Path(ref).is_absolute() else str(folder / ref)
    if not is_memory_repo(where):
        raise InputError(f"{quote(ref)} is no memory repository")
    found = []
    with MemoryRepo(where) as repo:
        for sid in session_ids(repo):
            persisted = load_session(repo, sid)
            scenario = persisted.run.get("scenario")
            if persisted.state.parent_session or not isinstance(scenario, str):
                continue  # a chained session, or one `run` did not play from a scenario
            _, shown, spec = _scenario(scenario, folder)
            found.append((sid, f"{shown} (session {sid} of {ref})", spec))
    if not found:
        raise InputError(
            f"{quote(ref)} holds no session played by `clm-policy run` from a scenario"
        )
    return found


def _trace(path: str) -> tuple[str, str, ScenarioFile]:
    """A transcript as a scenario of its token figures (see the module's docstring)."""
    from clm_policy.transcripts.reading import read_transcript

    reading = read_transcript(path)
    turns = reading.turns or []
    if not turns:
        raise InputError(f"{path}: no model request with a usage figure (a trace needs some)")
    steps = []
    last_context = last_output = 0
    for number, (_, context, _, output) in enumerate(turns, start=1):
        grown = context - last_context
        added = grown if grown > 0 else max(0, output - last_output)
        steps.append(
            {
                "say": f"(request {number} of the recorded session)",
                "tokens": min(added, 10**9),
            }
        )
        last_context, last_output = context, output
    spec = ScenarioFile.model_validate(
        {
            "version": 1,
            "name": Path(path).stem,
            "goal": (reading.goal or f"the recorded session {Path(path).name}")[:2000],
            "context_window": reading.context_window,
            "model": reading.model,
            "steps": steps,
        }
    )
    return Path(path).stem, path, spec
