"""The JSON schemas shipped in schemas/, generated from the pydantic models.

The models are the one declaration of each format; ``python -m clm_policy.models.schemas`` rewrites
schemas/ from them and a test fails when the two differ.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from pydantic import BaseModel

from clm_policy.models.experiment import ExperimentFile
from clm_policy.models.policy import PolicyFile
from clm_policy.models.policytest import PolicyTestFile
from clm_policy.models.scenario import ScenarioFile
from clm_policy.models.shapes.manifest import HandoffManifest
from clm_policy.models.shapes.state import SessionState

DRAFT = "https://json-schema.org/draft/2020-12/schema"
BASE_ID = "urn:clm-policy:schema"

MODELS: dict[str, tuple[type[BaseModel], str]] = {
    "policy": (PolicyFile, "clm-policy policy file (version 1)"),
    "session-state": (SessionState, "clm-policy SessionState: the input of a decision"),
    "scenario": (ScenarioFile, "clm-policy simulated-agent scenario (version 1)"),
    "policy-test": (PolicyTestFile, "clm-policy policy test file (version 1)"),
    "handoff-manifest": (
        HandoffManifest,
        "clm-policy handoff manifest: what a fresh session takes over",
    ),
    "experiment": (ExperimentFile, "clm-policy experiment file (version 1)"),
}


def render(name: str) -> str:
    model, title = MODELS[name]
    schema = {"$schema": DRAFT, "$id": f"{BASE_ID}:{name}", **model.model_json_schema()}
    schema["title"] = title
    return json.dumps(schema, indent=2) + "\n"


if __name__ == "__main__":  # pragma: no cover - a maintainer's tool
    target = (
        Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "schemas"
    )
    from clm_policy.base.termsafe import echo

    for name in MODELS:
        path = target / f"{name}.schema.json"
        path.write_text(render(name), encoding="utf-8")
        echo(str(path))
