#!/bin/sh
# Issue 15's many-groups figure: 20 groups of cfsbw daemon, each with one
# busy process at 5 ms per 100 ms (0.05 CPU), for SECONDS (default 5).
# Prints each group's CPU (from its process's schedstat) against 0.05, and
# the daemon's own CPU as a share of the CPU it governed and per group per
# period.  It uses the socket (cfsbw ctl), not the mount.  Everything
# it starts is stopped on any exit.
#
#   CFSBW_BIN=build/cfsbw CFSBW_PROGS=build/tests/progs sh bench/daemon_groups.sh [SECONDS] [GROUPS] [QUOTA_US]
#
# QUOTA_US (default 5000) per 100000 us; "1 1000" is issue 15's fixed cost
# of one throttled 1 ms / 100 ms group.
#
# Shielded from the rest of the machine where it can be (root and cgroup
# v1's cpu, as bench_fidelity): the daemon and its processes sit in a
# kernel cgroup with no limit and the largest cpu.shares (262144), this
# script in another, so that other work (each task at 1024) takes about
# 0.4% of the CPU they want: the figure is then what cfsbw's limit gives,
# not what a loaded machine left over.  CFSBW_BENCH_SHIELD=0 runs without.
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
	unshield
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

kroot=/sys/fs/cgroup/cpu
shield=""
if [ "${CFSBW_BENCH_SHIELD:-1}" != 0 ] && [ "$(id -u)" = 0 ] && [ -w "$kroot/cgroup.procs" ]; then
	shield=$kroot/cfsbw-bench-groups-$$
	mkdir "$shield" "$shield-ctl"
	echo 262144 > "$shield/cpu.shares"
	echo 262144 > "$shield-ctl/cpu.shares"
	echo $$ > "$shield-ctl/cgroup.procs"
fi
unshield() {
	[ -n "$shield" ] || return 0
	echo $$ > "$kroot/cgroup.procs"
	rmdir "$shield" "$shield-ctl" 2>/dev/null
}
# into_shield PID: the shielded group (nothing without a shield).
into_shield() { [ -z "$shield" ] || echo "$1" > "$shield/cgroup.procs"; }

${CFSBW_DAEMON_NICE:+nice -n "$CFSBW_DAEMON_NICE"} "$bin" daemon --socket "$sock" 2>"$tmp/log" &
dpid=$!
into_shield "$dpid"
i=0
while [ ! -S "$sock" ] && [ $i -lt 200 ]; do sleep 0.02; i=$((i + 1)); done
ctl() { "$bin" ctl --socket "$sock" "$@" >/dev/null; }

. "$(dirname "$0")/lib/snapshot.sh"

g=1
while [ $g -le "$ngroups" ]; do
	ctl mkdir "/g$g"
	ctl set "/g$g" cpu.max "$quota" 100000
	"$work" spin 600 1 >/dev/null 2>&1 &
	pids="$pids $!"
	into_shield $!
	ctl move $! "/g$g"
	g=$((g + 1))
done
sleep 1
# shellcheck disable=SC2086
start=$(snapshot $pids "$dpid")
sleep "$secs"
# shellcheck disable=SC2086
end=$(snapshot $pids "$dpid")
echo "$start" "|" "$end" | awk -v n="$ngroups" -v q="$quota" -v sh="${shield:+, shielded (cpu.shares 262144)}" '{
	split($0, halves, "|"); na = split(halves[1], a, " "); split(halves[2], b, " ");
	dt = b[1] - a[1]; min = 1e9; max = 0; sum = 0;
	lim = q / 100000;
	for (i = 2; i < na; i++) { c = (b[i] - a[i]) / 1e9 / dt; sum += c; if (c < min) min = c; if (c > max) max = c }
	own = (b[na] - a[na]) / 1e9 / dt; na -= 2;
	printf "%d groups at %.3f CPU (%g ms / 100 ms), %.1f s%s\n", n, lim, q / 1000, dt, sh;
	printf "per group: min %.4f  mean %.4f  max %.4f CPU (%+.1f%% .. %+.1f%% of %.3f)\n", min, sum / na, max, (min / lim - 1) * 100, (max / lim - 1) * 100, lim;
	printf "daemon: %.4f CPU = %.2f%% of the %.3f CPU it governs; %.1f us per group per period\n", own, own / sum * 100, sum, own * 1e6 / n / 10 }'
