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
echo 1024 > "$kside/cpu.shares"
echo 1024 > "$cside/cpu.shares"
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

# CPU time of a process's threads, ns.
cpu_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f\n", s}'
}

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

# One scenario: the caller's setup function runs on both roots, then it
# names "group threads" pairs to load; prints one line per group.
printf '%-34s %8s %8s %8s %7s\n' "scenario: group" "limit" "kernel" "cfsbw" "ratio"
# row LABEL GROUP KERNEL_NS CFSBW_NS: one line, over the window t0..t1.
row() {
	lim=$(cat "$kside$2/cpu.cfs_quota_us" "$kside$2/cpu.cfs_period_us" | tr '\n' ' ')
	awk -v n="$1" -v l="$lim" -v kd="$3" -v cd="$4" -v t0="$t0" -v t1="$t1" 'BEGIN {
		split(l, q, " "); lim = q[1] < 0 ? "max" : sprintf("%.2f", q[1] / q[2]);
		k = kd / 1e9 / (t1 - t0); c = cd / 1e9 / (t1 - t0);
		r = k > 0 ? c / k : 0; printf "%-34s %8s %8.3f %8.3f %7.3f\n", n, lim, k, c, r }'
}
run() {
	name=$1 setup=$2
	shift 2
	$setup "$kside"
	$setup "$mnt"
	list=""
	for spec in "$@"; do
		g=${spec%%:*} t=${spec#*:}
		busy "$kside" "$g" "$t"
		kp=$busy_pid
		busy "$mnt" "$g" "$t" "$cside"
		list="$list $g:$kp:$busy_pid"
	done
	sleep 1
	start=""
	for e in $list; do
		kp=$(echo "$e" | cut -d: -f2) cp=$(echo "$e" | cut -d: -f3)
		start="$start $(cpu_ns "$kp"):$(cpu_ns "$cp")"
	done
	t0=$(date +%s.%N)
	sleep "$secs"
	t1=$(date +%s.%N)
	set -- $start
	ksum=0 csum=0
	for e in $list; do
		g=${e%%:*} rest=${e#*:}
		kp=${rest%%:*} cp=${rest#*:}
		s=$1
		shift
		k0=${s%%:*} c0=${s#*:}
		k1=$(cpu_ns "$kp") c1=$(cpu_ns "$cp")
		ksum=$((ksum + k1 - k0)) csum=$((csum + c1 - c0))
		row "$name: $g" "$g" "$((k1 - k0))" "$((c1 - c0))"
	done
	# The parent the groups share (the hierarchy's /tenant): their sum.
	[ -z "${total:-}" ] || row "$name: $total (all)" "$total" "$ksum" "$csum"
	for p in $pids; do kill -9 "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	pids=""
	sleep 0.2
	find "$kside" -mindepth 1 -depth -type d -exec rmdir {} \;
	for g in $(cd "$mnt" && find . -mindepth 1 -type d | sort -r); do rmdir "$mnt/$g"; done
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
run "seed 008 ex2, 2 CPUs" ex2 /ex2:2
run "seed 008 ex3, 20%" ex3 /ex3:2
total=/tenant run "hierarchy" tenant /tenant/web:2 /tenant/batch:2
echo "(cores over ${secs} s, both at once on $(nproc) CPUs; ratio = cfsbw / kernel)"
