"""What clm-policy records of a session for its handoff, beside the files and the user's
messages: each check with its latest result, the agent's task list as it kept it, git and
process state, the files commands made, the agents the session started, and what the session
was last doing. Exact records from tool calls and their outputs — never the agent's judgement
(that is its own words, kept whole beside this).

A **check** is a command that tests, builds, lints or type-checks (``npm.cmd run build`` and
``py -m pytest`` too). Its **latest** run decides: an earlier pass followed by a failure is a
failure (the earlier result is named as replaced); a failure followed by a pass of the same
command, of a broader form of it, or of the same runner's whole suite is closed. A run that
could not start (the program is not installed) says nothing of the project.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from clm_policy.base.commands import command_line
from clm_policy.transcripts.results import (
    FAILED,
    PASSED,
    UNKNOWN,
    covers,
    split_folder,
    whole_suite,
)
from clm_policy.transcripts.work import Run, Work

RUN_TEXT = 160
CHECKS_KEPT = 40
ENVIRONMENT_KEPT = 30


@dataclass(frozen=True, slots=True)
class CheckResult:
    """A check and its latest run: ``status`` passed, failed, unknown or pending; ``result``
    what its output said; ``earlier`` a different earlier result it replaces."""

    command: str
    status: str
    result: str
    earlier: str | None


@dataclass(slots=True)
class SessionRecord:
    """The record of a session (the module's doc)."""

    tasks: list[str]
    checks: list[CheckResult]
    environment: list[str]
    made: list[str]
    subagents: list[str]
    last_activity: str | None
    failures: list[str] = field(default_factory=list)
    said: list[str] = field(default_factory=list)
    read: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    tasks_before_request: bool = False
    """The task list was last updated before the person's latest request, and the session
    worked on after it (:func:`tasks_before_request`)."""

    @property
    def failing(self) -> list[CheckResult]:
        return [c for c in self.checks if c.status == FAILED]


def record_of(work: Work) -> SessionRecord:
    """The record of the session ``work`` describes."""
    marks = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}
    tasks = [
        f"{marks.get(t.status, '[ ]')} {t.text}"
        + (f" — {t.detail}" if t.detail and t.status != "completed" else "")  # what is left
        for t in (work.tasks or [])
    ]
    subagents = []
    for sub in work.subagents:
        edited = work.subagent_files.get(sub.ident) or []
        what = sub.description or sub.kind or sub.ident
        done = f" (edited {', '.join(edited[:5])})" if edited else ""
        subagents.append(f"{what}{done}" + (f" — failed: {sub.failed}" if sub.failed else ""))
    since = work.last_substantive_order()
    # whether the task list is still the agent's list: kept (or the task tools used) after the
    # latest substantive request, or with something not done (a list all done before a new
    # request belongs to the request before it)
    current = any(t.status != "completed" for t in work.tasks or []) or work.tasks_order > since
    return SessionRecord(
        tasks=tasks if current else [],
        tasks_before_request=current and bool(tasks) and tasks_before_request(work),
        checks=latest_checks(work)[-CHECKS_KEPT:],
        environment=[*work.context, *_environment(work.environment)[-ENVIRONMENT_KEPT:]],
        made=list(work.made),
        subagents=subagents,
        last_activity=work.last_activity,
        failures=list(work.failures),
        said=last_said(work),
        read=list(work.read),
        # the agent's last reasoning (Claude Code's thinking, Codex's reasoning summaries)
        # since the latest substantive request: what it was weighing when the session was cut
        reasoning=[text for order, text in work.thoughts if order > since][-REASONING_SHOWN:],
    )


SAID_SHOWN = 6
EARLIER_ANSWERS = 3
REASONING_SHOWN = 6


def last_said(work: Work) -> list[str]:
    """The agent's last messages to the person (its words, not a handoff), oldest first: those
    since the latest substantive request, at most :data:`SAID_SHOWN`; its last two when it said
    nothing since."""
    starts = work.substantive_orders()
    since = starts[-1] if starts else -1
    said = [text for order, text in work.said if order > since][-SAID_SHOWN:]
    # and the agent's answer to each of the requests before (its last words of each turn)
    turns = zip(starts[-1 - EARLIER_ANSWERS : -1], starts[-EARLIER_ANSWERS:], strict=False)
    said_in = [[text for order, text in work.said if start < order < end] for start, end in turns]
    answers = [turn[-1] for turn in said_in if turn]
    if not said and not answers:
        said = [text for _order, text in work.said[-2:]]
    return [*answers, *said]


