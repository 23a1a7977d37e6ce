# shield.sh - the benchmarks' shield, sourced.  As root with cgroup v1's
# cpu, shield_enter moves this shell, and so everything it starts, into a
# kernel group with no limit and the largest cpu.shares (262144): other
# work (each task at 1024) then takes about 0.4% of the CPU the measured
# work wants, and it runs as on a quiet machine.  CFSBW_BENCH_SHIELD=0,
# not root, or no v1 cpu: no shield ($shield stays empty).
shield_kroot=/sys/fs/cgroup/cpu
shield=""

# shield_enter NAME: into $shield_kroot/NAME-PID, which $shield names
shield_enter() {
	if [ "${CFSBW_BENCH_SHIELD:-1}" = 0 ] || [ "$(id -u)" != 0 ] ||
		[ ! -w "$shield_kroot/cgroup.procs" ]; then
		return 0
	fi
	shield=$shield_kroot/$1-$$
	mkdir "$shield"
	echo 262144 > "$shield/cpu.shares"
	echo $$ > "$shield/cgroup.procs"
}

# shield_leave: back into the root group, the shield removed (for an
# EXIT trap: never fails)
shield_leave() {
	[ -n "$shield" ] || return 0
	echo $$ > "$shield_kroot/cgroup.procs"
	rmdir "$shield" 2>/dev/null || true
	shield=""
}
