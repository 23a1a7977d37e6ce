/*
 * cfsbw_host.h - the host driver: holds real processes to their groups' CPU
 * budgets.
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
 * In command mode (cfsbw run) the driver governs one group, "/run", and a
 * command or the processes given to it; in daemon mode (cfg.daemon, for
 * cfsbw daemon) it governs any number of groups of its tree, each process
 * in exactly one, and processes come in through cfsbw_host_place().
 *
 * Stopping is a ptrace stop (PTRACE_INTERRUPT of every thread), never
 * SIGSTOP: when the driver dies, even of SIGKILL, the kernel detaches every
 * tracee and wakes those in a ptrace stop, so no process is left stopped.
 *
 * The driver is single-threaded: one event loop (epoll over one signalfd,
 * which carries child stops and exits, POSIX timers and signals, and the
 * descriptors the caller watches) makes every call into the core, so the
 * core's serialization rules hold trivially.  It owns the core tree it
 * creates; the caller configures groups through the file interface
 * (cfsbw_file_write) with times from cfsbw_host_now_ns(), before the loop
 * runs or from a watched descriptor's callback.
 *
 * Process-wide state.  A driver changes, from cfsbw_host_create() to
 * cfsbw_host_destroy(): the calling thread's signal mask (SIGCHLD, SIGINT,
 * SIGTERM, SIGHUP, SIGRTMIN+2 and SIGRTMIN+3 are blocked and read from a
 * signalfd), SIGCHLD's disposition (default, at times with SA_NOCLDSTOP),
 * and it uses SIGRTMIN+2 and SIGRTMIN+3 for its timers.  Other threads of
 * the program must block those signals too, and the program must not use
 * them or reap children with wait(2) while a driver exists (it would take
 * the driver's tracees' reports).  So there is at most one driver per
 * process: a second cfsbw_host_create() fails with -EBUSY.
 *
 * Errors: 0 or a negative errno, as in the core.
 */
#ifndef CFSBW_HOST_H
#define CFSBW_HOST_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cfsbw.h"

