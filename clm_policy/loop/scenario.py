"""Load scenario files (a path or a bundled name) with every error at file:line:col."""

from __future__ import annotations

from pathlib import Path

from clm_policy.base.errors import InputError, Location, quote
from clm_policy.base.resources import _PACKAGE
from clm_policy.formats.textio import SCENARIO_LIMIT, path_kind
from clm_policy.formats.validate import validate_document
from clm_policy.formats.yamlio import load_yaml
from clm_policy.models.scenario import ScenarioFile

BUNDLED = Path(_PACKAGE) / "scenarios"


def bundled_scenarios() -> list[str]:
    return sorted(p.stem for p in BUNDLED.glob("*.yaml"))


def load_scenario(ref: str | Path) -> tuple[ScenarioFile, str]:
    """The scenario ``ref`` names (a file, or a bundled name such as ``demo``) and its name."""
    text = str(ref)
    path = Path(text)
    shown = text
    if path_kind(path) != "file" and "/" not in text and not text.endswith((".yaml", ".yml")):
        path = BUNDLED / f"{text}.yaml"
        shown = f"<bundled>/scenarios/{text}.yaml"
        if path_kind(path) != "file":
            known = ", ".join(bundled_scenarios())
            if path_kind(text) == "folder":  # (what was typed is there: say what it is)
                raise InputError(
                    f"is a folder, not a scenario file, nor a bundled scenario's name (bundled: "
                    f"{known})",
                    Location(text),
                )
            raise InputError(f"no bundled scenario named {quote(text)} (bundled: {known})")
    doc = load_yaml(path, shown, limit=SCENARIO_LIMIT, what="scenario")
    return validate_document(doc, ScenarioFile, "scenario"), shown


def scenario_digest(spec: ScenarioFile) -> str:
    """What a scenario says, as 16 hex digits (of its validated content, not its bytes: a
    comment or a reformat changes nothing): a resume plays on only the scenario it started
    with."""
    from clm_policy.base.digest import sha256_hex

    return sha256_hex(spec.model_dump_json().encode("utf-8"))[:16]
