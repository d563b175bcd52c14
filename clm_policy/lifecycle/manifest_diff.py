"""What changed between two handoff manifests, as Markdown list lines for people.

Every field but the timestamp (which always differs) is compared, in the order of the
manifest's rendering for people (:func:`clm_policy.lifecycle.handoff.render_manifest_markdown`)
and under its headings: free text as ``was`` / ``now``, list items added and removed, the
token snapshot's figures old → new. Used by a handoff's pull-request body
(:mod:`clm_policy.lifecycle.prbody`): the texts and values pass the Markdown-safe printer
(:mod:`clm_policy.formats.markdown`), as the manifest's own rendering does.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from clm_policy.formats import markdown as md
from clm_policy.lifecycle.handoff import SHOWN
from clm_policy.lifecycle.summary import one_line
from clm_policy.models.manifest import HandoffManifest

ITEM_WIDTH = 200
"""Characters of one list item or text a change line shows."""
TITLES = {
    field: title.removesuffix(" (word for word)")
    for field, title, *_ in SHOWN
    if field != "timestamp"
}
"""The manifest's fields in the order of its rendering for people, each with that rendering's
heading; ``timestamp`` is left out of the comparison (it always differs)."""
OPTIONAL = frozenset(HandoffManifest.FIELDS) - frozenset(HandoffManifest.REQUIRED)
"""The handoff's additions to the seed plan's fields: compared, but not listed as unchanged
while both manifests leave them empty (a manifest from before them has none)."""
_INLINE = ("status",)
"""Text fields short enough to show as ``old`` → ``new`` on one line."""


def diff_manifests(old: HandoffManifest, new: HandoffManifest) -> tuple[list[str], list[str]]:
    """What changed from ``old`` to ``new``: Markdown list lines, and the headings of the
    fields that did not change (in the rendering's order; the timestamp is not compared)."""
    before, after = old.as_dict(), new.as_dict()
    changes: list[str] = []
    same: list[str] = []
    for field, heading in TITLES.items():
        if field in OPTIONAL and _empty(before[field]) and _empty(after[field]):
            continue
        found = _field_changes(f"**{heading}**", before[field], after[field], field)
        changes += found
        if not found:
            same.append(heading)
    return changes, same


def _field_changes(name: str, old: Any, new: Any, field: str) -> list[str]:
    if old == new:
        return []
    if isinstance(old, list) and isinstance(new, list):
        return _list_changes(name, old, new)
    if field == "agent_words":  # the words whole: was / now, never a JSON object
        return _field_changes(name, _words(old), _words(new), "text")
    if isinstance(old, dict) and isinstance(new, dict):
        lines: list[str] = []
        for key in dict.fromkeys([*new, *old]):
            a, b = old.get(key), new.get(key)
            if a == b:
                continue
            if isinstance(a, list) and isinstance(b, list):  # the record's lists
                lines += _list_changes(f"{name} {md.code(key)}", a, b)
            else:
                lines.append(f"- {name} {md.code(key)}: {_value(a)} → {_value(b)}")
        return lines
    if isinstance(old, str) and isinstance(new, str) and field not in _INLINE:
        return [f"- {name} changed:", f"  - was: {_text(old)}", f"  - now: {_text(new)}"]
    return [f"- {name}: {_value(old)} → {_value(new)}"]


def _empty(value: Any) -> bool:
    """Nothing in it: none, "", [], or an object whose every value is empty (the record)."""
    return all(_empty(v) for v in value.values()) if isinstance(value, dict) else not value


def _words(value: Any) -> str:
    return str(value.get("text") or "") if isinstance(value, dict) else "(none)"


def _list_changes(name: str, old: Sequence[Any], new: Sequence[Any]) -> list[str]:
    added = [x for x in new if x not in old]
    removed = [x for x in old if x not in new]
    lines = [f"- {name} added: {_text(x)}" for x in added]
    lines += [f"- {name} removed: {_text(x)}" for x in removed]
    return lines or [f"- {name}: the same items, in another order"]


def _text(value: Any) -> str:
    return md.inline(one_line(str(value), ITEM_WIDTH))


def _value(value: Any) -> str:
    if value is None:
        return "(none)"
    shown = value if isinstance(value, str) else json.dumps(value)
    return md.code(one_line(shown, ITEM_WIDTH))