#ifdef __cplusplus
extern "C" {
#endif

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
	/*
	 * Daemon mode: no "/run" group and no command; processes come in with
	 * cfsbw_host_place() into groups the caller makes, and
	 * cfsbw_host_run() lasts until cfsbw_host_stop() or SIGINT, SIGTERM
	 * or SIGHUP.  wait_all is ignored.
	 */
	bool daemon;
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
	 * CPU time used past the group's runtime and not yet repaid when the
	 * run ended (R13's overrun): the driver learns of CPU time after it
	 * is spent, and charges what ran past a throttle to the next period;
	 * what the last processes ran past theirs has no next period.
	 */
	uint64_t unpaid_ns;
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
 * Create a driver with a core tree (policy cfg->policy); in command mode
 * the tree holds one group, "/run", which the driver governs.  The caller
 * owns *out and frees it with cfsbw_host_destroy().  Returns 0, -EINVAL (an
 * unknown policy, or the hard-limits one, which the driver does not
 * support), -EBUSY (a driver exists in this process: see "Process-wide
 * state" above), -ENOMEM, or the errno of a failed signal or timer call.
 */
int cfsbw_host_create(const struct cfsbw_host_config *cfg,
		      struct cfsbw_host **out);
/*
 * Detach from every process still governed (resuming any that is stopped)
 * and free everything.
 */
void cfsbw_host_destroy(struct cfsbw_host *h);

/* The governed group, for cfsbw_file_write/read and cfsbw_group_stats;
 * NULL in daemon mode. */
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
 * Run the event loop until the command (or attached process) has exited
 * (command mode), cfsbw_host_stop() is called, or SIGINT, SIGTERM or SIGHUP
 * arrives: then every process is resumed and
 * detached, the signal is passed on to a spawned command (unless the
 * terminal already sent it to the whole process group), and the loop waits
 * for the command to exit.  Fills *res (in daemon mode, stats are the
 * root group's).  Returns 0, -EINVAL (command mode with no command or
 * attached process), or a negative errno.
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

/* ---- many groups (daemon mode; they work in command mode too) ---- */

/*
 * SPEC section 8's write of a PID to cgroup.procs: put process pid, with
 * all its threads, in group g of this driver's tree.
 *  - Governed already (in any group): it moves at once.  The CPU time it
 *    used up to now is charged to its old group (R5), its runqueue there
 *    goes offline (its unused runtime goes back to the old pool, R13), and
 *    it draws from g's pool from then on; throttled in the old group and
 *    not in g, it resumes at once.
 *  - Not governed: it is taken in (PTRACE_SEIZE of every thread, with
 *    fork, vfork and clone events, so that its future children start in
 *    g); its existing children stay where they are, as with a cgroup.  Its
 *    CPU time before the call is not charged.
 * Returns 0, -ESRCH (no such process, or a thread id that is not a
 * process's), -EPERM (it cannot be traced: cfsbw_host_place_reason() says
 * why), -EINVAL (g is not in this driver's tree), -ENOMEM.  A
 * configuration-class call: from the caller before cfsbw_host_run() or
 * from a watched descriptor's callback.
 */
int cfsbw_host_place(struct cfsbw_host *h, pid_t pid, struct cfsbw_group *g);
/*
 * After cfsbw_host_place() or cfsbw_host_attach() returned -EPERM: why,
 * in words for a log line:
 * "another user's process", "already traced by pid N", "ptrace_scope N
 * forbids it", "a zombie", "a kernel thread", "cfsbw itself", "it changed
 * its credentials (...): not dumpable", or the errno's text when none of
 * those applies.  Valid until the next call.
 */
const char *cfsbw_host_place_reason(const struct cfsbw_host *h);

/*
 * After cfsbw_host_attach(): how many descendants of the attached
 * processes could not be taken in (another user's, traced already...).
 * Their own descendants were looked at all the same, and those that could
 * be traced are governed; the ones that could not run ungoverned.
 * cfsbw_host_ungoverned() gives the i-th one's pid and why, for i below
 * both that count and 32; 0 beyond.
 */
unsigned cfsbw_host_nr_ungoverned(const struct cfsbw_host *h);
pid_t cfsbw_host_ungoverned(const struct cfsbw_host *h, unsigned i,
			    const char **why);
/* The group of governed process pid, or NULL. */
struct cfsbw_group *cfsbw_host_group_of(struct cfsbw_host *h, pid_t pid);
/*
 * The processes (or threads) in g itself, not its descendants, in no
 * particular order; fn must not place, destroy or run the loop.  Stops
 * early and returns fn's value when fn returns non-zero; else 0.
 */
int cfsbw_host_for_each_proc(struct cfsbw_host *h, struct cfsbw_group *g,
			     int (*fn)(void *ctx, pid_t pid), void *ctx);
int cfsbw_host_for_each_thread(struct cfsbw_host *h, struct cfsbw_group *g,
			       int (*fn)(void *ctx, pid_t tid), void *ctx);
/* Processes in g itself right now. */
unsigned cfsbw_host_group_nr_procs(const struct cfsbw_host *h,
				   const struct cfsbw_group *g);
/*
 * CPU time used in g and its descendants since g was created, ns (cgroup
 * v1's cpuacct.usage), counting processes that have since exited or moved
 * away for the time they spent there.  Charged as the driver learns of it:
 * up to a slice behind a running process (call cfsbw_host_charge_now()
 * first for an exact figure).
 */
uint64_t cfsbw_host_group_usage_ns(const struct cfsbw_host *h,
				   const struct cfsbw_group *g);
/* Charge every governed process what it has used so far (R5). */
void cfsbw_host_charge_now(struct cfsbw_host *h);
/*
 * rmdir: destroy group g (cfsbw_group_destroy) and the driver's data for
 * it, cancelling its timers.  Groups of a driver's tree must be destroyed
 * with this, never with cfsbw_group_destroy() directly.  Returns 0, -EBUSY
 * (g has processes or children, or is the root or "/run"), -EINVAL (not in
 * this tree).
 */
int cfsbw_host_group_destroy(struct cfsbw_host *h, struct cfsbw_group *g);

/*
 * Watch fd: the loop calls fn(ctx, fd) when fd is readable (or has hung
 * up), on the driver's thread, between core calls.  fn may write files
 * (cfsbw_file_write: a write that unthrottles a group resumes its processes
 * at once, R4), create and destroy groups, place processes, watch and
 * unwatch descriptors, and call cfsbw_host_stop().  The caller keeps fd
 * open until it unwatches it.  Returns 0, -EEXIST (watched already),
 * -EBADF, -ENOMEM.
 */
typedef void cfsbw_host_fd_fn(void *ctx, int fd);
int cfsbw_host_watch_fd(struct cfsbw_host *h, int fd, cfsbw_host_fd_fn *fn,
			void *ctx);
/* Returns 0 or -ENOENT (not watched). */
int cfsbw_host_unwatch_fd(struct cfsbw_host *h, int fd);
/*
 * Make cfsbw_host_run() return once the current batch of events is
 * handled: every process is resumed and detached (none is left stopped).
 * Safe only on the driver's thread (from a callback).
 */
void cfsbw_host_stop(struct cfsbw_host *h);

#ifdef __cplusplus
}
#endif

#endif
