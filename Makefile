# cfsbw: one non-recursive Makefile.
#
#   make                 library, command and tests, into $(BUILD)
#   make test            every test; ends with "N passed, N failed"
#   make test-fast       core and simulator tests only (seconds), same ending
#   make bench           benchmarks (never part of make test);
#                        KILL_TRIALS=N for the kill -9 soak (default 1000)
#   make fuzz            each libFuzzer harness of tests/fuzz/ for
#                        FUZZ_SECONDS (default 60), with clang, ASan, UBSan
#   make demo            the main job: cfsbw demo
#   make install         PREFIX=/usr/local DESTDIR=
#   make CC=clang        any C11 compiler
#   make SANITIZE=address,undefined   sanitizer build (its own BUILD dir)
#   make MODE=debug      -O0 -g
#   make STATIC=         a dynamically linked cfsbw command
#   make PGO=            no profile-guided optimisation (gcc release builds
#                        have it: tools/pgo_train.c)

CC ?= cc
MODE ?= release
SANITIZE ?=
PREFIX ?= /usr/local
DESTDIR ?=

ifeq ($(SANITIZE),)
BUILD ?= build
else
BUILD ?= build/san
endif

WARNINGS := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wconversion -Wsign-conversion -Wformat=2 -Wundef \
	-Wvla -Wimplicit-fallthrough -Wswitch-enum -Wcast-qual -Wwrite-strings \
	-Werror

# -O3: the simulator's event loop runs 2-3% faster than at -O2
# (bench_sim issue, alternated; docs/sim-history.md "Speed"), the same
# output.
ifeq ($(MODE),debug)
OPT := -O0 -g3
else
OPT := -O3 -g
endif

CFLAGS ?= $(OPT)

# Link-time optimisation with gcc (not under sanitizers, not in a debug
# build): at every event the simulator calls the core across files (a
# charge, "is it throttled?"), and inlined there the issue's case of
# bench_sim runs 7% faster (docs/sim-history.md "Speed").  Fat objects: the
# installed libcfsbw.a links without LTO too.
ifeq ($(SANITIZE)$(MODE),release)
ifeq ($(shell $(CC) --version 2>/dev/null | grep -c clang),0)
LTO := -flto=auto -ffat-lto-objects
AR := gcc-ar
endif
endif

# BASE_CFLAGS: also the profile-guided build's instrumented compile.
BASE_CFLAGS := -std=c11 $(WARNINGS) $(CFLAGS) -MMD -MP -Iinclude -Isrc
ALL_CFLAGS := $(BASE_CFLAGS) $(LTO)
ALL_LDFLAGS := $(LDFLAGS) $(LTO) $(if $(LTO),$(CFLAGS))
LDLIBS := -lm -pthread

# The command is linked statically (not under a sanitizer, which needs the
# dynamic loader): loading libc and libm was about 1 ms of the 4 ms cfsbw
# spends starting, and a static binary runs in any container or CI image.
ifeq ($(SANITIZE),)
STATIC ?= -static
else
STATIC :=
endif
# Statically linked, libfuse3's dlopen() (for "-o modules=", never used)
# goes to src/cli/static_dl.c instead of the C library's loader, which a
# static binary cannot use reliably and the linker warns about.
comma := ,
STATIC_DL := $(if $(STATIC),-Wl$(comma)--wrap=dlopen$(comma)--wrap=dlsym$(comma)--wrap=dlclose$(comma)--wrap=dlerror)

ifneq ($(SANITIZE),)
ALL_CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
ALL_LDFLAGS += -fsanitize=$(SANITIZE)
endif

# The core and the simulator are plain C11; the host driver, the command,
# the tests and the benchmarks use POSIX and Linux interfaces.
POSIX_CPPFLAGS := -D_GNU_SOURCE

