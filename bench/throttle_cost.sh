#!/bin/sh
# throttle_cost.sh - what being throttled costs the throttled work in CPU.
# The simulator replays a recording's CPU as it was taken without a limit
# (issue 14: a build replayed under --cpus 0.5 against `cfsbw run`); if
# the same work takes more CPU when it is stopped and resumed every
# period, the replay is early by that much, and the simulator cannot know
# it.  This measures it: two copies of a fixed piece of work at once on
# this machine (as make -j2 runs two compilers), with no limit and held to
# half a CPU at three periods (500 ms, cfsbw run's default under v4;
# 100 ms, Linux's default; 10 ms), by the kernel (a cgroup, as root) and
# by cfsbw run, alternated over ROUNDS rounds.  Two pieces of work:
#   compile   $CC -O2 of src/sim/machine.c, COMPILES times a copy (a
#             compiler's cache and TLB footprint, what a build does)
#   compute   an awk loop (a few kilobytes of data: the machine's speed
#             alone, to tell lost caches from a slower processor)
# Each figure is the user + system CPU of the two copies (the shell's
# `times`), and beside it the median's change against the median of
# the runs with no limit.
#
#   sh bench/throttle_cost.sh            (from the source tree, after make)
#   THROTTLE_COST_ROUNDS=5 sh bench/throttle_cost.sh
set -eu

bin=${CFSBW_BIN:-$(pwd)/build/cfsbw}
cc=${CC:-cc}
rounds=${THROTTLE_COST_ROUNDS:-3}
compiles=${THROTTLE_COST_COMPILES:-12}
src=$(pwd)
work=$(mktemp -d /tmp/cfsbw-throttle-cost-XXXXXX)
. "$(dirname "$0")/lib/shield.sh"
kroot=$shield_kroot
klim=""
cleanup() {
	[ -z "$klim" ] || rmdir "$klim" 2>/dev/null || true
	rm -rf "$work"
	shield_leave
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP PIPE

if [ ! -x "$bin" ]; then
	echo "throttle_cost: $bin: not built (make)" >&2
	exit 1
fi
if [ ! -f "$src/src/sim/machine.c" ]; then
	echo "throttle_cost: run from the source tree (no src/sim/machine.c here)" >&2
	exit 1
fi
if ! "$cc" -std=c11 -O2 -I"$src/include" -I"$src/src" -c \
	"$src/src/sim/machine.c" -o "$work/probe.o" 2>"$work/cc.log"; then
	cat "$work/cc.log" >&2
	echo "throttle_cost: $cc cannot compile src/sim/machine.c" >&2
	exit 1
fi

# As the other benchmarks, shielded (lib/shield.sh); the kernel's limits
# are groups inside the shield.
kernel=""
if [ "$(id -u)" = 0 ] && [ -w "$kroot/cgroup.procs" ]; then
	kernel=v1
	shield_enter cfsbw-bench-throttle-cost
elif [ "$(id -u)" = 0 ] &&
	grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
	kernel=v2
fi

# One copy of each piece of work, as a shell command; $1 names its output.
copy_compile() {
	echo "i=0; while [ \$i -lt $compiles ]; do $cc -std=c11 -O2" \
		"-I$src/include -I$src/src -c $src/src/sim/machine.c" \
		"-o $work/$1.o || exit 1; i=\$((i + 1)); done"
}
copy_compute() {
	echo "awk 'BEGIN { for (i = 0; i < 30000000; i++) s += i % 7;" \
		"if (s < 0) print s }'"
}

# Two copies at once, then the CPU of the two (the second line of
# `times`: the reaped children), in ms; "failed" if a copy failed.
pair_script() {
	echo "($($1 a)) & a=\$!; ($($1 b)) & b=\$!;" \
		"wait \$a || echo failed; wait \$b || echo failed; times"
}
cpu_ms() {
	awk '$1 == "failed" { f = 1 } $1 ~ /^[0-9]+m/ { l[++n] = $0 }
	END {
		if (f || n < 2) { print "failed"; exit }
		split(l[2], c, " "); split(c[1], u, "m"); split(c[2], y, "m")
		printf "%d", ((u[1] * 60 + u[2]) + (y[1] * 60 + y[2])) * 1000 }'
}

# run WORK SETTING: the pair under SETTING (free, kernel:PERIOD_US,
# cfsbw:PERIOD_US), its CPU in ms
run() {
	script=$(pair_script "copy_$1")
	case $2 in
	free)
		sh -c "$script" | cpu_ms
		;;
	kernel:*)
		p=${2#kernel:}
		if [ "$kernel" = v1 ]; then
			klim=${shield:-$kroot}/cfsbw-bench-throttle-cost-lim-$$
			mkdir "$klim"
			echo "$p" > "$klim/cpu.cfs_period_us"
			echo $((p / 2)) > "$klim/cpu.cfs_quota_us"
		else
			klim=/sys/fs/cgroup/cfsbw-bench-throttle-cost-lim-$$
			mkdir "$klim"
			echo "$((p / 2)) $p" > "$klim/cpu.max"
		fi
		sh -c "echo \$\$ > $klim/cgroup.procs && { $script; }" |
			cpu_ms
		rmdir "$klim"
		klim=""
		;;
	cfsbw:*)
		p=${2#cfsbw:}
		"$bin" run --cpus 0.5 --period "${p}us" -- sh -c "$script" |
			cpu_ms
		;;
	esac
}

