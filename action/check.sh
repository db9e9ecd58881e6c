#!/usr/bin/env bash
# The Action's check step: one `rwgate check` writes the SARIF, JSON and Markdown reports; the
# Markdown goes to the job summary. It always exits 0 so the SARIF upload runs; the gate step after
# it fails the job with rwgate's exit code.
#   in:  INPUT_PATHS (spaces or newlines, globs), INPUT_POLICY, INPUT_OFFLINE, INPUT_MAILTO,
#        INPUT_SINCE; GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, RUNNER_TEMP, GITHUB_BASE_REF (the runner's;
#        the last is set on pull requests, whose lock is then read from the base branch)
#   out: exit-code, flagged, sarif, report (step outputs)
set -uo pipefail
shopt -s globstar nullglob

out="${RUNNER_TEMP:-/tmp}/rwgate"
mkdir -p "$out"
sarif="$out/rwgate.sarif" report="$out/report.json" summary="$out/summary.md"
rm -f "$sarif" "$report" "$summary"

paths=()
while IFS= read -r line; do
  set -f; words=($line); set +f      # split on spaces, not yet expanded: each a path or a glob
  for word in ${words[@]+"${words[@]}"}; do
    matches=($word)                   # a glob matching nothing stays as written: rwgate says so
    if [ ${#matches[@]} -eq 0 ]; then paths+=("$word"); else paths+=("${matches[@]}"); fi
  done
done <<< "${INPUT_PATHS:-}"

args=()
case "${INPUT_POLICY:-}" in
  "") ;;
  default|strict|permissive) args+=(--policy "$INPUT_POLICY") ;;
  *) echo "::error title=rwgate::policy must be default, strict or permissive, not '$INPUT_POLICY'"
     echo "exit-code=2" >> "$GITHUB_OUTPUT"; exit 0 ;;
esac
if [ "${INPUT_OFFLINE:-false}" = "true" ]; then args+=(--offline); fi
if [ -n "${INPUT_SINCE:-}" ]; then
  since="$INPUT_SINCE"
  if [ -n "${GITHUB_BASE_REF:-}" ]; then
    # A pull request can edit the lock together with the bibliography (cite a retracted work and
    # record it as "unchanged"): it is judged against the base branch's lock, never its own.
    since="$out/base.lock"
    if ! git show "origin/${GITHUB_BASE_REF}:${INPUT_SINCE}" > "$since" 2>/dev/null; then
      echo "::warning title=rwgate::no ${INPUT_SINCE} on origin/${GITHUB_BASE_REF} (check out with fetch-depth: 0): every citation is judged, as without a lock"
      since=""
    fi
  fi
  if [ -n "$since" ]; then args+=(--since "$since"); fi
fi
if [ -n "${INPUT_MAILTO:-}" ]; then export CROSSREF_MAILTO="$INPUT_MAILTO"; fi

if [ ${#paths[@]} -eq 0 ]; then
  echo "::error title=rwgate::no paths to check (input 'paths' is empty)"
  echo "exit-code=2" >> "$GITHUB_OUTPUT"; exit 0
fi

rwgate check "${args[@]}" "${paths[@]}" \
  --format sarif --output "$sarif" --format json --output "$report" \
  --format markdown --output "$summary"
code=$?

if [ -s "$summary" ]; then
  cat "$summary" >> "$GITHUB_STEP_SUMMARY"
else
  echo "## rwgate: could not run (exit $code); see the step's log" >> "$GITHUB_STEP_SUMMARY"
fi
flagged=0
if [ -s "$report" ]; then
  flagged=$(python -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["flagged"])' "$report")
  echo "report=$report" >> "$GITHUB_OUTPUT"
fi
if [ -s "$sarif" ]; then echo "sarif=$sarif" >> "$GITHUB_OUTPUT"; fi
{ echo "exit-code=$code"; echo "flagged=$flagged"; } >> "$GITHUB_OUTPUT"
exit 0
