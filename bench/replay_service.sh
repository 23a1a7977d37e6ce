#!/bin/sh
# replay_service.sh - the planner's question on a real service: what does
# a CPU limit add to its p99?  A one-thread server (`workload server`:
# requests on a fixed Poisson schedule, 10 a second, each 10 ms of CPU on
# average, exponential) is recorded with no limit (`cfsbw record`), then
# run for real under four limits, in the kernel's own cgroup (as root,
# cgroup v1 `cpu`) and under `cfsbw run --policy upstream`, and the
# recording is replayed open loop under each in `cfsbw sim --replay
# --wakeups recorded`.  One line per limit: the server's p50 and p99 (from
# each request's scheduled arrival to its end) on each side, and the
# replay's (from each recorded wake-up to the end of its run).
#
#   sh bench/replay_service.sh                 (from the source tree, after make)
#   SERVICE_SECONDS=60 sh bench/replay_service.sh   (default 30 s a run)
#
# The same schedule and service times at every run: the server's
# generator is seeded.  A request that arrives while the server is busy
# with another is one wake-up in the recording, so the replay has fewer
# latencies than the server has requests; its p99 is of wake-ups.
set -eu

bin=${CFSBW_BIN:-$(pwd)/build/cfsbw}
progs=${CFSBW_PROGS:-$(pwd)/build/tests/progs}
secs=${SERVICE_SECONDS:-30}
server="$progs/workload server 10 10 $secs"
work=$(mktemp -d /tmp/cfsbw-replay-service-XXXXXX)
kroot=/sys/fs/cgroup/cpu
kernel=""
if [ "$(id -u)" = 0 ] && [ -w "$kroot/cgroup.procs" ] && [ -e "$kroot/cpu.cfs_burst_us" ]; then
	kernel=$kroot/cfsbw-bench-service-$$
	mkdir "$kernel"
fi
cleanup() {
	rm -rf "$work"
	[ -n "$kernel" ] && rmdir "$kernel" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# "requests N p50_us A p99_us B max_us C" into "A B" in ms
ms2() { awk '{ printf "%.1f %.1f", $4 / 1000, $6 / 1000 }'; }

echo "== a one-thread server replayed open loop: 10 requests a second, 10 ms of CPU each on average, ${secs} s, $(nproc) CPUs, period 100 ms, upstream policy"
echo "   before: load $(cut -d' ' -f1-3 /proc/loadavg)"
rec=$("$bin" record -o "$work/s.trace" -- $server 2>"$work/rec.err")
echo "   recorded, no limit: $(echo "$rec" | awk '{ print $2 }') requests, p50/p99 $(echo "$rec" | ms2 | tr ' ' /) ms; $(sed 's/^cfsbw record: //' "$work/rec.err")"

printf '   %-12s %-18s %-18s %-18s\n' "quota+burst" "kernel p50/p99" "cfsbw run p50/p99" "replay p50/p99"
for c in 13:0 20:0 32:0 26:26; do
	q=${c%:*}
	b=${c#*:}
	k="-"
	if [ -n "$kernel" ]; then
		g=$kernel/q$q-b$b
		mkdir "$g"
		echo 100000 > "$g/cpu.cfs_period_us"
		echo $((q * 1000)) > "$g/cpu.cfs_quota_us"
		echo $((b * 1000)) > "$g/cpu.cfs_burst_us"
		k=$(sh -c "echo \$\$ > $g/cgroup.procs; exec $server" | ms2 | tr ' ' /)
		rmdir "$g"
	fi
	r=$("$bin" run --policy upstream --period 100ms --quota "${q}ms" \
		--burst "${b}ms" -- $server | ms2 | tr ' ' /)
	s=$("$bin" sim --replay "$work/s.trace" --wakeups recorded \
		--cpus "$(nproc)" --policy upstream \
		--set cpu.cfs_period_us=100ms --set "cpu.cfs_quota_us=${q}ms" \
		--set "cpu.cfs_burst_us=${b}ms" |
		awk '/wakeups=recorded x1/ { printf "%.1f/%.1f", $(NF-4), $(NF-3) }')
	printf '   %-12s %-18s %-18s %-18s\n' "${q}+${b} ms" "$k" "$r" "$s"
done
echo "   after: load $(cut -d' ' -f1-3 /proc/loadavg)"
