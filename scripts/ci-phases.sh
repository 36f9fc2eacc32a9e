# shellcheck shell=bash
# Phase timing for scripts/test.sh (sourced): every phase's start, end, duration and result, printed
# at the end of the run, also when it fails, and written to test-output/ci-phases.json. Phases may
# run in background lanes: each appends its lines to one file (short appends, so they never mix).

ci_start=$EPOCHREALTIME
ci_load_at_start="$(cut -d' ' -f1-3 /proc/loadavg)"
ci_phases_tsv="$(mktemp -t ragen-ci-phases.XXXXXX)"
ci_phases_json="test-output/ci-phases.json"
# The CI log's own stdout, also inside lanes whose output goes to their log file.
exec 3>&1

# phase <name> <command...>: runs the command (a program or a function) as a named phase and returns
# its exit status. Its start and end go to the CI log at once, so a run stopped from outside still
# shows how far each lane got.
phase() {
  local name=$1 start=$EPOCHREALTIME rc=0
  shift
  printf '%s\t%s\t\t\n' "$name" "$start" >>"$ci_phases_tsv"
  echo "== [$(ci_clock "$start")] $name: started" >&3
  "$@" 3>&- || rc=$?
  local end=$EPOCHREALTIME
  printf '%s\t%s\t%s\t%s\n' "$name" "$start" "$end" "$rc" >>"$ci_phases_tsv"
  echo "== [$(ci_clock "$end")] $name: $( ((rc)) && echo "FAILED (exit $rc)" || echo ok) after $(ci_duration "$start" "$end")" >&3
  return "$rc"
}

# m:ss since the CI started.
ci_clock() { ci_duration "$ci_start" "$1"; }
ci_duration() { awk -v a="$1" -v b="$2" 'BEGIN { s = int(b - a + 0.5); printf "%d:%02d", s / 60, s % 60 }'; }

# The phases that failed, one name a line (read by test.sh's summary).
ci_failed_phases() {
  awk -F'\t' '$3 != "" && $4 != 0 { print $1 }' "$ci_phases_tsv"
}

# ci_phases_report <exit status>: the table on stdout and the JSON file. A phase with a start and no
# end was still running when the run ended (stopped with it).
ci_phases_report() {
  local rc=$1 now=$EPOCHREALTIME
  mkdir -p "$(dirname "$ci_phases_json")"
  awk -F'\t' -v t0="$ci_start" -v now="$now" -v rc="$rc" -v json="$ci_phases_json" \
    -v commit="$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
    -v dirty="$([ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] && echo true || echo false)" \
    -v date="$(date -u +%Y-%m-%dT%H:%M:%SZ)" -v load0="$ci_load_at_start" -v load="$(cut -d' ' -f1-3 /proc/loadavg)" \
    -v cpus="$(nproc)" '
    function clock(s) { s = int(s + 0.5); return sprintf("%d:%02d", s / 60, s % 60) }
    # Keyed by name and start: a name may run twice (never at the same instant).
    { key = $1 SUBSEP $2
      if (!(key in seen)) { seen[key] = 1; order[++n] = key; name[key] = $1; start[key] = $2 }
      if ($3 != "") { end[key] = $3; status[key] = $4 } }
    END {
      # By start time (insertion sort: a few dozen phases).
      for (i = 2; i <= n; i++) { k = order[i]; for (j = i - 1; j >= 1 && start[order[j]] > start[k]; j--) order[j + 1] = order[j]; order[j + 1] = k }
      printf "== CI phases (total %s, exit %d; m:ss from the start)\n", clock(now - t0), rc
      printf "%-44s %7s %7s %9s  %s\n", "phase", "start", "end", "duration", "result"
      gsub(/ /, ", ", load0); gsub(/ /, ", ", load)
      printf "{\n  \"commit\": \"%s\",\n  \"dirty\": %s,\n  \"date\": \"%s\",\n  \"cpus\": %d,\n  \"loadavg\": {\"atStart\": [%s], \"atEnd\": [%s]},\n  \"exit\": %d,\n  \"seconds\": %.1f,\n  \"phases\": [\n", commit, dirty, date, cpus, load0, load, rc, now - t0 > json
      for (i = 1; i <= n; i++) {
        k = order[i]; stopped = !(k in end); e = stopped ? now : end[k]
        result = stopped ? "stopped" : (status[k] == 0 ? "ok" : "failed (exit " status[k] ")")
        printf "%-44s %7s %7s %9s  %s\n", name[k], clock(start[k] - t0), clock(e - t0), clock(e - start[k]), result
        printf "    {\"name\": \"%s\", \"start\": %.1f, \"end\": %.1f, \"seconds\": %.1f, \"result\": \"%s\"}%s\n", name[k], start[k] - t0, e - t0, e - start[k], result, i < n ? "," : "" >> json
      }
      printf "  ]\n}\n" >> json
    }' "$ci_phases_tsv"
  echo "== phases written to $ci_phases_json"
}
