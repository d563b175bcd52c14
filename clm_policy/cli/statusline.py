"""``clm-policy statusline`` (``clm_policy.agents.statusline``): the script answers it without
click (:mod:`clm_policy.cli.entry`); this command is what ``--help`` shows and what the
in-process CLI runs, with the same two options (a test pins them equal).
"""

from __future__ import annotations

import sys

import click

from clm_policy.agents.statusline import DEFAULT_POLICY
from clm_policy.base.termsafe import echo
from clm_policy.cli.options import policy_option, profile_option


@click.command()
@policy_option(
    "Policy file, or the name of a bundled policy. "
    f"[default: $CLM_POLICY_POLICY, the project's (.clm-policy.yaml), else {DEFAULT_POLICY}]",
    configured=False,
)
@profile_option(
    "Task profile. [default: $CLM_POLICY_PROFILE, the project's, else the policy's]",
    configured=False,
)
def statusline(policy_ref: str | None, profile: str | None) -> int:
    """Print one status line for Claude Code: context, next threshold, action.

    Reads Claude Code's status-line JSON on standard input and prints, e.g.

    \b
      ctx 46% 82k/180k · compact at 67% · continue · claude-code/coding

    The project is the one of the session's folder (workspace.current_dir). The action is
    what the thresholds say for this context; the hooks decide with every rule. It never
    fails: a problem of the configuration or the policy is said in a few words
    (`clm-policy: policy team.yaml not found`), other input as `clm-policy: ?`, and the whole
    reason goes to ~/.local/state/clm-policy/statusline.log. Set it up with
    `clm-policy hook claude-code --install`.

    \b
    Example:
      echo '{"context_window": {"context_window_size": 200000, "current_usage":
        {"input_tokens": 2000, "cache_creation_input_tokens": 0,
         "cache_read_input_tokens": 80000, "output_tokens": 500}}}' | clm-policy statusline

    Exit codes: 0 whatever the input, 130 interrupted.
    """
    from clm_policy.agents.statusline import read_stdin, status_line
    from clm_policy.cli.entry import note_if_terminal

    note_if_terminal("statusline", "Claude Code")
    echo(status_line(read_stdin(sys.stdin.buffer), policy_ref, profile), lines=False)
    return 0
