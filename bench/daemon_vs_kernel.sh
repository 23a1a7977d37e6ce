#!/bin/sh
# cfsbw daemon's mount against the kernel's cgroup v1 cpu controller, side
# by side: the same tree is made in both with the same mkdir and echo
# commands, the same busy workload is placed in each with echo PID >
# cgroup.procs, both run at the same time (so load from elsewhere falls on
# both alike), and each group's CPU is read from its processes' own CPU
# clocks (/proc/PID/task/*/schedstat) over the same window.
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
mkdir -p "$mnt" "$kdir"
pids=""
dpid=""

cleanup() {
	for p in $pids; do kill -9 "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	pids=""
	# Kernel groups, deepest first (they are empty once the workloads died).
	if [ -d "$kdir" ]; then
		find "$kdir" -mindepth 1 -depth -type d -exec rmdir {} \; 2>/dev/null
		rmdir "$kdir" 2>/dev/null
	fi
	if [ -n "$dpid" ]; then
		kill "$dpid" 2>/dev/null
		wait "$dpid" 2>/dev/null
		dpid=""
	fi
	umount -l "$mnt" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

"$bin" daemon --mount "$mnt" --socket "$tmp/sock" 2>"$tmp/log" &
dpid=$!
i=0
while [ ! -e "$mnt/cpu.stat" ] && [ $i -lt 200 ]; do sleep 0.02; i=$((i + 1)); done
[ -e "$mnt/cpu.stat" ] || { echo "daemon_vs_kernel: cfsbw daemon did not start"; cat "$tmp/log"; exit 1; }

# CPU time of a process's threads, ns.
cpu_ns() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%.0f\n", s}'
}

# busy ROOT GROUP THREADS: start a workload and place it; its pid in
# busy_pid (not a subshell: pids must reach cleanup).
busy() {
	"$work" spin 600 "$3" >/dev/null 2>&1 &
	busy_pid=$!
	pids="$pids $busy_pid"
	echo "$busy_pid" > "$1$2/cgroup.procs" || echo "daemon_vs_kernel: cannot place $busy_pid in $1$2" >&2
}

# One scenario: the caller's setup function runs on both roots, then it
# names "group threads" pairs to load; prints one line per group.
printf '%-34s %8s %8s %8s %7s\n' "scenario: group" "limit" "kernel" "cfsbw" "ratio"
run() {
	name=$1 setup=$2
	shift 2
	$setup "$kdir"
	$setup "$mnt"
	list=""
	for spec in "$@"; do
		g=${spec%%:*} t=${spec#*:}
		busy "$kdir" "$g" "$t"
		kp=$busy_pid
		busy "$mnt" "$g" "$t"
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
	for e in $list; do
		g=${e%%:*} rest=${e#*:}
		kp=${rest%%:*} cp=${rest#*:}
		s=$1
		shift
		k0=${s%%:*} c0=${s#*:}
		k1=$(cpu_ns "$kp") c1=$(cpu_ns "$cp")
		lim=$(cat "$kdir$g/cpu.cfs_quota_us" "$kdir$g/cpu.cfs_period_us" | tr '\n' ' ')
		awk -v n="$name: $g" -v l="$lim" -v k0="$k0" -v k1="$k1" -v c0="$c0" -v c1="$c1" -v t0="$t0" -v t1="$t1" 'BEGIN {
			split(l, q, " "); lim = q[1] < 0 ? "max" : sprintf("%.2f", q[1] / q[2]);
			k = (k1 - k0) / 1e9 / (t1 - t0); c = (c1 - c0) / 1e9 / (t1 - t0);
			r = k > 0 ? c / k : 0; printf "%-34s %8s %8.3f %8.3f %7.3f\n", n, lim, k, c, r }'
	done
	for p in $pids; do kill -9 "$p" 2>/dev/null; done
	for p in $pids; do wait "$p" 2>/dev/null; done
	pids=""
	sleep 0.2
	find "$kdir" -mindepth 1 -depth -type d -exec rmdir {} \;
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
run "hierarchy" tenant /tenant/web:2 /tenant/batch:2
echo "(cores over ${secs} s, both at once on $(nproc) CPUs; ratio = cfsbw / kernel)"
