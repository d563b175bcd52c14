#!/usr/bin/env bash
# Regenerates tests/fixtures/real/<agent>-<version>/ from the real, pinned binaries: runs the
# end-to-end suite with CLM_E2E_CAPTURE=1, which makes the tests save what the agents
# produced (hook inputs, transcripts, rollouts, status-line input, -p results) with this
# machine's paths normalised (capture.py). After a version bump (versions.json), the pinned
# version's folder is made and, once the suite has passed, the older versions' folders of the
# same agents are removed: the unit tests replay the pinned version's
# (tests/agents_e2e/agents.py: fixtures). Review the diff before committing it.
#
#   bash tests/agents_e2e/regenerate_fixtures.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
python="${PYTHON:-python}"
bash tests/agents_e2e/install.sh
read -r -a pinned <<<"$("$python" tests/agents_e2e/agents.py --fixture-folders)"
for name in "${pinned[@]}"; do
  rm -rf "tests/fixtures/real/$name"  # made again, whole, by the run below
done
CLM_E2E_CAPTURE=1 "$python" -m pytest tests/agents_e2e -q -p no:cacheprovider "$@"
for name in "${pinned[@]}"; do
  agent="${name%-*}"
  for old in tests/fixtures/real/"$agent"-*/; do
    old="${old%/}"
    if [ "$(basename "$old")" != "$name" ]; then
      echo "agents e2e: removing $old (replaced by tests/fixtures/real/$name)"
      rm -rf "$old"
    fi
  done
done
