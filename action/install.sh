#!/usr/bin/env bash
# The Action's install step: rwgate from the Action's own checkout (the version the workflow pinned).
set -euo pipefail
python -m pip install --quiet --disable-pip-version-check "$GITHUB_ACTION_PATH"
