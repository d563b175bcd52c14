"""The checks' reference in Markdown, built from their docstrings (docs/lint.md embeds it;
a test keeps the two equal). ``python -m clm_policy.lint.reference`` prints it."""

from __future__ import annotations

import textwrap

from clm_policy.lint.checks import CHECKS


def markdown() -> str:
    parts = []
    for module in CHECKS:
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
        parts.append("\n\n".join(body))
    return "\n\n".join(parts) + "\n"


if __name__ == "__main__":  # pragma: no cover - a maintainer's tool
    from clm_policy.base.termsafe import echo

    echo(markdown(), nl=False)
