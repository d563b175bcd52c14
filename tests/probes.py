"""What each hot entry point may not import: one table, and one helper that runs an entry
point in a fresh interpreter and says which of its forbidden modules were loaded.

The hook, the status line, the quick ``decide`` and ``log`` run as a process per prompt, per
refresh or per call: a library or a standard module that costs start-up time (README,
"Performance"; benchmarks/) is a regression there even when the answer is right. A module is
loaded when it or a submodule of it is in ``sys.modules``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# libraries whose import alone costs a per-prompt process much of its time
LIBRARIES = ("click", "pydantic", "ruamel", "jsonschema", "git", "simpleeval")
# standard modules that cost start-up time (dataclasses brings inspect; typing, pathlib, ...)
STARTUP = ("typing", "dataclasses", "pathlib", "hashlib", "inspect")

FORBIDDEN: dict[str, tuple[str, ...]] = {
    # `clm-policy hook claude-code` on a prompt the policy lets continue
    "hook": (*LIBRARIES, *STARTUP, "subprocess"),
    # `clm-policy hook claude-code` at a session's start with nothing to hand: one git log,
    # none of the modules that make a seed or write to the memory repository
    "start": (
        *LIBRARIES,
        *STARTUP,
        "clm_policy.agents.hooks.seeds",
        "clm_policy.lifecycle.pipelines",
        "clm_policy.lifecycle.seed",
        "clm_policy.memory.git.write",
        "clm_policy.models.manifest",
    ),
    # `clm-policy statusline` whose digest is fresh: not even the policy engine
    "statusline": (
        *LIBRARIES,
        *STARTUP,
        "tempfile",
        "clm_policy.policy.engine",
        "clm_policy.policy.cache",
    ),
    # `clm-policy decide --tokens/--state/--transcript` answered by the quick path
    "decide": (*LIBRARIES, *STARTUP),
    # `clm-policy log` answered by the quick path (git runs as a process, not GitPython)
    "log": (*LIBRARIES, "dataclasses", "pathlib"),
    # `clm-policy compact --state FILE` answered by the quick path: the compaction works on the
    # plain state, its command line is read without click, the write path's paths are strings
    # and the time comes from _datetime (base/timestamp)
    "compact": (*LIBRARIES, "typing", "dataclasses", "inspect", "pathlib", "datetime"),
    # a policy compiled from its YAML (the first hook after the policy changed, once per edit):
    # libyaml (ruamel) reads it and pydantic checks it, but nothing else heavy
    "compile": ("click", "jsonschema", "git", "simpleeval"),
    # the same once pydantic's validator is kept (policy/schemacheck.py): pydantic-core alone
    "recompile": ("click", "jsonschema", "git", "simpleeval", "pydantic"),
    # a decision in process through the CLI's command (click's path) on a cached policy
    "engine": ("pydantic", "ruamel", "jsonschema", "git"),
    # the context read from a transcript's tail (the hooks' and decide's reader)
    "transcript-tail": ("click", "pydantic", "ruamel"),
    # the manifest and the lifecycle's modules imported: validation by schema waits for a write
    "lifecycle": ("jsonschema", "git"),
    # the atomic and private file helpers (the hooks and the status line write through them)
    "files": (*LIBRARIES, *STARTUP, "subprocess", "tempfile"),
}


@dataclass
class Probe:
    """What an entry point did in a fresh interpreter: its exit code (None: it returned),
    what it printed, the forbidden modules it loaded, and every module it loaded."""

    code: int | str | None
    stdout: str
    stderr: str
    loaded: list[str]
    new: list[str]


# the probe's own lines, before and after the code probed: they import nothing until the
# modules are counted
_START = "import sys\n_report, _forbidden = sys.argv[1], sys.argv[2].split(',')\n"
_START += "before = set(sys.modules)\ncode = None\n"
_END = """
_new = sorted(set(sys.modules) - before)
_loaded = [m for m in _forbidden if any(k == m or k.startswith(m + ".") for k in sys.modules)]
import json
with open(_report, "w") as out:
    json.dump({"code": code, "loaded": _loaded, "new": _new}, out)
"""


def probe_code(
    entry: str,
    code: str,
    *,
    stdin: str | None = None,
    cwd: Path | None = None,
    runs: int = 1,
    isolated: bool = False,
) -> Probe:
    """Run ``code`` (which may set ``code``, its exit status) in a fresh interpreter and
    check the modules of ``FORBIDDEN[entry]``. ``runs`` > 1: the last run counts (the first
    ones fill caches, as a user's earlier calls did)."""
    forbidden = FORBIDDEN[entry]
    script = _START + code + "\n" + _END
    with tempfile.TemporaryDirectory() as folder:
        report = os.path.join(folder, "report.json")
        for _ in range(runs):
            done = subprocess.run(
                [
                    sys.executable,
                    *(["-I"] if isolated else []),
                    "-c",
                    script,
                    report,
                    ",".join(forbidden),
                ],
                input=stdin,
                capture_output=True,
                text=True,
                cwd=cwd,
                timeout=120,
                check=False,
            )
        with open(report) as fh:
            found = json.load(fh)
    return Probe(found["code"], done.stdout, done.stderr, found["loaded"], found["new"])


def probe_cli(
    entry: str,
    args: Sequence[str],
    *,
    stdin: str | None = None,
    cwd: Path | None = None,
    runs: int = 1,
) -> Probe:
    """``clm-policy ARGS`` as the installed script runs it (clm_policy.cli.entry.main, which
    raises SystemExit here where the program ends its process at once), in a
    fresh interpreter, checked against ``FORBIDDEN[entry]``."""
    code = (
        f"sys.argv = ['clm-policy', *{list(args)!r}]\n"
        "from clm_policy.cli.entry import main\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code\n"
    )
    return probe_code(entry, code, stdin=stdin, cwd=cwd, runs=runs)
