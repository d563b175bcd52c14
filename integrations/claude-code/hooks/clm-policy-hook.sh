#!/bin/sh
# Claude Code runs this for each of clm-policy's hook events (hooks/hooks.json): the hook's
# JSON on standard input, answered by `clm-policy hook claude-code`. Without clm-policy on
# PATH the session goes on untouched: one line in the hook log, and exit 0.
if command -v clm-policy >/dev/null 2>&1; then
  exec clm-policy hook claude-code
fi
cat >/dev/null
d="${XDG_STATE_HOME:-$HOME/.local/state}/clm-policy"
mkdir -p "$d" && printf '%s claude-code: clm-policy is not on PATH: pip install clm-policy (the plugin runs it)\n' "$(date +%Y-%m-%dT%H:%M:%S%z)" >>"$d/hook.log"
exit 0
