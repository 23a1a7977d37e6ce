/*
 * host.h - the host driver: holds real processes to a group's CPU budget.
 *
 * Process mode (SPEC section 7): every process of the governed group is a
 * runqueue of the core with its own local account (SPEC section 1).  The
 * driver reads each process's CPU time from the kernel's per-process CPU
 * clock, arms a CPU-time timer on that clock for the runtime the account
 * holds and a share of the pool (so it learns that the runtime is spent
 * within one kernel tick, without polling), stops a throttled process and
 * resumes it when the period timer refreshes the pool (R7, R10).
 * Descendants join the group the moment they are created: the driver is
 * their ptrace tracer (PTRACE_SEIZE with fork, vfork and clone events); see
 * docs/host.md for why.
 *
 * Stopping is a ptrace stop (PTRACE_INTERRUPT of every thread), never
 * SIGSTOP: when the driver dies, even of SIGKILL, the kernel detaches every
 * tracee and wakes those in a ptrace stop, so no process is left stopped.
 *
 * The driver is single-threaded: one event loop (one signalfd for every
 * event: child stops and exits, POSIX timers, signals) makes every call
 * into the core, so the core's serialization rules hold
 * trivially.  It owns the core tree it creates; the caller configures the
 * governed group through the file interface (cfsbw_file_write) before
 * starting processes, with times from cfsbw_host_now_ns().
 *
 * Errors: 0 or a negative errno, as in the core.
 */
#ifndef CFSBW_HOST_H
#define CFSBW_HOST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cfsbw.h"

struct cfsbw_host;

/* Called every cfsbw_host_config.stat_interval_ns while the loop runs. */
typedef void cfsbw_host_stat_fn(void *ctx, struct cfsbw_host *h);

struct cfsbw_host_config {
	enum cfsbw_policy policy;
	/* 0: no periodic report; otherwise the interval, ns. */
	int64_t stat_interval_ns;
	cfsbw_host_stat_fn *on_stat;
	void *ctx;
	/*
	 * false: the run ends when the command (or the --pid process) exits,
	 * and descendants it leaves behind are released, as timeout(1) does.
	 * true: they stay governed until the last of them exits, as in a
	 * cgroup; a signal that a process sends to the driver after the
	 * command has exited is passed to each of them (before, it goes to
	 * the command, as without wait_all).
	 */
	bool wait_all;
};

/* What a run consumed and how it ended (the --stats file's contents). */
struct cfsbw_host_result {
	struct cfsbw_stats stats; /* cpu.stat of the governed group (R12) */
	uint64_t usage_ns;        /* CPU time the governed processes used */
	uint64_t wall_ns;         /* from the first process to the end */
	uint64_t self_cpu_ns;     /* CPU time the driver itself used */
	uint64_t nr_processes;    /* processes that were governed in all */
	uint64_t nr_thread_stops; /* threads the driver stopped (R7) */
	/*
	 * Exit status in the shell's convention: the code, or 128 + N when the
	 * command died of signal N.  When the driver itself got SIGINT, SIGTERM
	 * or SIGHUP, the command's status after it was passed on.
	 */
	int exit_status;
	int signal_received; /* the signal that ended the run early, or 0 */
};

/* The driver's clock (CLOCK_MONOTONIC), in ns: "now" for the core. */
int64_t cfsbw_host_now_ns(void);

/*
 * Create a driver with a core tree (policy cfg->policy) holding one group,
 * "/run", which the driver governs.  The caller owns *out and frees it with
 * cfsbw_host_destroy().  Returns 0, -EINVAL (an unknown policy, or the
 * hard-limits one, which the driver does not support), -ENOMEM.
 */
int cfsbw_host_create(const struct cfsbw_host_config *cfg,
		      struct cfsbw_host **out);
/*
 * Detach from every process still governed (resuming any that is stopped)
 * and free everything.
 */
void cfsbw_host_destroy(struct cfsbw_host *h);

/* The governed group, for cfsbw_file_write/read and cfsbw_group_stats. */
struct cfsbw_group *cfsbw_host_group(struct cfsbw_host *h);
struct cfsbw_tree *cfsbw_host_tree(struct cfsbw_host *h);

/*
 * Start argv (argv[0] looked up in PATH) as the governed command.  It runs
 * with the caller's signal mask and dispositions, in the caller's process
 * group, and is in the group before it executes its first instruction.
 * Returns 0, -ENOENT/-EACCES/... (the exec failed), -EPERM (tracing is not
 * allowed here: a seccomp profile, another tracer), -ENOMEM.  One command
 * or one attach per driver.
 */
int cfsbw_host_spawn(struct cfsbw_host *h, char *const argv[]);
/*
 * Take in a running process: all its threads, its existing descendants and
 * every process they start from now on.  Its CPU time before the call is
 * not charged.  May be called again for more processes in the same group
 * (one already governed is taken as it is); the run lasts until every one
 * has exited, and its exit status is the first one's.  Returns 0, -ESRCH,
 * -EPERM (not allowed to trace it), -EBUSY (a command was spawned).
 */
int cfsbw_host_attach(struct cfsbw_host *h, pid_t pid);
/*
 * Whether pid is the calling process's parent or an earlier ancestor: one
 * that may be waiting for it, while a run with --pid waits for pid.
 */
bool cfsbw_host_is_ancestor(pid_t pid);

/*
 * Run the event loop until the command (or attached process) has exited, or
 * until SIGINT, SIGTERM or SIGHUP arrives: then every process is resumed and
 * detached, the signal is passed on to a spawned command (unless the
 * terminal already sent it to the whole process group), and the loop waits
 * for the command to exit.  Fills *res.  Returns 0 or a negative errno.
 */
int cfsbw_host_run(struct cfsbw_host *h, struct cfsbw_host_result *res);

/*
 * The result of a run whose command could not be started (status 126 or
 * 127, as a shell gives it): nothing governed, the driver's own CPU time.
 */
void cfsbw_host_result_unstarted(int status, struct cfsbw_host_result *res);

/* CPU time the governed processes have used so far, ns. */
uint64_t cfsbw_host_usage_ns(const struct cfsbw_host *h);
/* Processes governed right now. */
unsigned cfsbw_host_nr_live(const struct cfsbw_host *h);

#endif
