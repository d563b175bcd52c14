"""A hook that only records: appends its standard input (the agent's hook JSON) and its
arguments as one JSON line to ``$E2E_HOOK_RECORDS``, prints nothing, exits 0.

The end-to-end tests install it for every event beside clm-policy's own hooks, to see each
event's real input. Standard library only; never fails the agent.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time


def main() -> int:
    raw = sys.stdin.read()
    try:
        value: object = json.loads(raw)
    except ValueError:
        value = raw
    target = os.environ.get("E2E_HOOK_RECORDS")
    if not target:
        return 0
    line = json.dumps({"time": time.time(), "argv": sys.argv[1:], "input": value}) + "\n"
    with open(target, "a", encoding="utf-8") as out:
        fcntl.flock(out, fcntl.LOCK_EX)
        out.write(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
