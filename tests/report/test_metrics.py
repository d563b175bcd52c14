"""The CLM plan's metrics (docs/metrics.md) over real memory repositories, the ``prices:``
table of a policy, and how recorded recall is read."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from clm_policy.memory.history import Recall, recall_of
from clm_policy.policy.compile import load_policy
from clm_policy.policy.engine import Price
from clm_policy.report.metrics import build_report, cost, price_for

from conftest import git, invoke, message_of

Write = Callable[[str, str], Path]

PRICED = """
version: 1
extends: default
prices:
  default: {input: 3, output: 15}
  claude-sonnet: {input: 2.5, output: 10}
"""


def run(memory: Path, *args: str) -> None:
    # the demo's first session alone (it hands off; --continue-after-handoff goes on)
    result = invoke("run", "--memory", str(memory), "--format", "json", "--stop-at-handoff", *args)
    assert result.exit_code == 0, message_of(result.stderr)


def records(repo: Path, session: str, name: str) -> list[dict[str, object]]:
    text = git(repo, "show", f"HEAD:sessions/{session}/{name}.jsonl")
    return [json.loads(line) for line in text.splitlines()]


def last_total(repo: Path, session: str) -> tuple[int, int]:
    last = records(repo, session, "metrics")[-1]
    return int(str(last["input_tokens"])), int(str(last["output_tokens"]))


def empty_commit(repo: Path, message: str) -> None:
    git(repo, "commit", "-q", "--allow-empty", "-m", message)


# -- prices in a policy -------------------------------------------------------------------------


def test_prices_merge_by_model_through_extends(write: Write) -> None:
    write("parent.yaml", PRICED)
    child = write(
        "child.yaml",
        """
        version: 1
        extends: parent.yaml
        prices:
          claude-sonnet: {input: 2, output: 8}
          gpt-5: {input: 1.25, output: 10}
        """,
    )
    assert load_policy(child).prices == {
        "default": Price(3.0, 15.0),
        "claude-sonnet": Price(2.0, 8.0),
        "gpt-5": Price(1.25, 10.0),
    }
    assert load_policy("default").prices == {}


def test_resolve_prints_the_prices_and_decides_the_same(write: Write, tmp_path: Path) -> None:
    policy = write("priced.yaml", PRICED)
    result = invoke("resolve", str(policy))
    assert result.exit_code == 0, message_of(result.stderr)
    assert (
        "prices:\n  default:\n    input: 3.0\n    output: 15.0\n"
        "  claude-sonnet:\n    input: 2.5\n    output: 10.0\n"
    ) in result.stdout
    (tmp_path / "resolved.yaml").write_text(result.stdout)
    assert load_policy(tmp_path / "resolved.yaml").prices == load_policy(policy).prices


@pytest.mark.parametrize(
    ("price", "message"),
    [
        (
            "{input: -1, output: 15}",
            "4:19: prices.claude.input: input should be greater than or equal to 0, got integer -1",
        ),
        ("{input: 3}", "4:11: missing required key 'output' in prices.claude"),
        (
            '{input: "3", output: 1}',
            "4:19: prices.claude.input: expected a number, got string '3'",
        ),
        (
            "{input: 3, output: 1, cached: 0.3}",
            "4:33: unknown key 'cached' (allowed: input, output)",
        ),
    ],
)
def test_a_bad_price_is_refused_at_its_place(write: Write, price: str, message: str) -> None:
    bad = write("bad.yaml", f"version: 1\nextends: default\nprices:\n  claude: {price}\n")
    result = invoke("report", "--memory", "nowhere", "--policy", str(bad))
    assert (result.exit_code, result.stdout) == (2, "")
    assert message_of(result.stderr) == f"{bad}:{message}\n"


def test_the_longest_model_prefix_prices_else_default() -> None:
    prices = {"claude": Price(3, 15), "claude-opus": Price(15, 75), "default": Price(1, 2)}
    assert price_for(prices, "claude-opus-4-1") == Price(15, 75)
    assert price_for(prices, "claude-sonnet-4") == Price(3, 15)
    assert price_for(prices, "gpt-5") == Price(1, 2)
    assert price_for(prices, None) == Price(1, 2)
    assert price_for({"claude": Price(3, 15)}, "gpt-5") is None
    assert cost(Price(3, 15), 2_000_000, 100_000) == pytest.approx(7.5)


# -- metrics of real runs -----------------------------------------------------------------------


def test_a_chained_run_is_one_completed_task(memory: Path, write: Write) -> None:
    run(memory, "--continue-after-handoff")  # demo hands off at a phase boundary to demo-2
    data = build_report(str(memory), load_policy(write("priced.yaml", PRICED)))
    demo, demo2 = data.sessions
    assert (demo.session, demo2.session) == ("demo", "demo-2")
    assert (demo.task, demo2.task, demo2.parent) == ("demo", "demo", "demo")
    assert (demo.status, demo2.status) == ("phase_boundary", "completed")
    assert (demo.compactions, demo.handoffs, demo2.handoffs) == (2, 1, 0)
    assert (demo.steps_until_handoff, demo2.steps_until_handoff) == (43, None)
    # demo-2 starts with demo's cumulative tokens: only what it spent is its own
    spent_demo = last_total(memory, "demo")
    final = last_total(memory, "demo-2")
    spent_demo2 = (final[0] - spent_demo[0], final[1] - spent_demo[1])
    assert (demo.input_tokens, demo.output_tokens) == spent_demo
    assert (demo2.input_tokens, demo2.output_tokens) == spent_demo2
    assert demo.tokens_until_handoff == sum(spent_demo)
    assert demo.cost == pytest.approx((spent_demo[0] * 3 + spent_demo[1] * 15) / 1e6)
    (task,) = data.tasks
    assert (task.task, task.sessions, task.outcome) == ("demo", ["demo", "demo-2"], "completed")
    assert task.tokens == sum(final)
    m = data.summary
    assert (m.sessions, m.tasks, m.completed, m.failed, m.open) == (2, 1, 1, 0, 0)
    assert m.task_completion_rate == 1.0
    assert m.tokens_per_successful_task == sum(final)
    assert (m.human_interventions, m.human_interventions_per_session) == (0, 0.0)
    # the run's summaries are deterministic: nothing measured (a figure of 1.00 by
    # construction would mean nothing); the handoff's words are the agent's, measured against
    # the record: the one recall
    recorded = git(memory, "log", "--all", "--format=%(trailers:key=Clm-Recall,valueonly)")
    assert [line for line in recorded.splitlines() if line.strip()] == []
    agents = git(memory, "log", "--all", "--format=%(trailers:key=Clm-Recall-Agent,valueonly)")
    assert [line for line in agents.splitlines() if line.strip()] == ["1.00 (7/7)"]
    assert (m.recall_mean, m.recall_count) == (1.0, 1)
    assert (m.handoffs_ended, m.steps_until_handoff) == (1, 43.0)
    assert m.cost_total == pytest.approx((final[0] * 3 + final[1] * 15) / 1e6)
    assert m.cost_per_task == m.cost_total
    assert (m.priced_tasks, m.unpriced_sessions, m.unpriced_models) == (1, 0, [])


def test_open_tasks_interventions_recall_and_unpriced_models(memory: Path) -> None:
    run(memory)  # demo: hands off, not continued: an open task
    run(memory, "--scenario", "compaction")  # scenario-b: completed (a signal in its scenario)
    # a signal to the demo, which ended, is refused and counts as no intervention
    assert invoke("signal", "--memory", str(memory), "--session", "demo", "x=1").exit_code == 2
    empty_commit(
        memory,
        "clm(compact): scenario-b step 19, soft_compact\n\nClm-Event: compact\n"
        "Clm-Session: scenario-b\nClm-Step: 19\nClm-Rule: soft_compact\nClm-Recall: 9/12",
    )
    empty_commit(
        memory,
        "clm(compact): scenario-b step 20, manual\n\nClm-Event: compact\n"
        "Clm-Session: scenario-b\nClm-Step: 20\nClm-Rule: manual\nClm-Recall: 100%",
    )
    data = build_report(str(memory), load_policy("default"))
    by = {s.session: s for s in data.sessions}
    assert (by["demo"].human_interventions, by["scenario-b"].human_interventions) == (0, 1)
    assert by["scenario-b"].recalls == [
        (19, "compact", Recall(0.75, 9, 12)),  # written as the other forms a trailer may take
        (20, "compact", Recall(1.0)),
    ]
    m = data.summary
    assert (m.tasks, m.completed, m.open, m.task_completion_rate) == (2, 1, 1, 0.5)
    assert m.human_interventions_per_session == 0.5
    # only the measured ones: the two a model's summary would carry and the demo agent's
    # handoff (the runs' own summaries are deterministic, their check no recall)
    assert (m.recall_mean, m.recall_min, m.recall_count) == (2.75 / 3, 0.75, 3)
    assert (m.cost_total, m.cost_per_task, m.priced_tasks) == (None, None, 0)
    assert (m.unpriced_sessions, m.unpriced_models) == (2, [])


def test_one_session_alone(memory: Path) -> None:
    run(memory, "--continue-after-handoff")
    data = build_report(str(memory), load_policy("default"), session="demo-2")
    (only,) = data.sessions
    # its parent is not in the report: the session is a task of its own
    assert (only.session, only.task, only.parent) == ("demo-2", "demo-2", "demo")
    assert data.summary.tasks == 1


# -- recall as recorded -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("recorded", "expected"),
    [
        ("11/12", Recall(11 / 12, 11, 12)),
        ("11/12 (92%)", Recall(11 / 12, 11, 12)),
        ("92%", Recall(0.92)),
        ("0.5", Recall(0.5)),
        (".75", Recall(0.75)),
        (1, Recall(1.0)),
        (0.25, Recall(0.25)),
        ({"passed": 3, "asked": 4}, Recall(0.75, 3, 4)),
        ({"recall": 0.8, "kinds": {}}, Recall(0.8)),
        ({"score": "4/5"}, Recall(0.8, 4, 5)),
        ("13/12", None),
        ("0/0", None),
        ("150%", None),
        ("1.5", None),
        (-0.1, None),
        (float("nan"), None),
        (True, None),
        ("lots", None),
        ({"passed": 5, "asked": 4}, None),
        (None, None),
        ("9" * 300, None),
    ],
)
def test_recall_is_read_from_what_a_verifier_may_record(
    recorded: object, expected: Recall | None
) -> None:
    assert recall_of(recorded) == expected


def test_recall_reads_as_passed_over_asked() -> None:
    assert str(Recall(11 / 12, 11, 12)) == "11/12 (92%)"
    assert str(Recall(0.5)) == "50%"


# -- reading the history ------------------------------------------------------------------------


def _git_commands(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    import clm_policy.memory.git.run as gitrun

    started: list[str] = []
    real = gitrun.start_git  # where every git process starts

    def counting(cwd: Path, args: list[str], **kwargs: Any) -> Any:
        started.append(next(a for a in args if a not in ("-q",) and "=" not in a))
        return real(cwd, args, **kwargs)

    monkeypatch.setattr(gitrun, "start_git", counting)
    return started


def test_the_history_is_read_in_as_many_git_processes_whatever_the_sessions(
    memory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clm_policy.memory.git.write import MemoryRepo
    from clm_policy.memory.history import load_history

    run(memory, "--continue-after-handoff")  # demo, and demo-2 continued from it
    run(memory, "--scenario", "compaction")  # scenario-b
    with MemoryRepo(memory) as repo:
        started = _git_commands(monkeypatch)
        whole = load_history(repo, "m")
        # HEAD, the session files, the log, their files' texts, the states the continued
        # sessions started from: not a process or two per file (4 files a session)
        assert started == ["rev-parse", "ls-tree", "log", "cat-file", "cat-file"]
        started.clear()
        each = load_history(repo, "m", chunk_bytes=1)  # a process per session
        # and one more for demo-2's start (the sessions not continued from another need none)
        assert started == ["rev-parse", "ls-tree", "log", *["cat-file"] * 4]
    assert [s.id for s in whole.sessions] == ["demo", "demo-2", "scenario-b"]
    assert each == whole
    demo2 = whole.sessions[1]
    (start,) = [e.commit for e in demo2.events if e.kind == "start"]
    started_with = json.loads(git(memory, "show", f"{start}:sessions/demo-2/state.json"))
    assert demo2.start_tokens == started_with["tokens"]  # demo's totals, carried on
    assert demo2.start_tokens["input_tokens"] > 0
    assert [len(s.steps) for s in whole.sessions] == [
        len(records(memory, s, "metrics")) for s in ("demo", "demo-2", "scenario-b")
    ]
