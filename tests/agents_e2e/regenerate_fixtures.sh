#!/usr/bin/env bash
# Regenerates tests/fixtures/real/<agent>-<version>/ from the real, pinned binaries: runs the
# end-to-end suite with CLM_E2E_CAPTURE=1, which makes the tests save what the agents
# produced (hook inputs, transcripts, rollouts, status-line input, -p results) with this
# machine's paths normalised (capture.py). Review the diff before committing it.
#
#   bash tests/agents_e2e/regenerate_fixtures.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
bash tests/agents_e2e/install.sh
for dir in tests/fixtures/real/*/; do
  # keep each README.md; everything else is made again
  find "$dir" -mindepth 1 ! -name README.md -delete 2>/dev/null || true
done
CLM_E2E_CAPTURE=1 python -m pytest tests/agents_e2e -q -p no:cacheprovider "$@"
