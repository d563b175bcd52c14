"""``clm-policy experiment``: the file checked at file:line:col before anything runs, arms
played in their own memory repositories, the same figures for the same seed, and the memory
backends telling apart what a planted fact needs (a small policy and scenarios, so it runs in
seconds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clm_policy.base.errors import InputError
from clm_policy.experiment.load import load_experiment
from clm_policy.experiment.runner import run_experiment
from clm_policy.experiment.stats import METRICS, figures
from clm_policy.memory.mem0store import available

from conftest import MEM0_MISSING, NEEDS_MEM0, git

POLICY = """\
version: 1
name: small
extends: default
prices: {default: {input: 3, output: 15}}
profiles:
  coding: {soft_compact: 3000, hard_handoff: 6000}
"""

# a constraint said once, early; compacted away; a handoff at the phase boundary; needed after
PLANTED = """\
version: 1
name: planted
goal: Add partial refunds to the payments service
profile: coding
steps:
  - user: The payments sandbox rejects refunds above 500 EUR, keep fixtures below that.
    say: Understood.
    tokens: 300
  - {say: "Implementing partial refunds (part {n}).", tokens: 500, repeat: 8}
  - {say: Server side done., tokens: 200, status: phase_boundary}
  - {say: "Writing fixtures (part {n}).", tokens: 300, repeat: 2}
  - say: Fixtures stay within the sandbox limit.
    needs: [the payments sandbox rejects refunds above 500 EUR]
    tokens: 200
  - {say: Done., tokens: 100, status: completed}
"""

PLAIN = """\
version: 1
name: plain
goal: Tidy the changelog
steps:
  - {say: "Editing (part {n}).", tokens: 400, repeat: 4}