def tasks_before_request(work: Work) -> bool:
    """Whether the task list predates the person's latest request (``Phase 3`` after the list
    of the spec's steps) while the session went on working after that request: the list may
    be the earlier request's, and the seed says so."""
    # (what the person said when rejecting a call corrects the task: no new request)
    asks = work.substantive_orders(rejections=False)
    latest = asks[-1] if asks else -1
    return 0 <= work.tasks_order < latest and work.active_after(latest)


def _environment(facts: list[str]) -> list[str]:
    """The facts, each once where it was last seen (a second ``pushed: `git push` `` after
    the commits since the first), the newest ``git status`` alone kept of its kind."""
    status = [f for f in facts if "at the last `git status`" in f]
    kept = [f for f in facts if "at the last `git status`" not in f] + status[-1:]
    return list(reversed(dict.fromkeys(reversed(kept))))


def latest_checks(work: Work) -> list[CheckResult]:
    """Each check the session ran, once, in the order first run, with its latest result (the
    module's doc)."""
    latest: dict[str, Run] = {}
    earlier: dict[str, str] = {}
    for run in work.runs:
        if not run.check or run.verdict.status not in (PASSED, FAILED, UNKNOWN):
            continue
        did_not_run = run.verdict.status == UNKNOWN and run.verdict.text.startswith("did not run")
        if did_not_run and run.normal in latest:
            continue  # a run that could not start says nothing of the earlier one
        previous = latest.get(run.normal)
        if previous is not None and previous.verdict.status != run.verdict.status:
            earlier[run.normal] = previous.verdict.line()
        latest[run.normal] = run
    failing = {r.normal for r in open_failures(work)}
    out = []
    for normal, run in latest.items():
        status, result = run.verdict.status, run.verdict.line()
        if status == FAILED and normal not in failing:  # a later broader run passed
            status = PASSED
            result += "; a later run that covers it passed"
        if result.startswith(f"{status} ("):
            result = result.removeprefix(f"{status} (").removesuffix(")")
        command = command_line(run.command, RUN_TEXT)
        out.append(
            CheckResult(command, status, "" if result == status else result, earlier.get(normal))
        )
    return out


def open_failures(work: Work) -> list[Run]:
    """The checks whose last run failed and that no later run passed: the latest failing run
    of each command, unless a later run of it (or of a broader form of it) passed."""
    found: dict[str, Run] = {}
    for run in work.runs:
        if not run.check:
            continue
        if run.verdict.status == FAILED:
            found.pop(run.normal, None)
            found[run.normal] = run
        elif run.verdict.status == PASSED:
            for normal in [n for n, f in found.items() if _closes(run, f)]:
                del found[normal]
    return list(found.values())


def _closes(passing: Run, failing: Run) -> bool:
    """Whether a later passing run vouches for a failing one: the same command or a broader
    form of it, or the whole suite of the same test runner (``go test ./...`` after ``go test
    -run TestX``)."""
    if covers(passing.normal, failing.normal):
        return True
    if split_folder(passing.normal)[0] != split_folder(failing.normal)[0]:
        return False  # another folder's suite (``npm run build (in apps/site)``)
    ran, failed = passing.verdict.summary, failing.verdict.summary
    same = ran is not None and failed is not None and ran.runner == failed.runner
    return same and whole_suite(passing.command)


def verified_runs(work: Work) -> list[Run]:
    """The checks whose latest run passed and that no later failing run calls into doubt (a
    later failure of the same command or a narrower form of it: ``pytest -q tests/x.py``
    failing after ``pytest -q`` passed; a broader run failing says nothing of a narrower
    one's tests)."""
    latest: dict[str, Run] = {}
    for run in work.runs:
        if not run.check or run.verdict.status not in (PASSED, FAILED):
            continue
        if run.verdict.status == FAILED:  # the same check or a narrower one fails now
            for normal in [n for n in latest if covers(n, run.normal)]:
                del latest[normal]
        else:  # a broader passing run says what the narrower ones said
            for normal in [n for n, r in latest.items() if _closes(run, r)]:
                del latest[normal]
            latest[run.normal] = run
    return list(latest.values())


def unknown_runs(work: Work) -> list[Run]:
    """The checks whose last run's result is unknown (a pipeline hid its exit code, the output
    has no summary) and that no later run passed."""
    found: dict[str, Run] = {}
    for run in work.runs:
        if not run.check:
            continue
        if run.verdict.status == UNKNOWN:
            found[run.normal] = run
        elif run.verdict.status in (PASSED, FAILED):
            found.pop(run.normal, None)
            if run.verdict.status == PASSED:
                for normal in [n for n in found if covers(run.normal, n)]:
                    del found[normal]
    return list(found.values())
