#!/usr/bin/env bash
# The Action's last step: fail the job with rwgate's exit code, after the SARIF upload.
set -euo pipefail
code="${RWGATE_EXIT:-2}"
case "$code" in
  0) echo "rwgate: gate passed" ;;
  1) echo "::error title=rwgate::gate FAILED: a cited work fails the policy (see the job summary)" ;;
  *) echo "::error title=rwgate::rwgate could not read an input or did not run (exit $code)" ;;
esac
exit "$code"
