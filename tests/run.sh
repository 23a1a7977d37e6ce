#!/bin/sh
# Runs each test program, shows its output, and adds up the closing
# "# N passed, N failed" lines into the one plain line make test ends with.
# A program that crashes or prints no closing line counts as one failure.
passed=0
failed=0
for t in "$@"; do
	echo "== $(basename "$t")"
	out=$("$t" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	line=$(printf '%s\n' "$out" | grep -E '^# [0-9]+ passed, [0-9]+ failed$' | tail -n 1)
	if [ -z "$line" ]; then
		echo "FAIL $(basename "$t"): exited with status $rc and no summary"
		failed=$((failed + 1))
		continue
	fi
	p=$(echo "$line" | sed -E 's/^# ([0-9]+) passed, ([0-9]+) failed$/\1/')
	f=$(echo "$line" | sed -E 's/^# ([0-9]+) passed, ([0-9]+) failed$/\2/')
	if [ "$f" -eq 0 ] && [ "$rc" -ne 0 ]; then
		echo "FAIL $(basename "$t"): exited with status $rc"
		f=1
	fi
	passed=$((passed + p))
	failed=$((failed + f))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