"""


def experiment(tmp_path: Path, arms: str, extra: str = "") -> Path:
    (tmp_path / "small.yaml").write_text(POLICY)
    (tmp_path / "sc").mkdir(exist_ok=True)
    (tmp_path / "sc" / "planted.yaml").write_text(PLANTED)
    (tmp_path / "sc" / "plain.yaml").write_text(PLAIN)
    path = tmp_path / "exp.yaml"
    path.write_text(
        "version: 1\nname: small\nseed: 3\nbootstrap: 200\nmem0: {model: offline}\n"
        f"{extra}arms:\n{arms}workloads:\n  - scenarios: sc/*.yaml\n"
    )
    return path


FILE_ARM = "  - {name: file, policy: small.yaml}\n"
HYBRID_ARM = "  - {name: hybrid, policy: small.yaml, memory: hybrid}\n"


@pytest.mark.parametrize(
    ("arms", "extra", "where", "message"),
    [
        (
            FILE_ARM + "  - {name: file, policy: small.yaml}\n",
            "",
            "8:12",
            "arm 'file' is named twice (first as arms[0])",
        ),
        (
            FILE_ARM,
            "baseline: fiel\n",
            "6:11",
            "baseline 'fiel' is no arm; did you mean 'file'? (arms: file)",
        ),
        (
            "  - {name: file, policy: small.yaml, profile: codin}\n",
            "",
            "7:47",
            "arm 'file': policy small has no profile 'codin' (profiles: coding, exploration, multi_agent, research, tool_heavy)",
        ),
        (
            "  - {name: file, policy: nosuch.yaml}\n",
            "",
            "7:26",
            "arm 'file': policy: no such file",
        ),
        (
            "  - {name: file, policy: small.yaml, memory: mem1}\n",
            "",
            "7:46",
            "arms[0].memory: expected 'file', 'mem0' or 'hybrid', got string 'mem1'",
        ),
    ],
)
def test_a_bad_file_is_refused_where_it_is_wrong(
    tmp_path: Path, arms: str, extra: str, where: str, message: str
) -> None:
    path = experiment(tmp_path, arms, extra)
    with pytest.raises(InputError) as err:
        load_experiment(path)
    assert str(err.value) == f"{path}:{where}: {message}"


def test_a_workload_names_one_kind_and_matches_something(tmp_path: Path) -> None:
    path = experiment(tmp_path, FILE_ARM)
    path.write_text(path.read_text() + "  - {scenario: demo, scenarios: '*.yaml'}\n")
    with pytest.raises(InputError) as err:
        load_experiment(path)
    assert str(err.value) == (
        f"{path}:10:5: workloads[1]: a workload names exactly one of scenario, "
        "scenarios, recorded, transcript (this one: scenario, scenarios)"
    )
    path.write_text(
        path.read_text().replace(
            "{scenario: demo, scenarios: '*.yaml'}", "{scenarios: 'none/*.yaml'}"
        )
    )
    with pytest.raises(InputError) as err:
        load_experiment(path)
    assert str(err.value) == f"{path}:10:5: workloads[1]: 'none/*.yaml' matches no file"


def test_a_mem0_arm_needs_a_model_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CLM_POLICY_MEM0_BASE_URL", raising=False)
    path = experiment(tmp_path, FILE_ARM + HYBRID_ARM)
    path.write_text(path.read_text().replace("mem0: {model: offline}\n", ""))
    if not available():
        pytest.skip(MEM0_MISSING)
    with pytest.raises(InputError) as err:
        load_experiment(path)
    assert str(err.value).startswith(f"{path}:1:1: the mem0 memory backend needs a model: set ")
    assert str(err.value).endswith("(or `mem0: {model: offline}` in the experiment)")


@NEEDS_MEM0
def test_each_arm_plays_in_its_own_repository_and_memory_tells_them_apart(
    tmp_path: Path,
) -> None:
    exp = load_experiment(experiment(tmp_path, FILE_ARM + HYBRID_ARM))
    assert [w.name for w in exp.workloads] == ["plain", "planted"]
    seen: list[int] = []
    run = run_experiment(exp, tmp_path / "work", advance=lambda: seen.append(1))
    assert len(seen) == 4
    by = {(o.arm, o.workload): o for a in run.arms for o in a.outcomes}
    file, hybrid = by["file", "planted"], by["hybrid", "planted"]
    # the file backend lost the constraint (a person said it again); Mem0 brought it back
    assert (file.outcome, file.needs_missing, file.interventions) == ("completed", 1, 1)
    assert (hybrid.outcome, hybrid.needs_missing, hybrid.interventions) == ("completed", 0, 0)
    assert (file.compactions, file.handoffs, file.sessions) == (1, 1, 2)
    assert file.recall is None  # deterministic summaries, no agent: nothing measured
    assert file.cost is not None
    for arm in ("file", "hybrid"):
        memory = tmp_path / "work" / "arms" / arm / "memory"
        log = git(memory, "log", "--format=%s").splitlines()
        assert "clm(handoff): planted step 10, phase_boundary" in log
    assert (tmp_path / "work" / "arms" / "hybrid" / "mem0" / "qdrant").is_dir()
    figs = figures(run)
    needs = figs.by_metric["needs_found"]
    assert (needs["file"].value, needs["hybrid"].value, needs["hybrid"].diff) == (0.0, 1.0, 1.0)
    assert needs["file"].counted == 1  # the plain workload needs nothing: it does not count
    assert figs.by_metric["completion"]["hybrid"].diff == 0.0
    assert set(figs.by_metric) == {m.key for m in METRICS}


def test_the_same_seed_gives_the_same_figures_however_many_jobs(tmp_path: Path) -> None:
    path = experiment(tmp_path, FILE_ARM + "  - {name: other, policy: default}\n")
    first = figures(run_experiment(load_experiment(path), tmp_path / "a"))
    ticks: list[int] = []
    second = figures(
        run_experiment(
            load_experiment(path), tmp_path / "b", jobs=2, advance=lambda: ticks.append(1)
        )
    )
    assert first == second
    assert (tmp_path / "b" / "arms" / "other" / "memory" / ".git").is_dir()
    tokens = first.by_metric["tokens_per_success"]["other"]
    assert tokens.diff is not None
    assert tokens.diff_interval is not None
    assert tokens.diff_interval.low <= tokens.diff <= tokens.diff_interval.high
    with pytest.raises(InputError, match="not empty") as refused:
        run_experiment(load_experiment(path), tmp_path / "a")
    assert refused.value.message.endswith(  # what to do, after an interrupted run too
        "remove what an earlier or interrupted run left there, or give another --workdir)"
    )


def test_recorded_runs_and_transcripts_are_workloads(tmp_path: Path) -> None:
    """A repository's `run` sessions give their scenarios (a chained session is part of its
    first); a transcript is played as the trace of its requests' token figures."""
    from conftest import FIXTURES, invoke

    path = experiment(tmp_path, FILE_ARM)
    ran = invoke(
        "run",
        "--memory",
        str(tmp_path / "recorded"),
        "--scenario",
        str(tmp_path / "sc" / "planted.yaml"),
        "--policy",
        str(tmp_path / "small.yaml"),
        "--continue-after-handoff",
    )
    assert ran.exit_code == 0, ran.stderr  # sessions sim and sim-2: one task
    transcripts = FIXTURES / "transcripts"
    path.write_text(
        path.read_text().replace(
            "  - scenarios: sc/*.yaml\n",
            f"  - recorded: recorded\n  - transcript: '{transcripts}/c*_session.jsonl'\n"
            f"  - transcript: '{transcripts}/codex_rollout.jsonl'\n",
        )
    )
    exp = load_experiment(path)
    assert [(w.name, w.kind) for w in exp.workloads] == [
        ("sim", "recorded"),
        ("claude_session", "transcript"),
        ("codex_rollout", "transcript"),
    ]
    trace = exp.workloads[2].spec
    assert [s.tokens for s in trace.steps] == [9300, 1720, 890, 79540]  # the context's growth
    assert (trace.goal, trace.model, trace.context_window) == (
        "Make the ledger export skip zero-amount rows and run the tests.",
        "gpt-5-codex",
        258400,
    )
    run = run_experiment(exp, tmp_path / "work")
    outcomes = {o.workload: o for o in run.arms[0].outcomes}
    assert outcomes["codex_rollout"].outcome == "completed"
    assert outcomes["codex_rollout"].steps == 5  # four requests, then the script ends
    assert (outcomes["sim"].needs_asked, outcomes["sim"].sessions) == (1, 2)


