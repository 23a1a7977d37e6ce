/*
 * host_int.h - the host driver's private header.
 *
 *   host.c   the driver: the core's callbacks, CPU clocks and CPU-time
 *            timers, the period timer, the event loop, signals, results
 *   proc.c   the table of governed processes and their threads, runqueue
 *            numbers
 *   trace.c  ptrace: spawning and attaching, decoding stops, stopping and
 *            resuming processes, detaching
 *
 * Everything runs on the driver's one thread.
 */
#ifndef CFSBW_HOST_INT_H
#define CFSBW_HOST_INT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "host/host.h"

/*
 * Runqueues of the core tree: one per live governed process.  The table
 * starts with HOST_NR_RQ_INITIAL and doubles when a process finds no free
 * runqueue (the core's cfsbw_tree_set_nr_rq), up to the core's maximum; a
 * process beyond that many at once is not governed (it is detached, with a
 * warning).  Each runqueue costs the core one cache line per group.
 */
#define HOST_NR_RQ_INITIAL 64u
#define HOST_NR_RQ_MAX CFSBW_MAX_RQ

/* A thread's relation to the driver (each thread is a ptrace tracee). */
enum host_thread_state {
	TH_RUNNING,   /* not in a ptrace stop (it may be asleep) */
	TH_HELD,      /* in a ptrace stop the driver keeps: throttled (R7) */
	TH_LISTENING, /* in a group stop (SIGSTOP from someone): PTRACE_LISTEN */
};

struct host_proc;

struct host_thread {
	pid_t tid;
	enum host_thread_state state;
	/* A PTRACE_INTERRUPT was sent and its stop has not arrived yet. */
	bool interrupt_sent;
	/*
	 * Its looks in /proc (trace.c, "sleepers"): how many in a row found it
	 * running (at most 2), and throttles since the last.  stat_fd is its
	 * /proc/PID/task/TID/stat, opened at its first look, or -1.
	 */
	unsigned char running_looks;
	unsigned char unlooked;
	int stat_fd;
	struct host_proc *proc;
	struct host_thread *hash_next;
	struct host_thread *proc_next;
};

/* A governed process: one runqueue of the core (SPEC section 1). */
struct host_proc {
	pid_t pid;
	unsigned rq;
	clockid_t clock;       /* its process CPU clock */
	timer_t timer;         /* CPU-time timer on that clock, signals us */
	bool timer_ok;
	int64_t armed_cpu_ns;  /* the CPU time its CPU-time timer is set for */
	/* A second timer, on CLOCK_MONOTONIC (host.c, "wall backstop"), for a
	 * process whose CPU-time timer came late; created when first needed. */
	timer_t wall_timer;
	bool wall_ok;
	bool backstop;         /* arm the wall timer with the CPU-time timer */
	int64_t wall_left_ns;  /* the runtime left when it was armed */
	bool extra_root;       /* attached after the first (--pid A,B) */
	bool throttled;        /* R7: the core said stop; threads held */
	/* Throttled with threads left asleep, not stopped (trace.c,
	 * "sleepers"); watched: its CPU-time timer waits for them to run. */
	bool sleepers;
	bool sleepers_watched;
	bool arm_pending;      /* unthrottled: charge and re-arm after the call */
	bool resume_pending;   /* unthrottled: resume after that charge */
	int64_t last_cpu_ns;   /* process CPU time read so far */
	int64_t debt_ns;       /* read but not charged yet: ran while throttled */
	/*
	 * Pool runtime beyond its account that its CPU-time timer was armed
	 * for (host.c, "reach"): promised to it, not yet drawn.
	 */
	int64_t reach_ns;
	bool resync;           /* reach taken back for a timer: re-arm after */
	bool enqueued;         /* R9: counted as runnable by the core */
	bool idle;             /* no CPU for a whole period: dequeued */
	uint64_t active_seq;   /* period_seq when its CPU time last grew */
	unsigned nr_threads;
	struct host_thread *threads;
};

/* The driver's own timers, on CLOCK_MONOTONIC. */
enum host_timer {
	HOST_TIMER_PERIOD, /* R10 */
	HOST_TIMER_SLACK,  /* upstream policy */
	HOST_TIMER_STAT,   /* --stat-interval */
	HOST_TIMER_EARLY,  /* a held early tid is due for release */
	HOST_NR_TIMERS
};

#define HOST_WALL_BIT 0x40000000

/* A tid whose first stop came before its creator's fork event. */
#define HOST_MAX_EARLY 64
/* How long such a tid may be held waiting to be named: 100 ms. */
#define HOST_EARLY_MAX_NS (100 * CFSBW_NSEC_PER_MSEC)

struct cfsbw_host {
	struct cfsbw_tree *tree;
	struct cfsbw_group *group;
	struct cfsbw_host_config cfg;

	/* proc.c: tid -> thread, rq -> process, free runqueue numbers. */
	struct host_thread **hash;
	unsigned hash_mask;
	unsigned nr_threads;
	struct host_proc **procs; /* [nr_rq] */
	unsigned nr_rq;           /* runqueues in the table and the tree */
	unsigned *free_rq;        /* stack of free runqueue numbers */
	unsigned nr_free_rq;
	unsigned nr_live;
	pid_t early[HOST_MAX_EARLY];
	int64_t early_since_ns[HOST_MAX_EARLY];
	unsigned nr_early;

