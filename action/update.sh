#!/usr/bin/env bash
# The Action's data step: refresh the Retraction Watch snapshot. A failed download leaves the cached
# snapshot as it was (rwgate accepts an export only whole) and is a warning, not a failed job: the
# check then says how old its data is.
set -uo pipefail
if [ -n "${INPUT_MAILTO:-}" ]; then export CROSSREF_MAILTO="$INPUT_MAILTO"; fi
if ! rwgate data update; then
  echo "::warning title=rwgate::could not refresh the Retraction Watch snapshot; checking with the cached one"
fi
