"""The checks' reference in Markdown, built from their docstrings (docs/lint.md embeds it;
a test keeps the two equal). ``python -m clm_policy.lint.reference`` prints it."""

from __future__ import annotations

import textwrap
from types import ModuleType

from clm_policy.lint.checks import CHECKS


def markdown() -> str:
    return "\n\n".join(section(module) for module in CHECKS) + "\n"


def section(module: ModuleType) -> str:
    """One check's reference: its id, level, and its docstring with the examples as YAML."""
    doc = (module.__doc__ or "").strip()
    first, _, rest = doc.partition("\n")
    body = [f"### `{module.ID}`", f"Level: **{module.LEVEL}**. {first}"]
    for block in rest.strip().split("\n\n"):
        if block.strip() in ("Passes::", "Fails::"):
            body.append(block.strip().rstrip(":"))
        elif block.startswith("    "):
            body.append("```yaml\n" + textwrap.dedent(block) + "\n```")
        else:
            body.append(block)
    return "\n\n".join(body)


if __name__ == "__main__":  # pragma: no cover - a maintainer's tool
    from clm_policy.base.termsafe import echo

    echo(markdown(), nl=False)
