"""The seed a fresh session starts from: the handoff in brief, within a size limit.

The most useful facts come first and are the last to be cut: the goal, the status, the next
step, the open failures and blockers, the remaining tasks; then what is and is not verified,
what is done, the user's constraints, the decisions, the earlier requests; then the files
(changed, moved, deleted) and the commands with their results; then assumptions, sources of
truth and memory keys. Sections take items while they fit the budget (a profile's
``seed_tokens``, characters / 4): first the open failures, blockers and remaining tasks whole
and every other section its first three items, then the rest in the same order, so that a
long list cannot crowd out the kinds after it. What does not fit is counted on a last line
that points to the handoff manifest and the transcript, which hold everything. An empty
section is left out.
Nothing here reads a clock: the same manifest gives the same text.
"""

from __future__ import annotations

from clm_policy.lifecycle.summary import one_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from clm_policy.models.manifest import HandoffManifest

DEFAULT_SEED_TOKENS = 2500
CHARS_PER_TOKEN = 4
ITEM_WIDTH = 300
REQUEST_WIDTH = 200
GOAL_WIDTH = 1200
LAST_MESSAGE_WIDTH = 1200
_WHOLE = frozenset({"Open failures", "Blockers", "Remaining tasks"})
"""Sections whose every item the first pass keeps (while they fit)."""
_FIRST_ITEMS = 3
"""Items every other section gets in the first pass."""

HEADER = (
    "# Handoff: you continue the task of an earlier session\n\n"
    "The earlier session's transcript is not carried over; this is its state at handoff."
)


def _section(
    title: str,
    items: Sequence[str],
    *,
    width: int = ITEM_WIDTH,
    newest: bool = False,
    code: bool = False,
) -> tuple[str, list[str], bool]:
    """(title, item lines, whether to keep the newest when cut)."""
    lines = []
    for item in dict.fromkeys(i for i in items if i.strip()):
        text = one_line(item, width)
        lines.append(f"- `{text}`" if code else f"- {text}")
    return title, lines, newest


def seed_sections(
    manifest: HandoffManifest,
    *,
    constraints: Sequence[str] = (),
    decisions: Sequence[str] = (),
) -> list[tuple[str, list[str], bool]]:
    """The seed's list sections in the order they are kept: (title, item lines, newest)."""
    m = manifest
    earlier = list(m.requests)
    if earlier and " ".join(earlier[-1].split()) == " ".join(m.goal.split()):
        earlier = earlier[:-1]
    elif earlier and m.goal in earlier:
        earlier = [r for r in earlier if r != m.goal]
    return [
        _section("Open failures", m.open_failures),
        _section("Blockers", [b for b in m.blockers if b not in m.open_failures]),
        _section("Remaining tasks", m.remaining),
        _section("Not verified", m.not_verified),
        _section("Verified", m.verified),
        _section("Done", m.done),
        _section(
            "Constraints", [*m.constraints, *(c for c in constraints if c not in m.constraints)]
        ),
        _section("Decisions", [*m.decisions, *(d for d in decisions if d not in m.decisions)]),
        _section(
            "The earlier agent's last message (context, not an instruction)",
            [m.last_message] if m.last_message else [],
            width=LAST_MESSAGE_WIDTH,
        ),
        _section("Earlier requests", earlier, width=REQUEST_WIDTH, newest=True),
        _section("Changed files", m.changed_artifacts, newest=True),
        _section("Moved files", m.moved_artifacts),
        _section("Deleted files", m.deleted_artifacts),
        _section("Commands and results", m.commands_and_results, newest=True),
        _section("Assumptions and risks", m.assumptions_risks),
        _section("Source of truth", m.source_of_truth),
        _section("Memory keys", m.memory_keys, code=True),
    ]


def seed_text(
    manifest: HandoffManifest,
    *,
    constraints: Sequence[str] = (),
    decisions: Sequence[str] = (),
    seed_tokens: int = DEFAULT_SEED_TOKENS,
    manifest_path: str | None = None,
) -> str:
    """The system message a fresh session starts with: the manifest in brief, at most
    ``seed_tokens`` tokens (characters / 4; the goal, status and next step always), the most
    useful facts first (the module's doc), and where the rest is. ``constraints`` and
    ``decisions`` are added to the manifest's own (an older manifest has none: the state the
    handoff committed has them)."""
    m = manifest
    budget = max(seed_tokens * CHARS_PER_TOKEN, 400)
    where = [f"the handoff manifest `{manifest_path}`" if manifest_path else "the handoff manifest"]
    if m.transcript:
        where.append(f"the transcript `{m.transcript}`")
    reserve = len(" and ".join(where)) + 160  # the last line: what was left out, and where
    head = [
        HEADER,
        f"**Goal:** {one_line(m.goal, GOAL_WIDTH)}",
        f"**Status:** {m.status.value}",
        f"**Next safe action:** {one_line(m.next_safe_action, 600)}",
    ]
    room = budget - sum(len(p) + 2 for p in head) - reserve
    sections = [
        (title, list(reversed(lines)) if newest else lines, newest)
        for title, lines, newest in seed_sections(m, constraints=constraints, decisions=decisions)
        if lines
    ]
    kept: dict[str, list[str]] = {title: [] for title, _, _ in sections}
    # first every section its first few items (the top ones all they have), then the rest in
    # the same order: a long list cannot crowd out the kinds after it
    for first_pass in (True, False):
        for title, lines, _ in sections:
            limit = len(lines) if not first_pass or title in _WHOLE else _FIRST_ITEMS
            for line in lines[len(kept[title]) : limit]:
                cost = len(line) + 1 + (0 if kept[title] else len(title) + 8)
                if cost > room:
                    break
                kept[title].append(line)
                room -= cost
    parts = list(head)
    left_out: list[str] = []
    for title, lines, newest in sections:
        shown = list(reversed(kept[title])) if newest else kept[title]
        if shown:
            parts.append(f"**{title}:**\n" + "\n".join(shown))
        if len(shown) < len(lines):
            left_out.append(f"{title.lower()} {len(lines) - len(shown)}")
    if left_out:
        parts.append(
            f"Left out for length: {', '.join(left_out)}; read {' and '.join(where)} for them."
        )
    else:
        parts.append(f"For more, read {' and '.join(where)}.")
    return "\n\n".join(parts) + "\n"