def test_the_simulated_agents_own_handoff_is_no_arms_recall(tmp_path: Path) -> None:
    """The demo's agent writes its handoff from every fact it has, so what its words hold of
    the record (Clm-Recall-Agent) is 100% by construction: it made every arm read "recall
    100%". An arm's recall is a summary's (Clm-Recall) alone; here none is measured."""
    path = tmp_path / "exp.yaml"
    path.write_text(
        "version: 1\nname: demo\nbootstrap: 100\narms:\n  - {name: file, policy: default}\n"
        "workloads:\n  - scenario: demo\n"
    )
    run = run_experiment(load_experiment(path), tmp_path / "work")
    (outcome,) = [o for a in run.arms for o in a.outcomes]
    assert outcome.handoffs == 1
    memory = tmp_path / "work" / "arms" / "file" / "memory"
    assert "Clm-Recall-Agent: 1.00" in git(memory, "log", "--format=%(trailers:only,unfold)")
    assert outcome.recall is None
    assert figures(run).by_metric["recall"]["file"].value is None


def test_a_problem_inside_an_arms_policy_is_reported_where_it_is_in_that_file(
    tmp_path: Path,
) -> None:
    """The policy's own file:line:col, not the experiment's line naming the policy."""
    path = experiment(tmp_path, "  - {name: file, policy: broken.yaml}\n")
    broken = tmp_path / "broken.yaml"
    broken.write_text(
        "version: 1\nextends: default\nrules:\n  - {id: x, when: tokens.contxt > 1, action: compact}\n"
    )
    with pytest.raises(InputError) as err:
        load_experiment(path)
    assert str(err.value) == (
        f"{broken}:4:19: unknown name 'tokens.contxt'; did you mean 'tokens.context'?"
    )
