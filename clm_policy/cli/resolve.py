"""``clm-policy resolve``: print a policy with everything it extends merged in."""

from __future__ import annotations

import click

from clm_policy.base.termsafe import echo


@click.command()
@click.argument("policy_ref", required=False, metavar="[POLICY]")
def resolve(policy_ref: str | None) -> int:
    """Print POLICY (a file, or a bundled name) resolved: extends merged, profiles expanded.

    Without POLICY: the project's ($CLM_POLICY_POLICY, or the policy: of .clm-policy.yaml),
    else the bundled default. The output is itself a valid policy with the same decisions;
    comments say which file and line each rule and guard comes from.

    \b
    Examples:
      clm-policy resolve
      clm-policy resolve claude-code
      clm-policy resolve policies/examples/team.yaml > team.resolved.yaml

    Exit codes: 0, 2 bad input (a policy's problem at file:line:col).
    """
    from clm_policy.base.errors import InputError
    from clm_policy.config.project import setting
    from clm_policy.formats.textio import TEST_SUFFIXES, path_kind
    from clm_policy.policy.compile import load_policy
    from clm_policy.policy.export import resolved_yaml

    ref = policy_ref or setting("policy", None) or "default"
    if path_kind(ref) == "folder":
        raise InputError(f"{ref}: is a folder: resolve takes one policy file, or a bundled name")
    if ref.endswith(TEST_SUFFIXES):
        raise InputError(f"{ref}: is a policy test file: resolve the policy its `policy:` names")
    echo(resolved_yaml(load_policy(ref)), nl=False)
    return 0