settings="cfsbw:500000 cfsbw:100000 cfsbw:10000"
[ -z "$kernel" ] ||
	settings="kernel:500000 kernel:100000 kernel:10000 $settings"
settings="free $settings"

# half of period $1 (us) per $1, in ms
per() { echo "$(($1 / 2000)) ms per $(($1 / 1000)) ms"; }
label() {
	case $1 in
	free) echo "no limit" ;;
	kernel:*) echo "the kernel, $(per "${1#kernel:}")" ;;
	cfsbw:*) echo "cfsbw run, $(per "${1#cfsbw:}")" ;;
	esac
}

median() {
	sort -n | awk '{ v[NR] = $1 } END {
		if (NR % 2) print v[(NR + 1) / 2]
		else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

shielded=""
[ -z "$shield" ] || shielded=", shielded (cpu.shares 262144)"
echo "== what being throttled costs in CPU: two copies of fixed work at" \
	"once, $(nproc) CPUs, half a CPU between them$shielded"
[ -n "$kernel" ] || echo "   the kernel's limits: not run (needs root" \
	"and cgroup v1 cpu or v2 cpu.max)"
echo "   before: load $(cut -d' ' -f1-3 /proc/loadavg)"
for w in compile compute; do
	: > "$work/$w.cpu"
	r=1
	while [ "$r" -le "$rounds" ]; do
		# the runs with no limit at both ends of each round, so that
		# the machine's drift within a round falls on both sides
		for s in $settings free; do
			ms=$(run "$w" "$s")
			if [ "$ms" = failed ]; then
				echo "throttle_cost: $w under $(label "$s") failed" >&2
				exit 1
			fi
			echo "$s $ms" >> "$work/$w.cpu"
		done
		r=$((r + 1))
	done
	case $w in
	compile) what="$cc -O2 of machine.c, $compiles times a copy" ;;
	compute) what="an awk loop, 3e7 iterations a copy" ;;
	esac
	echo "   $w ($what): CPU of the two copies, s, $rounds rounds"
	base=$(awk '$1 == "free" { print $2 }' "$work/$w.cpu" | median)
	for s in $settings; do
		vals=$(awk -v s="$s" '$1 == s {
			printf "%s%.2f", sep, $2 / 1000; sep = " " }' \
			"$work/$w.cpu")
		med=$(awk -v s="$s" '$1 == s { print $2 }' "$work/$w.cpu" |
			median)
		printf "     %-32s %s  %+.1f%%\n" "$(label "$s")" "$vals" \
			"$(awk -v a="$med" -v b="$base" \
				'BEGIN { print (a - b) * 100 / b }')"
	done
done
echo "   after: load $(cut -d' ' -f1-3 /proc/loadavg)"
