#!/bin/sh
# The library's names and the core's shape, read from the objects with nm
# (issue 13).  Prints one "ok NAME" or "FAIL NAME" line per check and the
# closing "# N passed, N failed" line that tests/run.sh adds up.
#
#   CFSBW_BUILD=build tests/check_symbols.sh [--graph] [LAYER...]
#
# names_LAYER: every name the objects of src/LAYER export starts with the
#   layer's prefix (core: cfsbw_ and cfsbw__ for internals; sim:
#   cfsbw_sim_; host: cfsbw_host_; daemon: cfsbw_daemon_), and so none
#   starts with "__" (reserved in C).  By default every layer of
#   libcfsbw.a (LAYERS below); name others (cli) to see them.
# names_library: the same for libcfsbw.a as a whole: every name it exports
#   starts with "cfsbw_", so a layer the list above misses is caught too.
# core_files_call_one_way: the file-level call graph of src/core (an edge
#   from a file to each core file defining a name it uses) has no loop.
# --graph prints that graph, one "caller -> callee" line per edge.
build=${CFSBW_BUILD:-build}
graph=
if [ "$1" = "--graph" ]; then
	graph=1
	shift
fi
LAYERS=${*:-core sim host daemon}
passed=0
failed=0
result() { # result NAME STATUS
	if [ "$2" -eq 0 ]; then
		echo "ok   $1 [issue-13]"
		passed=$((passed + 1))
	else
		echo "FAIL $1 [issue-13]"
		failed=$((failed + 1))
	fi
}

identifiers='NF == 3 && $3 ~ /^[A-Za-z_][A-Za-z0-9_]*$/ { print $3 }'

# The objects of a layer: one per source file (a stale object of a
# removed source is not read).
objects() {
	for c in src/"$1"/*.c; do
		[ -f "$c" ] && echo "$build/src/$1/$(basename "$c" .c).o"
	done
}

# Defined, exported names of a layer's objects: C identifiers only (a
# sanitizer adds names of its own such as "__odr_asan.cfsbw_sim__ops").
exported() {
	for o in $(objects "$1"); do
		if [ -f "$o" ]; then
			nm -g --defined-only "$o" | awk "$identifiers"
		else
			echo "(no object $o)"
		fi
	done
}

for layer in $LAYERS; do
	dir=$build/src/$layer
	case $layer in
	core) pattern='^cfsbw_' not='^cfsbw_(sim|host|daemon)_' ;;
	*) pattern="^cfsbw_${layer}_" not='^$' ;;
	esac
	names=$(exported "$layer")
	bad=$(printf '%s\n' "$names" | grep -Ev "$pattern" | grep -v '^$')
	bad="$bad$(printf '%s\n' "$names" | grep -E "$not")"
	if [ -z "$names" ]; then
		echo "    no exported names read from $dir/*.o"
		result "names_$layer" 1
	elif [ -n "$bad" ]; then
		echo "    $dir: exported without the layer's prefix:"
		printf '%s\n' "$bad" | sort -u | sed 's/^/      /'
		result "names_$layer" 1
	else
		result "names_$layer" 0
	fi
done

lib=$build/libcfsbw.a
names=$(nm -g --defined-only "$lib" 2>/dev/null | awk "$identifiers")
bad=$(printf '%s\n' "$names" | grep -v '^cfsbw_' | grep -v '^$')
if [ -z "$names" ]; then
	echo "    no exported names read from $lib"
	result names_library 1
elif [ -n "$bad" ]; then
	echo "    $lib: exported without a layer's prefix:"
	printf '%s\n' "$bad" | sort -u | sed 's/^/      /'
	result names_library 1
else
	result names_library 0
fi

# The core's call graph: name -> defining file, then each file's uses.
defs=$(mktemp)
edges=$(mktemp)
trap 'rm -f "$defs" "$edges"' EXIT
for o in $(objects core); do
	f=$(basename "$o" .o).c
	nm -g --defined-only "$o" | awk -v f="$f" 'NF == 3 { print $3, f }'
done | sort >"$defs"
for o in $(objects core); do
	f=$(basename "$o" .o).c
	nm -u "$o" | awk '{ print $2 }' | sort | join - "$defs" |
		awk -v f="$f" '$2 != f { print f, $2 }'
done | sort -u >"$edges"
[ -n "$graph" ] && sed 's/ / -> /' "$edges"
if [ ! -s "$defs" ] || [ ! -s "$edges" ]; then
	echo "    no core objects read in $build/src/core"
	result core_files_call_one_way 1
elif ! tsort "$edges" >/dev/null 2>&1; then
	echo "    src/core files that call each other in a loop:"
	tsort "$edges" 2>&1 >/dev/null | sed 's/^/      /'
	result core_files_call_one_way 1
else
	result core_files_call_one_way 0
fi
echo "# $passed passed, $failed failed"
[ "$failed" -eq 0 ]
