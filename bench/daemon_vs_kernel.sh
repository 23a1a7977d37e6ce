#!/bin/sh
# cfsbw daemon's mount against the kernel's cgroup v1 cpu controller, side
# by side: the same tree is made in both with the same mkdir and echo
# commands, the same busy workload is placed in each with echo PID >
# cgroup.procs, both run at the same time (so load from elsewhere falls on
# both alike), and each group's CPU is read from its processes' own CPU
# clocks (/proc/PID/task/*/schedstat) over the same window.
#
# Fair shares: the two sides compete for the same CPUs, so each sits in a
# kernel cgroup of its own with the same cpu.shares, siblings: "kernel"
# holds the kernel's tree, "cfsbw" (no limit) holds the daemon and every
# process the daemon governs.  Without that the kernel's tree would weigh
# as one entity (its 1024 shares split over the CPUs it runs on) against
# each of cfsbw's threads at 1024, and get less than its limit for no
# fault of its own (0.80 to 0.83 CPU for a 1 CPU /tenant, 2026-12-04).
#
# Scenarios: seed 008's three examples (1 CPU, 2 CPUs, 20%, period 500 ms)
# and issue 15's hierarchy (/tenant 1 CPU, /tenant/web 0.75, /tenant/batch
# unlimited, period 100 ms).  Needs root and /sys/fs/cgroup/cpu (v1) and
# /dev/fuse; says so and exits 0 without them.  Everything it makes is
# removed on any exit (trap).
#
#   CFSBW_BIN=build/cfsbw CFSBW_PROGS=build/tests/progs sh bench/daemon_vs_kernel.sh [SECONDS]
set -u
secs=${1:-5}
bin=${CFSBW_BIN:-build/cfsbw}
work=${CFSBW_PROGS:-build/tests/progs}/workload
kroot=/sys/fs/cgroup/cpu
if [ "$(id -u)" != 0 ] || [ ! -w "$kroot/cgroup.procs" ] || [ ! -e /dev/fuse ]; then
	echo "daemon_vs_kernel: skipped: needs root, $kroot (cgroup v1) and /dev/fuse"
	exit 0
fi
tmp=$(mktemp -d /tmp/cfsbw-bench-daemon.XXXXXX)
mnt=$tmp/mnt
kdir=$kroot/cfsbw-bench-$$
kside=$kdir/kernel
cside=$kdir/cfsbw
mkdir -p "$mnt" "$kside" "$cside"
# The kernel's largest shares, at both levels: against the rest of the
# machine (each task outside at 1024) the two sides get about 99.6% of
# the CPUs they want, and between them equal halves.  This script, which
# reads the clocks, sits in a group of the same shares beside them:
# otherwise it would wait seconds for a CPU after its sleep, and read
# each process's CPU seconds after the window closed (1.5 cores for a
# 1 CPU group, 2026-12-05).
kctl=$kroot/cfsbw-bench-ctl-$$
mkdir -p "$kctl"
echo 262144 > "$kctl/cpu.shares"
echo $$ > "$kctl/cgroup.procs"
echo 262144 > "$kdir/cpu.shares"
echo 262144 > "$kside/cpu.shares"
echo 262144 > "$cside/cpu.shares"
pids=""
dpid=""

