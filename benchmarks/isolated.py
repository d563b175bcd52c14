"""What every benchmark's git and clm-policy processes run with: a git identity of their own,
no global or system git configuration, nothing of the user's clm-policy settings.

Imported by the benchmark scripts (they run as ``python benchmarks/NAME.py``, so this folder is
on ``sys.path``).
"""

from __future__ import annotations

import os
from pathlib import Path

GIT_ISOLATION = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
}
"""The benchmarks' git identity, and no configuration of the machine's."""

USER_SETTINGS = ("CLM_POLICY_NO_CACHE", "CLM_POLICY_MEMORY", "CLM_POLICY_POLICY")


def process_env(tmp: Path) -> dict[str, str]:
    """The environment of a clm-policy process under test: bytecode written as an installed
    one has it, a home, caches and state in ``tmp``, :data:`GIT_ISOLATION`, and none of the
    user's clm-policy settings."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(
        {
            "HOME": str(tmp / "home"),
            "XDG_CACHE_HOME": str(tmp / "home" / ".cache"),
            "XDG_STATE_HOME": str(tmp / "home" / ".state"),
            "CLM_POLICY_CACHE_DIR": str(tmp / "cache"),
            **GIT_ISOLATION,
        }
    )
    for name in USER_SETTINGS:
        env.pop(name, None)
    return env