CORE_SRC := $(wildcard src/core/*.c)
SIM_SRC := $(wildcard src/sim/*.c)
HOST_SRC := $(wildcard src/host/*.c)
DAEMON_SRC := $(wildcard src/daemon/*.c)
CLI_SRC := $(wildcard src/cli/*.c)
TEST_SRC := $(wildcard tests/test_*.c)
TEST_LIB_SRC := $(filter-out $(TEST_SRC),$(wildcard tests/*.c))
BENCH_SRC := $(wildcard bench/bench_*.c)
BENCH_LIB_SRC := $(filter-out $(BENCH_SRC),$(wildcard bench/*.c))
# Small programs the tests and benchmarks run as workloads (busy loops,
# threads, fork trees): one program per file, no library.
PROG_SRC := $(wildcard tests/progs/*.c)

LIB_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(CORE_SRC) $(SIM_SRC) $(HOST_SRC))
DAEMON_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(DAEMON_SRC))
CLI_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(CLI_SRC))
TEST_LIB_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(TEST_LIB_SRC))
TEST_BIN := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))
# The tests that need no real process: the core's and the simulator's.
FAST_TEST_BIN := $(filter $(BUILD)/tests/test_core_% $(BUILD)/tests/test_sim%,$(TEST_BIN))
BENCH_BIN := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRC))
BENCH_LIB_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(BENCH_LIB_SRC))
PROG_BIN := $(patsubst tests/progs/%.c,$(BUILD)/tests/progs/%,$(PROG_SRC))

LIB := $(BUILD)/libcfsbw.a
# The daemon layer (src/daemon) is a library of its own: it needs libfuse3,
# which libcfsbw.a's users should not have to link.  libfuse3.a exists, so
# the static command stays static.
DAEMON_LIB := $(BUILD)/libcfsbw_daemon.a
FUSE_CFLAGS := $(patsubst -I%,-isystem %,$(shell pkg-config --cflags fuse3))
FUSE_LIBS := $(shell pkg-config --static --libs fuse3)
DAEMON_TEST_BIN := $(filter $(BUILD)/tests/test_daemon%,$(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC)))
BIN := $(BUILD)/cfsbw

.PHONY: all test test-fast check-symbols bench fuzz fuzz-build demo install uninstall clean

all: $(LIB) $(DAEMON_LIB) $(BIN) $(TEST_BIN) $(BENCH_BIN) $(PROG_BIN)

$(BUILD)/src/host/%.o $(BUILD)/src/cli/%.o $(BUILD)/tests/%.o $(BUILD)/bench/%.o: \
	EXTRA_CPPFLAGS := $(POSIX_CPPFLAGS)
$(BUILD)/src/daemon/%.o: EXTRA_CPPFLAGS := $(POSIX_CPPFLAGS) $(FUSE_CFLAGS)

$(BUILD)/%.o: %.c
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(EXTRA_CPPFLAGS) $(PGO_CFLAGS) -c $< -o $@

# Profile-guided optimisation, in the builds that have LTO: the core and
# the simulator are compiled twice.  First instrumented, into $(PGO_DIR),
# linked with tools/pgo_train.c, which runs the scenarios of scenarios/
# and bench/fidelity/ (never bench_sim's own cases) and leaves its counts
# there; then as every other object, with those counts.  The event loop
# runs 3% (bench_sim issue) to 20% (ticks) faster, the output the same
# (docs/sim-history.md "Speed").  Both compiles of a file are given the same
# auxiliary name (-dumpdir, -dumpbase): gcc names a static function's
# counts after it.  Not when cross-compiling (the trainer must run here);
# make PGO= builds without.
ifneq ($(LTO),)
ifeq ($(filter $(shell uname -m)-%,$(shell $(CC) -dumpmachine 2>/dev/null)),)
PGO ?=
else
PGO ?= 1
endif
endif
ifeq ($(PGO),1)
PGO_DIR := $(BUILD)/pgo
PGO_SRC := $(CORE_SRC) $(SIM_SRC)
PGO_GEN_OBJ := $(patsubst %.c,$(PGO_DIR)/gen/%.o,$(PGO_SRC) tools/pgo_train.c)
PGO_OBJ := $(patsubst %.c,$(BUILD)/%.o,$(PGO_SRC))
PGO_SCENARIOS := $(wildcard scenarios/*.sim bench/fidelity/*.sim)
PGO_PROFILE := $(PGO_DIR)/profile.stamp
pgo_aux = -dumpdir $(abspath $(PGO_DIR)/profile)/ -dumpbase $(subst /,-,$<)

$(PGO_DIR)/gen/%.o: %.c
	@mkdir -p $(@D) $(PGO_DIR)/profile
	$(CC) $(BASE_CFLAGS) -fprofile-generate -fprofile-update=single \
		$(pgo_aux) -c $< -o $@

$(PGO_DIR)/pgo_train: $(PGO_GEN_OBJ)
	$(CC) $(CFLAGS) -fprofile-generate -o $@ $^ $(LDLIBS)

$(PGO_PROFILE): $(PGO_DIR)/pgo_train $(PGO_SCENARIOS)
	rm -f $(PGO_DIR)/profile/*.gcda
	$(PGO_DIR)/pgo_train $(PGO_SCENARIOS)
	touch $@

$(PGO_OBJ): $(PGO_PROFILE)
$(PGO_OBJ): PGO_CFLAGS = -fprofile-use -fprofile-partial-training \
	-Wno-missing-profile $(pgo_aux)
endif

$(LIB): $(LIB_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(DAEMON_LIB): $(DAEMON_OBJ)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(BIN): $(CLI_OBJ) $(DAEMON_LIB) $(LIB)
	$(CC) $(ALL_LDFLAGS) $(STATIC) $(STATIC_DL) -o $@ $(CLI_OBJ) $(DAEMON_LIB) $(LIB) $(FUSE_LIBS) $(LDLIBS)

$(DAEMON_TEST_BIN): $(BUILD)/tests/%: $(BUILD)/tests/%.o $(TEST_LIB_OBJ) $(DAEMON_LIB) $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(TEST_LIB_OBJ) $(DAEMON_LIB) $(LIB) $(FUSE_LIBS) $(LDLIBS)

# Objects made only through the pattern rules below would be intermediate
# files, deleted after each link and rebuilt by every make: keep them.
.SECONDARY: $(TEST_BIN:%=%.o) $(TEST_LIB_OBJ) $(BENCH_BIN:%=%.o) \
	$(BENCH_LIB_OBJ) $(PROG_BIN:%=%.o)

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(TEST_LIB_OBJ) $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(TEST_LIB_OBJ) $(LIB) $(LDLIBS)

$(BUILD)/tests/progs/%: $(BUILD)/tests/progs/%.o
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(LDLIBS)

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(BENCH_LIB_OBJ) $(LIB)
	$(CC) $(ALL_LDFLAGS) -o $@ $< $(BENCH_LIB_OBJ) $(LIB) $(LDLIBS)

# Each test program prints one line per test and a final
# "# N passed, N failed"; tests/run.sh adds them up.
# The test programs find the command in CFSBW_BIN and the workload programs
# in CFSBW_PROGS.
TEST_ENV := CFSBW_BIN=$(abspath $(BIN)) CFSBW_PROGS=$(abspath $(BUILD)/tests/progs)

test: $(TEST_BIN) $(BIN) $(PROG_BIN)
	@$(TEST_ENV) CFSBW_BUILD=$(BUILD) sh tests/run.sh $(TEST_BIN) tests/check_symbols.sh

# The core's file-level call graph (from nm) and the library's names: the
# checks of tests/check_symbols.sh, with the graph printed.
check-symbols: $(LIB)
	@CFSBW_BUILD=$(BUILD) sh tests/check_symbols.sh --graph

# The simulator's tests also run `cfsbw sim`, hence the command.
test-fast: $(FAST_TEST_BIN) $(BIN)
	@$(TEST_ENV) CFSBW_BUILD=$(BUILD) sh tests/run.sh $(FAST_TEST_BIN) tests/check_symbols.sh

# Benchmarks: each bench/bench_*.c program, then each bench/*.sh script.
# KILL_TRIALS: the kill -9 soak's trials of cfsbw run (bench/bench_kill.c),
# about 1.2 s each, and a fifth as many of cfsbw daemon.
KILL_TRIALS ?= 1000

bench: $(BENCH_BIN) $(BIN) $(PROG_BIN)
	@for b in $(BENCH_BIN); do \
		$(TEST_ENV) CFSBW_KILL_TRIALS=$(KILL_TRIALS) $$b || exit 1; done
	@for s in $(wildcard bench/*.sh); do $(TEST_ENV) sh $$s || exit 1; done

# Fuzzing (tests/fuzz/README.md): each harness is linked with its own copy
# of the library, built by clang with libFuzzer's coverage, ASan and UBSan,
# in build/fuzz.  Each runs FUZZ_SECONDS over its committed seed corpus
# and a scratch corpus of what it finds (in build/fuzz/corpus, never in the
# tree); a finding stops it, leaves the input in FUZZ_ARTIFACTS and fails
# the target.
FUZZ_CC ?= clang
FUZZ_BUILD := build/fuzz
FUZZ_SECONDS ?= 60
FUZZ_ARTIFACTS ?= $(FUZZ_BUILD)/artifacts/
FUZZ_FLAGS := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(patsubst tests/fuzz/%.c,$(FUZZ_BUILD)/%,$(FUZZ_SRC))
FUZZ_LIB_OBJ := $(patsubst $(BUILD)/%,$(FUZZ_BUILD)/%,$(LIB_OBJ))
FUZZ_DAEMON_OBJ := $(patsubst $(BUILD)/%,$(FUZZ_BUILD)/%,$(DAEMON_OBJ))
# The command's files but main.c, as an archive: a CLI harness includes the
# one file whose static parsers it calls, and the linker takes from here
# only what that file needs besides.
FUZZ_CLI_OBJ := $(filter-out %/main.o,$(patsubst $(BUILD)/%,$(FUZZ_BUILD)/%,$(CLI_OBJ)))
FUZZ_CLI_LIB := $(FUZZ_BUILD)/libcli.a
FUZZ_DAEMON_LIB := $(FUZZ_BUILD)/libdaemon.a

$(FUZZ_BUILD)/src/daemon/%.o $(FUZZ_BUILD)/src/cli/%.o $(FUZZ_BUILD)/fuzz_%: \
	FUZZ_EXTRA_CFLAGS := $(FUSE_CFLAGS)

$(FUZZ_CLI_LIB): $(FUZZ_CLI_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

$(FUZZ_DAEMON_LIB): $(FUZZ_DAEMON_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

$(FUZZ_BUILD)/src/%.o: src/%.c
	@mkdir -p $(@D)
	$(FUZZ_CC) -std=c11 $(WARNINGS) -O1 -g -MMD -MP -Iinclude -Isrc \
		-D_GNU_SOURCE $(FUZZ_EXTRA_CFLAGS) \
		-fsanitize=fuzzer-no-link,address,undefined \
		-fno-sanitize-recover=all -fno-omit-frame-pointer -c $< -o $@

$(FUZZ_BUILD)/%: tests/fuzz/%.c tests/fuzz/fuzz.h $(FUZZ_LIB_OBJ) \
		$(FUZZ_CLI_LIB) $(FUZZ_DAEMON_LIB)
	@mkdir -p $(@D)
	$(FUZZ_CC) -std=c11 $(WARNINGS) -O1 -g -MMD -MP -Iinclude -Isrc \
		-D_GNU_SOURCE $(FUZZ_EXTRA_CFLAGS) $(FUZZ_FLAGS) -o $@ $< \
		$(FUZZ_CLI_LIB) $(FUZZ_DAEMON_LIB) $(FUZZ_LIB_OBJ) \
		$(FUSE_LIBS) -lm -pthread

.SECONDARY: $(FUZZ_LIB_OBJ) $(FUZZ_DAEMON_OBJ) $(FUZZ_CLI_OBJ)

fuzz-build: $(FUZZ_BIN)

fuzz: $(FUZZ_BIN)
	@mkdir -p $(FUZZ_ARTIFACTS)
	@for b in $(FUZZ_BIN); do \
		n=$${b##*/fuzz_}; \
		mkdir -p $(FUZZ_BUILD)/corpus/$$n; \
		echo "== $$b: $(FUZZ_SECONDS) s"; \
		$$b -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
			-print_final_stats=1 -close_fd_mask=1 \
			-artifact_prefix=$(FUZZ_ARTIFACTS)$$n- \
			$$(cat tests/fuzz/$$n.options 2>/dev/null) \
			$(FUZZ_BUILD)/corpus/$$n tests/fuzz/corpus/$$n || exit 1; \
	done

demo: $(BIN)
	$(BIN) demo

install: $(LIB) $(DAEMON_LIB) $(BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig \
		$(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/cfsbw
	install -m 644 $(LIB) $(DESTDIR)$(PREFIX)/lib/libcfsbw.a
	install -m 644 include/*.h $(DESTDIR)$(PREFIX)/include/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(shell sed -n 's/^#define CFSBW_VERSION "\(.*\)"/\1/p' include/cfsbw.h)|' \
		cfsbw.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/cfsbw.pc
	if [ -f man/cfsbw.1 ]; then install -m 644 man/cfsbw.1 $(DESTDIR)$(PREFIX)/share/man/man1/; fi

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/cfsbw $(DESTDIR)$(PREFIX)/lib/libcfsbw.a \
		$(DESTDIR)$(PREFIX)/lib/pkgconfig/cfsbw.pc \
		$(DESTDIR)$(PREFIX)/share/man/man1/cfsbw.1
	for h in include/*.h; do rm -f $(DESTDIR)$(PREFIX)/$$h; done

clean:
	rm -rf build

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