	/* host.c */
	sigset_t old_mask; /* the caller's, restored in the command */
	struct sigaction old_chld; /* the caller's SIGCHLD disposition, too */
	int sig_fd;
	int cputimer_signo; /* CPU-time timers; value: the runqueue (with
			     * HOST_WALL_BIT for a wall backstop) */
	unsigned nr_cpus;   /* online CPUs: how fast a process can use CPU */
	int timer_signo;    /* host timers; value: enum host_timer */
	timer_t timers[HOST_NR_TIMERS];
	int nr_timers;
	bool period_armed;
	int64_t period_expires_ns;
	bool quiet; /* SIGCHLD carries exits only: a throttle's stops are due */
	/* Unthrottled processes to charge and re-arm after a core call. */
	unsigned *arm_list;
	unsigned nr_arm;
	/*
	 * CPU time a process used beyond its account's runtime when it exited:
	 * cfsbw_rq_offline() forgets an account's debt, so the driver charges
	 * it to the next process charged (R13 over whole runs).
	 */
	int64_t debt_ns;
	/* The sum of every process's reach_ns: never more than the pool. */
	int64_t reach_ns;
	unsigned nr_reaching;      /* processes with a promise */
	unsigned nr_idle;          /* processes dequeued as idle */
	bool reach_revoking;
	/* Period timer expiries so far: the idle scan's clock. */
	uint64_t period_seq;
	uint64_t usage_ns;
	uint64_t nr_processes;
	uint64_t nr_thread_stops;  /* PTRACE_INTERRUPTs sent */
	int64_t start_ns;

	/* trace.c */
	pid_t root_pid;        /* the command or the (first) attached process */
	unsigned nr_extra_roots; /* other attached processes still alive */
	bool root_is_child;    /* spawned: our own child */
	bool root_gone;
	int root_status;       /* wait status of the root process's leader */
	bool warned_full;
};

/* proc.c */
int __proc_table_init(struct cfsbw_host *h);
void __proc_table_free(struct cfsbw_host *h);
struct host_thread *__thread_find(struct cfsbw_host *h, pid_t tid);
/* A new process with its leader thread; NULL when out of memory or rqs. */
struct host_proc *__proc_new(struct cfsbw_host *h, pid_t pid);
/* A free runqueue exists, or could be made: true, else false. */
bool __proc_room(struct cfsbw_host *h);
struct host_thread *__thread_new(struct cfsbw_host *h, struct host_proc *p,
				 pid_t tid);
/* Forget a thread; returns true when it was its process's last. */
bool __thread_forget(struct cfsbw_host *h, struct host_thread *t);
void __proc_free(struct cfsbw_host *h, struct host_proc *p);
bool __early_take(struct cfsbw_host *h, pid_t tid);
/* false when full: the caller lets the tid run on, unregistered for now. */
bool __early_add(struct cfsbw_host *h, pid_t tid, int64_t now_ns);
/* Release the tids held too long; the next one's due time, or 0. */
int64_t __early_expire(struct cfsbw_host *h, int64_t now_ns,
		       void (*release)(pid_t tid));

/* host.c: a process joins or leaves the core (R9, R10, R13). */
int __host_proc_join(struct cfsbw_host *h, struct host_proc *p,
		     bool charge_past);
void __host_proc_leave(struct cfsbw_host *h, struct host_proc *p);
/* Read p's CPU clock, charge what it used since (R5), re-arm its timer. */
void __host_proc_charge(struct cfsbw_host *h, struct host_proc *p, bool arm);
void __host_run_arm_list(struct cfsbw_host *h);
/* p's sleepers are all that may run: arm its timer to catch them. */
void __host_sleepers_watch(struct host_proc *p);
/* Look at the held early tids again at at_ns (CLOCK_MONOTONIC). */
void __host_early_timer(struct cfsbw_host *h, int64_t at_ns);

/* trace.c */
int __trace_spawn(struct cfsbw_host *h, char *const argv[]);
int __trace_attach(struct cfsbw_host *h, pid_t pid);
/* One more process for the group: the run lasts until it exits too. */
int __trace_attach_more(struct cfsbw_host *h, pid_t pid);
/* Reap every pending ptrace stop and exit (after SIGCHLD). */
void __trace_reap(struct cfsbw_host *h);
/*
 * R7: stop every thread of p; with look, leave those of a multi-threaded p
 * that /proc shows asleep, and set p->sleepers if any was left.  R10: let
 * the held ones run again.
 */
void __trace_stop_proc(struct cfsbw_host *h, struct host_proc *p, bool look);
/* p's threads sent a PTRACE_INTERRUPT whose stop has not been read yet. */
unsigned __trace_pending_stops(const struct host_proc *p);
void __trace_resume_proc(struct cfsbw_host *h, struct host_proc *p);
/* Resume and detach every governed thread. */
void __trace_detach_all(struct cfsbw_host *h);

#endif
