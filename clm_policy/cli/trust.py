"""``clm-policy trust``: let a project's ``.clm-policy.yaml`` choose its memory repository and
remote (clm_policy.config.trust keeps the record)."""

from __future__ import annotations

import shlex

import click

from clm_policy.base.paths import shown_path
from clm_policy.base.termsafe import echo
from clm_policy.config.trust import CHANGED
from clm_policy.config.trusting import listing, revoke_config, trust_config


@click.command()
@click.argument("path", metavar="[PATH]", required=False)
@click.option(
    "--list", "show_list", is_flag=True, help="List the files you trust, and how each is now."
)
@click.option("--revoke", is_flag=True, help="Stop trusting PATH (it need not exist any more).")
def trust(path: str | None, show_list: bool, revoke: bool) -> int:
    """Trust a project's .clm-policy.yaml to choose a memory repository and a remote.

    A project's configuration is committed with it, so a cloned repository's is a stranger's:
    it chooses the policy and the profile, but a memory other than the project's default and
    a remote to push handoffs to are used only once you trust the file as it is — its path
    and the SHA-256 of its content are recorded in $XDG_CONFIG_HOME/clm-policy/trusted.json
    (~/.config when unset). A file that changes is untrusted again. Until then the hooks and
    commands use the project's default memory, push nothing, and say so. Flags and
    CLM_POLICY_MEMORY / CLM_POLICY_REMOTE are yours and need no trust.

    PATH is a .clm-policy.yaml, or a folder: the configuration in effect there [default: the
    working directory's]. The file is checked first, the policy it names included; a broken one
    is not trusted (exit 2).

    \b
    Examples:
      clm-policy trust                              # the configuration in effect here
      clm-policy trust ~/src/shop/.clm-policy.yaml
      clm-policy trust --list
      clm-policy trust --revoke ~/src/shop

    Exit codes: 0 done, 2 bad input (no such file; a broken one, not trusted).
    """
    if show_list:
        if path is not None or revoke:
            raise click.UsageError("--list takes no PATH and no --revoke")
        return _list()
    if revoke:
        where, was = revoke_config(path)
        shown = shown_path(str(where))
        echo(f"revoked trust in {shown}" if was else f"{shown} was not trusted; nothing changed")
        return 0
    record, memory, remote = trust_config(path)
    echo(f"trusted {shown_path(record.path)} (sha256 {record.sha256[:12]})")
    if memory is not None:
        echo(f"  memory  {shown_path(memory)}")  # (../x resolved: where it is)
    if remote is not None:
        echo(f"  remote  {remote}")
    if memory is None and remote is None:
        echo("  it names no memory other than the project's default and no remote")
    return 0


def _list() -> int:
    found = listing()
    if not found:
        echo("no trusted configuration files (clm-policy trust PATH trusts one)")
        return 0
    for record, now in found:
        line = f"{now:<10} {record.trusted_at or '-':<20}  {record.path}"
        if now == CHANGED:
            line += f"  (not trusted as it is now: clm-policy trust {shlex.quote(record.path)})"
        echo(line)
    return 0