cleanup() {
	for p in $pids; do kill -9 "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	pids=""
	# Kernel groups, deepest first (they are empty once the workloads
	# died; cfsbw's side once the daemon has too, below).
	[ -d "$kside" ] && find "$kside" -mindepth 1 -depth -type d -exec rmdir {} \; 2>/dev/null
	if [ -n "$dpid" ]; then
		kill "$dpid" 2>/dev/null
		wait "$dpid" 2>/dev/null
		dpid=""
	fi
	umount -l "$mnt" 2>/dev/null
	rmdir "$cside" "$kside" "$kdir" 2>/dev/null
	echo $$ > "$kroot/cgroup.procs"
	rmdir "$kctl" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

"$bin" daemon --mount "$mnt" --socket "$tmp/sock" 2>"$tmp/log" &
dpid=$!
echo "$dpid" > "$cside/cgroup.procs"
i=0
while [ ! -e "$mnt/cpu.stat" ] && [ $i -lt 200 ]; do sleep 0.02; i=$((i + 1)); done
[ -e "$mnt/cpu.stat" ] || { echo "daemon_vs_kernel: cfsbw daemon did not start"; cat "$tmp/log"; exit 1; }

. "$(dirname "$0")/lib/snapshot.sh"

# busy ROOT GROUP THREADS [KCG]: start a workload and place it, then (on
# cfsbw's side) in the kernel cgroup KCG too; its pid in busy_pid (not a
# subshell: pids must reach cleanup).
busy() {
	"$work" spin 600 "$3" >/dev/null 2>&1 &
	busy_pid=$!
	pids="$pids $busy_pid"
	echo "$busy_pid" > "$1$2/cgroup.procs" || echo "daemon_vs_kernel: cannot place $busy_pid in $1$2" >&2
	[ -z "${4:-}" ] || echo "$busy_pid" > "$4/cgroup.procs" || echo "daemon_vs_kernel: cannot move $busy_pid to $4" >&2
}

# One scenario, ROUNDS times (default 3) with new groups and processes
# each time: the caller's setup function runs on both roots, then it names
# "group:threads" pairs to load.  Each round reads every process's CPU at
# one instant (snapshot.sh) at the start and the end of its window; each
# group's line gives the median over the rounds and their range.
rounds=${ROUNDS:-3}
printf '%-38s %6s %-18s %-18s %s\n' "scenario: group" "limit" "kernel (range)" "cfsbw (range)" "ratio (range)"
# window PID...: each process's cores over a window of $secs, one a line.
window() {
	# shellcheck disable=SC2086
	a=$(snapshot "$@")
	sleep "$secs"
	# shellcheck disable=SC2086
	b=$(snapshot "$@")
	echo "$a | $b" | awk -v n="$#" '{
		split($0, h, "|"); split(h[1], x, " "); split(h[2], y, " "); dt = y[1] - x[1];
		for (i = 1; i <= n; i++) printf "%.4f\n", (y[1 + i] - x[1 + i]) / 1e9 / dt }'
}
# kill_all: the round's processes.
kill_all() {
	for p in $pids; do kill -9 "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	pids=""
}
# one_round SETUP GROUP:THREADS...: "kernel cfsbw" cores per group, in
# order, then their sums.  Both sides at once; with turn=1 one after the
# other (a limit above half the machine cannot bind with the other side
# running: seed 008's 2 CPU example on 2 CPUs).
one_round() {
	setup=$1
	shift
	$setup "$kside"
	$setup "$mnt"
	kps="" cps=""
	for spec in "$@"; do
		g=${spec%%:*} t=${spec#*:}
		busy "$kside" "$g" "$t"
		kps="$kps $busy_pid"
		if [ "${turn:-0}" = 0 ]; then
			busy "$mnt" "$g" "$t" "$cside"
			cps="$cps $busy_pid"
		fi
	done
	sleep 1
	if [ "${turn:-0}" = 0 ]; then
		# shellcheck disable=SC2086
		window $kps $cps > "$tmp/cores"
	else
		# shellcheck disable=SC2086
		window $kps > "$tmp/cores"
		kill_all
		for spec in "$@"; do
			busy "$mnt" "${spec%%:*}" "${spec#*:}" "$cside"
			cps="$cps $busy_pid"
		done
		sleep 1
		# shellcheck disable=SC2086
		window $cps >> "$tmp/cores"
	fi
	awk -v n="$#" '{ v[NR] = $1 } END {
		for (i = 1; i <= n; i++) { printf "%.4f %.4f\n", v[i], v[n + i]; ks += v[i]; cs += v[n + i] }
		printf "%.4f %.4f\n", ks, cs }' "$tmp/cores"
	kill_all
	sleep 0.2
	find "$kside" -mindepth 1 -depth -type d -exec rmdir {} \;
	for g in $(cd "$mnt" && find . -mindepth 1 -type d | sort -r); do rmdir "$mnt/$g"; done
}
# limit GROUP: the kernel side's quota / period, or "max".
limit() {
	cat "$kside$1/cpu.cfs_quota_us" "$kside$1/cpu.cfs_period_us" 2>/dev/null | tr '\n' ' ' |
		awk '{ if ($1 < 0) print "max"; else printf "%.2f\n", $1 / $2 }'
}
run() {
	name=$1
	shift
	out=$tmp/rounds
	: > "$out"
	r=1
	while [ $r -le "$rounds" ]; do
		one_round "$@" | awk -v r="$r" '{ print r, NR, $0 }' >> "$out"
		r=$((r + 1))
	done
	# The limits, read back from a fresh copy of the tree.
	$1 "$kside"
	labels="" lims=""
	shift 1
	for spec in "$@"; do
		labels="$labels ${spec%%:*}"
		lims="$lims $(limit "${spec%%:*}")"
	done
	labels="$labels ${total:-(sum)}"
	lims="$lims $( [ -n "${total:-}" ] && limit "$total" || echo -)"
	find "$kside" -mindepth 1 -depth -type d -exec rmdir {} \;
	[ -n "${total:-}" ] || sed -i "/^[0-9]* $(( $# + 1 )) /d" "$out"
	awk -v name="$name" -v labels="$labels" -v lims="$lims" '
		function med(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t } return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
		{ g = $2; n[g]++; K[g, n[g]] = $3; C[g, n[g]] = $4; R[g, n[g]] = $3 > 0 ? $4 / $3 : 0 }
		END {
			split(labels, L, " "); split(lims, M, " ");
			for (g = 1; g in n; g++) {
				kmin = cmin = rmin = 1e9; kmax = cmax = rmax = -1e9;
				for (i = 1; i <= n[g]; i++) {
					k[i] = K[g, i]; c[i] = C[g, i]; r[i] = R[g, i];
					if (k[i] < kmin) kmin = k[i]; if (k[i] > kmax) kmax = k[i];
					if (c[i] < cmin) cmin = c[i]; if (c[i] > cmax) cmax = c[i];
					if (r[i] < rmin) rmin = r[i]; if (r[i] > rmax) rmax = r[i] }
				printf "%-38s %6s %5.3f %5.3f..%5.3f %5.3f %5.3f..%5.3f %5.3f  %5.3f..%5.3f\n",
					name ": " L[g], M[g], med(k, n[g]), kmin, kmax, med(c, n[g]), cmin, cmax,
					med(r, n[g]), rmin, rmax }
		}' "$out"
}

