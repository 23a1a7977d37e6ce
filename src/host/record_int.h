/*
 * record_int.h - inside `cfsbw record`: the kernel's records of the
 * recorded threads (record_perf.c), read by the recorder (record.c).
 */
#ifndef CFSBW_HOST_RECORD_INT_H
#define CFSBW_HOST_RECORD_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One record of the kernel, decoded. */
enum rec_kind { REC_SWITCH_IN, REC_SWITCH_OUT, REC_FORK, REC_EXIT, REC_COMM };
struct rec_raw {
	int64_t time_ns; /* CLOCK_MONOTONIC */
	uint64_t seq;    /* order of reading, to keep sorting stable */
	uint32_t pid, tid;
	uint32_t parent_tid; /* REC_FORK */
	uint8_t kind;
	uint8_t preempted; /* REC_SWITCH_OUT: still runnable */
	char comm[16];     /* REC_COMM */
};

/* One ring buffer per CPU; every recorded thread has an event per CPU,
 * writing into that CPU's ring (the kernel forbids mmap of an inherited
 * event that follows its thread over all CPUs). */
struct rec_ring {
	int fd;
	void *base;
	size_t size, map_len;
};

struct rec_perf {
	struct rec_ring *rings; /* by CPU; fd -1: CPU offline */
	unsigned nr_cpus;
	int *fds; /* every event */
	size_t nr_fds, cap_fds;
	uint64_t lost; /* records the kernel dropped, buffer full */
	uint64_t seq;
};

int cfsbw_host__perf_init(struct rec_perf *p);
/*
 * Events for thread tid on every CPU (inherited by what it creates).
 * on_exec: enabled when it calls exec.  Returns 0, -ESRCH (no such
 * thread), or -1 with why in err.
 */
int cfsbw_host__perf_open(struct rec_perf *p, pid_t tid, bool on_exec,
			  char *err, size_t errlen);
typedef void rec_raw_fn(void *ctx, const struct rec_raw *r);
/* Hand every record in the rings to fn. */
void cfsbw_host__perf_drain(struct rec_perf *p, rec_raw_fn *fn, void *ctx);
/* Wait up to timeout_ms for a ring to fill a quarter, or also_fd (if not
 * -1) to be readable. */
void cfsbw_host__perf_wait(struct rec_perf *p, int also_fd, int timeout_ms);
void cfsbw_host__perf_close(struct rec_perf *p);

#endif
