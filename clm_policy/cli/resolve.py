"""``clm-policy resolve``: print a policy with everything it extends merged in."""

from __future__ import annotations

import click

from clm_policy.base.termsafe import echo


@click.command()
@click.argument("policy_ref", default="default", metavar="[POLICY]")
def resolve(policy_ref: str) -> int:
    """Print POLICY (a file, or a bundled name) resolved: extends merged, profiles expanded.

    The output is itself a valid policy with the same decisions; comments say which file and
    line each rule and guard comes from.
    """
    from clm_policy.policy.compile import load_policy
    from clm_policy.policy.export import resolved_yaml

    echo(resolved_yaml(load_policy(policy_ref)), nl=False)
    return 0