ex1() { mkdir "$1/ex1"; echo 500000 > "$1/ex1/cpu.cfs_quota_us"; echo 500000 > "$1/ex1/cpu.cfs_period_us"; }
ex2() { mkdir "$1/ex2"; echo 1000000 > "$1/ex2/cpu.cfs_quota_us"; echo 500000 > "$1/ex2/cpu.cfs_period_us"; }
ex3() { mkdir "$1/ex3"; echo 100000 > "$1/ex3/cpu.cfs_quota_us"; echo 500000 > "$1/ex3/cpu.cfs_period_us"; }
tenant() {
	mkdir "$1/tenant" "$1/tenant/web" "$1/tenant/batch"
	echo 100000 > "$1/tenant/cpu.cfs_period_us"; echo 100000 > "$1/tenant/cpu.cfs_quota_us"
	echo 100000 > "$1/tenant/web/cpu.cfs_period_us"; echo 75000 > "$1/tenant/web/cpu.cfs_quota_us"
}

run "seed 008 ex1, 1 CPU" ex1 /ex1:2
turn=1 run "seed 008 ex2, 2 CPUs (in turn)" ex2 /ex2:2
run "seed 008 ex3, 20%" ex3 /ex3:2
total=/tenant
run "hierarchy" tenant /tenant/web:2 /tenant/batch:2
echo "(cores over ${secs} s on $(nproc) CPUs, both at once unless \"in turn\"; median of $rounds rounds and range; ratio = cfsbw / kernel)"
