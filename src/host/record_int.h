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
	uint8_t exec;      /* REC_COMM: given by exec (the thread runs) */
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

/* The fallback: CPU clocks read every millisecond (record_poll.c). */
struct poll_thread {
	pid_t pid, tid, parent;
	int fd;           /* its schedstat, open */
	int64_t exec_ns;  /* CPU time at the last sample */
	int64_t end_guess; /* an open run's start + the CPU time since */
	int64_t last_out;  /* where its last run ended */
	bool running, fresh;
	char comm[16];
};

struct rec_poll {
	struct poll_thread *t;
	size_t nr, cap;
	int64_t last_ns; /* the last sample */
	unsigned tick;
	uint64_t seq;
};

#define POLL_TICK_NS 1000000

/* Track a thread (parent: the thread that created it).  from_now: it is
 * known already (no FORK record), and only CPU time from now counts. */
int cfsbw_host__poll_add(struct rec_poll *p, pid_t pid, pid_t tid,
			 pid_t parent, bool from_now);
/* One sample of every tracked thread (and, every 5 ms, new ones). */
void cfsbw_host__poll_sample(struct rec_poll *p, rec_raw_fn *fn, void *ctx);
void cfsbw_host__poll_close(struct rec_poll *p);

/* The recorder (record.c): threads seen and the trace's lines. */
struct thread {
	pid_t tid, pid;
	char comm[16];
	int64_t first_ns; /* its events exist from then on */
	int64_t in_ns;    /* switched in at; -1: not running */
	bool exited;
};

/* One line of the trace, before sorting. */
enum line_kind { L_THREAD, L_RUN, L_EXIT };
struct line {
	int64_t start_ns, end_ns;
	uint32_t thread; /* index into threads */
	uint8_t kind;
	uint8_t preempted;
};

struct recorder {
	struct thread *threads;
	size_t nr_threads, cap_threads;
	uint32_t *index; /* open addressing on tid: thread index + 1 */
	size_t index_cap;
	struct line *lines;
	size_t nr_lines, cap_lines;
	struct rec_raw *pending; /* read, not applied yet */
	size_t nr_pending, cap_pending;
	struct rec_perf perf;
	struct rec_poll poll;
	bool polling; /* the fallback: CPU clocks read every 1 ms */
	int64_t t0;
	bool oom;
};

/* Write the trace (record_write.c); 0 or -1 (errno set). */
struct cfsbw_host_record_config;
struct cfsbw_host_record_result;
int cfsbw_host__record_write(struct recorder *rec,
			     const struct cfsbw_host_record_config *c,
			     int64_t end_ns, struct cfsbw_host_record_result *r);

#endif
