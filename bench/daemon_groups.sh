#!/bin/sh
# Issue 15's many-groups figure: 20 groups of cfsbw daemon, each with one
# busy process at 5 ms per 100 ms (0.05 CPU), for SECONDS (default 5).
# Prints each group's CPU (from its process's CPU clock) against 0.05, and
# the daemon's own CPU as a share of the CPU it governed and per group per
# period.  It uses the socket (cfsbw ctl), not the mount.  Everything
# it starts is stopped on any exit.
#
#   CFSBW_BIN=build/cfsbw CFSBW_PROGS=build/tests/progs sh bench/daemon_groups.sh [SECONDS] [GROUPS] [QUOTA_US]
#
# QUOTA_US (default 5000) per 100000 us; "1 1000" is issue 15's fixed cost
# of one throttled 1 ms / 100 ms group.
set -u
secs=${1:-5}
ngroups=${2:-20}
quota=${3:-5000}
bin=${CFSBW_BIN:-build/cfsbw}
work=${CFSBW_PROGS:-build/tests/progs}/workload
tmp=$(mktemp -d /tmp/cfsbw-bench-groups.XXXXXX)
sock=$tmp/sock
pids=""
dpid=""
cleanup() {
	for p in $pids; do kill -9 "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	if [ -n "$dpid" ]; then kill "$dpid" 2>/dev/null; wait "$dpid" 2>/dev/null; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

${CFSBW_DAEMON_NICE:+nice -n "$CFSBW_DAEMON_NICE"} "$bin" daemon --socket "$sock" 2>"$tmp/log" &
dpid=$!
i=0
while [ ! -S "$sock" ] && [ $i -lt 200 ]; do sleep 0.02; i=$((i + 1)); done
ctl() { "$bin" ctl --socket "$sock" "$@" >/dev/null; }

cpu_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f\n", s}'
}

g=1
while [ $g -le "$ngroups" ]; do
	ctl mkdir "/g$g"
	ctl set "/g$g" cpu.max "$quota" 100000
	"$work" spin 600 1 >/dev/null 2>&1 &
	pids="$pids $!"
	ctl move $! "/g$g"
	g=$((g + 1))
done
sleep 1
start=""
for p in $pids; do start="$start $(cpu_ns "$p")"; done
d0=$(cpu_ns "$dpid")
t0=$(date +%s.%N)
sleep "$secs"
t1=$(date +%s.%N)
d1=$(cpu_ns "$dpid")
end=""
for p in $pids; do end="$end $(cpu_ns "$p")"; done
echo "$start" "|" "$end" | awk -v t0="$t0" -v t1="$t1" -v d0="$d0" -v d1="$d1" -v n="$ngroups" -v q="$quota" '{
	split($0, halves, "|"); na = split(halves[1], a, " "); split(halves[2], b, " ");
	dt = t1 - t0; min = 1e9; max = 0; sum = 0;
	lim = q / 100000;
	for (i = 1; i <= na; i++) { c = (b[i] - a[i]) / 1e9 / dt; sum += c; if (c < min) min = c; if (c > max) max = c }
	own = (d1 - d0) / 1e9 / dt;
	printf "%d groups at %.3f CPU (%g ms / 100 ms), %.1f s\n", n, lim, q / 1000, dt;
	printf "per group: min %.4f  mean %.4f  max %.4f CPU (%+.1f%% .. %+.1f%% of %.3f)\n", min, sum / na, max, (min / lim - 1) * 100, (max / lim - 1) * 100, lim;
	printf "daemon: %.4f CPU = %.2f%% of the %.3f CPU it governs; %.1f us per group per period\n", own, own / sum * 100, sum, own * 1e6 / n / 10 }'
