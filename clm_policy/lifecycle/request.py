"""The one request for a handoff, in every form it takes: the Stop hook's request, the prompt
hook's, the MCP ``handoff`` tool's fields and description, and the focus given ``/compact``.

The agent is asked for the judgement half of a handoff (what a transcript cannot say);
clm-policy adds the exact half from the record. :data:`SECTIONS` is the one list everything
here is made from, and :mod:`clm_policy.transcripts.notes` reads each heading back into its
field (a test holds every heading to the field it names).
"""

from __future__ import annotations

from clm_policy.base.record import Record


class Section(Record):
    """One part of the handoff the agent is asked for; ``keep``: a ``/compact`` focus's words."""

    heading: str
    asks: str
    field: str
    is_list: bool
    keep: str


SECTIONS: tuple[Section, ...] = (
    Section(
        "Goal",
        "the user's task in their terms, the standing instructions, and what the user "
        "approved or ruled out",
        "goal",
        False,
        "the user's task, standing instructions, what was approved or ruled out",
    ),
    Section(
        "Tasks",
        "each task with its status: done, in progress or not started",
        "tasks",
        True,
        "each task's status",
    ),
    Section(
        "Decisions",
        "what was decided and what was tried and rejected, with why",
        "decisions",
        True,
        "decisions and what was rejected",
    ),
    Section(
        "Verification",
        "each check you ran (the exact command) and its latest result; what is not verified",
        "verification",
        True,
        "the checks' exact commands and latest results",
    ),
    Section(
        "Open questions and blockers",
        "what waits on the user or blocks progress, or 'none'",
        "blockers",
        True,
        "open questions, blockers",
    ),
    Section(
        "Environment",
        "running or stopped processes, the branch, remotes, pushes owed, uncommitted work "
        "that must or must not go into the next commit",
        "environment",
        True,
        "running processes, branch, remotes, uncommitted work",
    ),
    Section(
        "Next step",
        "the one next action, concrete enough to do without asking; then the remaining plan",
        "next_step",
        False,
        "the next step and the plan after it",
    ),
)
"""The handoff's parts, in the order the agent writes them."""

PLAN_FIELD = "plan"
"""The MCP field for the steps after the next one (under "Next step" in a reply)."""


def handoff_request() -> str:
    """The Stop hook's and the prompt hook's request."""
    return (
        f"Finish the step you are on, start no new work, and end your reply with {what_to_write()}"
    )


def what_to_write() -> str:
    """The handoff asked for, heading by heading (a model writing it is given this too)."""
    headings = ", ".join(f"`## {s.heading}`" for s in SECTIONS)
    holds = "; ".join(f"{s.heading}: {s.asks}" for s in SECTIONS)
    return (
        "a handoff for the next session, which sees nothing of this conversation but what you "
        "write and what clm-policy records (the user's messages, files, commands and their "
        "results, git state). Write it under these Markdown headings, in this order: "
        f"{headings} — {holds}. Be specific: file paths, exact commands and results, names; say "
        "'unknown' rather than guess."
    )


def stop_request(rationale: str, fill: str) -> str:
    return (
        f"clm-policy: the context is {fill} full and the policy hands off ({rationale}). "
        f"{handoff_request()} Then stop."
    )


def tool_description() -> str:
    fields = (
        "; ".join(f"{s.field}: {s.asks}" for s in SECTIONS)
        + f"; {PLAN_FIELD}: the steps after the next one, in order; notes: anything else"
    )
    return (
        "Hand this session off to a fresh one: commit your handoff (with what clm-policy "
        "records from the transcript: the user's messages, files, commands and their latest "
        "results, git state) to the project's memory; the next session starts from it. Call it "
        "when clm-policy says the policy hands off, or when the user asks. The fields, each "
        f"kept word for word: {fields}."
    )


def compact_focus(next_step: str) -> str:
    """The focus given to ``/compact``: what a summary must keep, then ``next_step``."""
    keep = ", ".join(s.keep for s in SECTIONS if s.field != "next_step")
    return f"Keep {keep}. {next_step}"
