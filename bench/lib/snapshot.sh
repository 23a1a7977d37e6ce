# snapshot PID...: one line, the time (s since the epoch, ns digits) then
# each process's CPU time in ns (all its threads, from schedstat), read by
# one awk over every file at nearly one instant: a few ms for 20
# processes, where a subshell and a cat per process took about 40 ms a
# pass, which a window taken apart from the reads did not cover.  Sourced
# by the bench scripts.
snapshot() {
	files=""
	for p in "$@"; do files="$files /proc/$p/task/*/schedstat"; done
	# shellcheck disable=SC2086
	awk -v t="$(date +%s.%N)" 'BEGIN { printf "%s", t }
		FNR == 1 { split(FILENAME, f, "/"); if (f[3] != pid) { if (pid != "") printf " %.0f", s; pid = f[3]; s = 0 } }
		{ s += $1 }
		END { printf " %.0f\n", s }' $files 2>/dev/null
}
