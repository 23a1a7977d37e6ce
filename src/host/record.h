/*
 * record.h - `cfsbw record`: each thread's run and sleep intervals of a
 * command or a running process, written in the cfsbw trace format
 * (man/cfsbw.1; replay in docs/sim.md, "Replaying real workloads").  Used
 * by src/cli/cmd_record.c.
 *
 * The kernel reports every context switch of the recorded threads and their
 * descendants (perf_event_open: a software dummy event with context_switch,
 * inherited by new threads and processes), with CLOCK_MONOTONIC times in
 * nanoseconds, into ring buffers this process reads: no root needed when
 * /proc/sys/kernel/perf_event_paranoid is 2 or lower (the default of
 * mainline Linux) and the process is the user's own.
 */
#ifndef CFSBW_HOST_RECORD_H
#define CFSBW_HOST_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct cfsbw_host_record_config {
	pid_t pid;          /* record this process, all its threads; or 0 */
	char *const *argv;  /* or start this command (pid 0) */
	int64_t duration_ns; /* stop after this long; 0: when it exits */
	FILE *out;          /* the trace */
	const char *what;   /* for the trace's header: the command line */
	bool poll;          /* read CPU clocks every 1 ms, no perf events */
};

struct cfsbw_host_record_result {
	int exit_status;       /* the command's, shell style: 128 + N for signal N */
	bool exited;           /* the command or process ended while recorded */
	uint64_t threads;      /* threads seen */
	uint64_t runs;         /* run lines written */
	uint64_t lost;         /* switch records the kernel dropped (buffer full) */
	int64_t length_ns;     /* the trace's length */
	int64_t recorded_cpu_ns; /* sum of the run lines */
	int64_t own_cpu_ns;    /* this process's CPU time while recording */
	/* the command's processes' CPU time by the kernel's count (wait4's
	 * rusage: user + system of the command and every descendant waited
	 * for), when the command ended while recorded; else -1 */
	int64_t tree_cpu_ns;
	bool polled;           /* recorded by reading CPU clocks every 1 ms */
	char note[320];        /* why: the kernel's refusal of perf events */
};

/*
 * Record as configured.  Where the kernel refuses perf events, records by
 * reading the threads' CPU clocks every millisecond instead (r->polled,
 * r->note says why).  Returns 0; or -1 with the reason in err (the
 * command could not start: r->exit_status is 127 or 126 as a shell's; no
 * such process; an I/O error writing the trace).
 */
int cfsbw_host_record(const struct cfsbw_host_record_config *c,
		      struct cfsbw_host_record_result *r, char *err,
		      size_t errlen);

#endif
