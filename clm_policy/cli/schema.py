"""``clm-policy schema NAME``: print a shipped JSON schema."""

from __future__ import annotations

import click

from clm_policy.base.errors import InputError
from clm_policy.base.resources import schema_names, schema_path
from clm_policy.base.suggest import suggest
from clm_policy.base.termsafe import echo


@click.command()
@click.argument("name", required=False)
@click.option("--list", "list_", is_flag=True, help="List the shipped schemas.")
def schema(name: str | None, list_: bool) -> int:
    """Print the JSON schema NAME (policy, session-state, ...).

    Point your editor at it for completion and checks in policy files; the shipped policies
    carry a yaml-language-server modeline that does so. Without NAME (or with --list): the
    names of the shipped schemas, one a line.

    \b
    Examples:
      clm-policy schema --list
      clm-policy schema policy > policy.schema.json

    Exit codes: 0, 2 no schema of that NAME.
    """
    names = schema_names()
    if list_ and name is not None:
        raise click.UsageError("--list takes no NAME: give one or the other")
    if list_ or name is None:
        for known in names:
            echo(known)
        return 0
    if name not in names:
        raise InputError(
            f"no schema named '{name}'{suggest(name, names)} (schemas: {', '.join(names)})"
        )
    echo(schema_path(name).read_text(encoding="utf-8"), nl=False)
    return 0
