/*
 * replay.h - turning recorded runs into the steps a `trace` task replays
 * (replay.c), shared by the readers of each format: trace_cfsbw.c (cfsbw
 * record), trace_perf.c (perf sched timehist) and rtapp.c (rt-app JSON).
 *
 * A thread's runs come in its time order.  A run that ended with the
 * thread still runnable (preempted) is continued by its next run: the gap
 * was a wait for a CPU, which the simulator models itself.  A run that
 * ended blocked is followed by a sleep until the thread was ready again
 * (its next run's start, or the wake-up time when the format has it).
 * Replay is closed loop: the simulated thread sleeps as long as the real
 * one did after each blocking run, however late that run ends.
 */
#ifndef CFSBW_SIM_REPLAY_H
#define CFSBW_SIM_REPLAY_H

#include "sim/sim_int.h"

struct replay_state;

struct replay {
	struct cfsbw_sim_task_spec *t;
	struct cfsbw_sim_error *err;
	struct replay_state *st; /* per thread of t->threads */
	size_t cap, nr_st;
	/* thread id -> index in t->threads + 1 (0: empty), open addressing */
	int64_t *keys;
	size_t *vals;
	size_t hcap, hlen;
};

void cfsbw_sim__replay_init(struct replay *r, struct cfsbw_sim_task_spec *t,
			    struct cfsbw_sim_error *err);
/* Fail with a message naming the line; returns -EINVAL. */
#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 3, 4)))
#endif
int cfsbw_sim__replay_fail(struct replay *r, unsigned line, const char *fmt, ...);
/* A new thread, named "NAME/TID": *idx is its index.  It replaces an
 * earlier thread of the same id in the lookup (ids are reused). */
int cfsbw_sim__replay_new_thread(struct replay *r, int64_t tid,
				 const char *name, unsigned line, size_t *idx);
/* The thread of that id, if any: true and *idx. */
bool cfsbw_sim__replay_find_thread(const struct replay *r, int64_t tid,
				   size_t *idx);
/* Thread idx ended: a later thread of the same id is another thread. */
void cfsbw_sim__replay_exit(struct replay *r, size_t idx);
bool cfsbw_sim__replay_exited(const struct replay *r, size_t idx);
/*
 * Thread idx ran from start_ns to end_ns, then blocked (or, !blocked,
 * was preempted).  ready_ns: when it became runnable before this run, or
 * -1 if the format does not say (then: start_ns).  Runs of a thread must
 * not go back in time; the error names the line.
 */
int cfsbw_sim__replay_run(struct replay *r, size_t idx, int64_t start_ns,
			  int64_t end_ns, int64_t ready_ns, bool blocked,
			  unsigned line);
/* Append a finished step to thread idx (rt-app, which has no runs). */
int cfsbw_sim__replay_step(struct replay *r, size_t idx,
			   const struct cfsbw_sim_trace_step *step,
			   unsigned line);
/* Close every thread's last step, drop threads with no CPU, shift the
 * starts so that the earliest is at 0 (from_zero: for absolute clocks),
 * and set the line's count. */
int cfsbw_sim__replay_finish(struct replay *r, const char *format,
			     bool from_zero);
/*
 * Text helpers of the line-based readers.  cfsbw_sim__replay_line() copies the
 * next line of *p into buf (without its end of line) and counts it; false at
 * the end of the text; *too_long when it did not fit. cfsbw_sim__replay_split()
 * cuts buf at blanks into at most max words: their number, or -1 if more.
 * cfsbw_sim__replay_u64() reads decimal digits only.
 */
bool cfsbw_sim__replay_line(const char **p, char *buf, size_t cap,
			    unsigned *line, bool *too_long);
int cfsbw_sim__replay_split(char *buf, char **tok, int max);
bool cfsbw_sim__replay_u64(const char *s, uint64_t *out);

/* Free what the readers used, and on failure the threads too. */
void cfsbw_sim__replay_done(struct replay *r, int rc);

#endif /* CFSBW_SIM_REPLAY_H */
