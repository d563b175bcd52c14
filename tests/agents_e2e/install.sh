#!/usr/bin/env bash
# Installs the pinned Claude Code and Codex CLI (tests/agents_e2e/versions.json) into the
# repository's .agents/ (gitignored) for the end-to-end suite, tests/agents_e2e/.
# Idempotent: does nothing when exactly those versions are there. Exits non-zero when npm
# fails (no registry): the suite then skips, saying so.
#
#   bash tests/agents_e2e/install.sh
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
python="${PYTHON:-python3}"

if "$python" "$here/agents.py" >/dev/null 2>&1; then
  echo "agents e2e: pinned agents already installed:"
  "$python" "$here/agents.py"
  exit 0
fi
if ! command -v npm >/dev/null; then
  echo "agents e2e: npm not found; the agents' end-to-end tests will skip" >&2
  exit 1
fi

dir="$("$python" "$here/agents.py" --dir)"
read -r -a specs <<<"$("$python" "$here/agents.py" --npm-specs)"
mkdir -p "$dir"
[ -f "$dir/package.json" ] || echo '{"private": true}' >"$dir/package.json"
echo "agents e2e: npm install ${specs[*]} into $dir"
# --include=optional: the native executables come as optional platform packages.
timeout 900 npm install --prefix "$dir" --save-exact --include=optional --no-audit --no-fund \
  --no-update-notifier --loglevel=error --fetch-retries=2 --fetch-timeout=120000 "${specs[@]}"
"$python" "$here/agents.py"
