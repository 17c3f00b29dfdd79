#!/usr/bin/env bash
# Wall time against CPU time of one command (a stage of `make test`), to tell what is CPU-bound
# (cannot overlap with another stage on 2 cores) from what waits (can):
#
#   scripts/stage-time.sh LABEL command [args...]
#
# Prints one line: LABEL, wall s, the command's own CPU (user + sys of it and every child it
# waited for: pytest, psql, sqitch, node), the private cluster's CPU (the backends that ended
# during the command: the postmaster's reaped children, from /proc; a backend still alive at
# the end is not counted, nor a cluster the command starts itself, as the matrix does, nor any
# of it when the server restarted during the command: "n/a"), the sum's share of one core, and
# the load average before and after. The command's exit status is
# returned, so a failing stage still fails.
set -uo pipefail
label=${1:?usage: $0 LABEL command [args...]}
shift
ROOT=$(cd "$(dirname "$0")/.." && pwd)
pidfile=$ROOT/.pgdata/data/postmaster.pid
tick=$(getconf CLK_TCK)

server_ticks() {  # the postmaster's pid and utime + stime + cutime + cstime (fields 14-17 of stat)
  local pid
  pid=$(head -1 "$pidfile" 2>/dev/null) || { echo "- 0"; return; }
  awk -v p="$pid" '{ sub(/^.*\) /, ""); print p, $12 + $13 + $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo "- 0"
}

load() { cut -d' ' -f1-3 /proc/loadavg; }

before_load=$(load)
before_server=$(server_ticks)
times_file=$(mktemp)
start=$(date +%s.%N)
/usr/bin/time -o "$times_file" -f '%U %S' "$@"
rc=$?
end=$(date +%s.%N)
after_server=$(server_ticks)
read -r user sys < <(tail -1 "$times_file")
rm -f "$times_file"
awk -v l="$label" -v s="$start" -v e="$end" -v u="$user" -v y="$sys" -v b="$before_server" -v a="$after_server" \
  -v t="$tick" -v lb="$before_load" -v la="$(load)" -v rc="$rc" 'BEGIN {
    wall = e - s; client = u + y
    split(b, before, " "); split(a, after, " ")
    if (before[1] != after[1] || before[1] == "-") { server = 0; shown = "n/a (the server restarted)" }
    else { server = (after[2] - before[2]) / t; shown = sprintf("%.1f s", server) }
    printf "== stage %s: wall %.1f s, client CPU %.1f s (user %.1f, sys %.1f), server CPU %s, CPU/wall %.2f cores; load %s -> %s; exit %d\n",
      l, wall, client, u, y, shown, (client + server) / wall, lb, la, rc
  }'
exit "$rc"
