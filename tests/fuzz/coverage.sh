#!/bin/sh
# tests/fuzz/coverage.sh [CORPUS_ROOT] - the line coverage each fuzzer's
# corpus reaches, with clang's source-based coverage (no sanitizers).
#
# Builds every harness of tests/fuzz/ with -fprofile-instr-generate
# -fcoverage-mapping into build/fuzz-cov, runs each once over
# CORPUS_ROOT/NAME (default build/fuzz/corpus, what `make fuzz` keeps) and
# its seeds tests/fuzz/corpus/NAME, and prints llvm-cov's summary of the
# files that harness is about.  Needs clang, llvm-profdata, llvm-cov.
set -eu
cd "$(dirname "$0")/../.."
corpus=${1:-build/fuzz/corpus}
out=build/fuzz-cov
cc=${FUZZ_CC:-clang}
profdata=$(command -v llvm-profdata || command -v llvm-profdata-14)
llvmcov=$(command -v llvm-cov || command -v llvm-cov-14)
flags="-std=c11 -O1 -g -Iinclude -Isrc -D_GNU_SOURCE
	$(pkg-config --cflags fuse3) -fprofile-instr-generate -fcoverage-mapping"

mkdir -p "$out/obj"
lib_objs=
for src in src/core/*.c src/sim/*.c src/host/*.c; do
	o="$out/obj/$(echo "$src" | tr / _).o"
	$cc $flags -fsanitize=fuzzer-no-link -c "$src" -o "$o"
	lib_objs="$lib_objs $o"
done
for layer in cli daemon; do
	rm -f "$out/lib$layer.a"
	for src in src/$layer/*.c; do
		[ "$src" = src/cli/main.c ] && continue
		o="$out/obj/$(echo "$src" | tr / _).o"
		$cc $flags -fsanitize=fuzzer-no-link -c "$src" -o "$o"
		ar rcs "$out/lib$layer.a" "$o"
	done
done

for h in tests/fuzz/fuzz_*.c; do
	name=$(basename "$h" .c)
	n=${name#fuzz_}
	$cc $flags -fsanitize=fuzzer -o "$out/$name" "$h" "$out/libcli.a" \
		"$out/libdaemon.a" $lib_objs $(pkg-config --static --libs fuse3) \
		-lm -pthread
	rm -f "$out/$n.profraw"
	dirs=tests/fuzz/corpus/$n
	[ -d "$corpus/$n" ] && dirs="$corpus/$n $dirs"
	LLVM_PROFILE_FILE="$out/$n.profraw" "$out/$name" -runs=0 \
		-close_fd_mask=3 $dirs >"$out/$n.log" 2>&1
	"$profdata" merge -sparse "$out/$n.profraw" -o "$out/$n.profdata"
	case $n in
	files) what=src/core ;;
	scenario) what="src/sim src/core" ;;
	cli_run) what=src/cli/cmd_run.c ;;
	cli_sim) what="src/cli/cmd_sim.c src/cli/sim_load.c" ;;
	daemon) what="src/daemon/socket.c src/daemon/control.c" ;;
	replay) what="src/sim/replay.c src/sim/trace_cfsbw.c src/sim/trace_perf.c src/sim/rtapp.c" ;;
	*) what=src ;;
	esac
	echo "== $name: $(ls $dirs | wc -l) inputs"
	# shellcheck disable=SC2086
	"$llvmcov" report "$out/$name" -instr-profile="$out/$n.profdata" \
		$what | tail -n 1 | awk '{ printf "%s lines %s of %s covered (%s)\n", "'"$what"'", $8 - $9, $8, $10 }'
done
