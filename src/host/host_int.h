/*
 * host_int.h - the host driver's private header.
 *
 *   driver.c   a driver's life: the process-wide signal state it takes
 *              and gives back, its tree and timers, accessors
 *   loop.c     the event loop (one signalfd, and epoll when the caller
 *              watches fds), running and stopping, results
 *   govern.c   the driver's decisions: the core's callbacks, processes
 *              joining, leaving and moving between groups (R5, R9-R11,
 *              R13), and what to do with each ptrace event
 *   group.c    the driver's data per group: its processes, its usage,
 *              its period and slack timers (one heap, one POSIX timer)
 *              and their expiries (R9, R10)
 *   cputimer.c CPU clocks and CPU-time timers: charging (R5, R6), the
 *              "reach" ledger of promised runtime, the wall backstop
 *   trace.c    ptrace as a source of events (born, stopped, exited) and
 *              the primitives that act on threads (stop, resume, detach)
 *   admit.c    taking processes in: spawn, attach, place (and move)
 *   procfs.c   what the driver reads in /proc (sleepers, parents, why a
 *              process cannot be traced)
 *   proc.c     the table of governed processes and threads, runqueue
 *              numbers
 *
 * Layers inside the driver: loop.c calls govern.c and group.c; govern.c
 * decides and calls cputimer.c, group.c, trace.c and proc.c; group.c's
 * expiries charge (cputimer.c) and resume or stop (govern.c); trace.c
 * calls only proc.c (tables) and reports events to its caller.
 * Everything runs on the driver's one thread.
 */
#ifndef CFSBW_HOST_INT_H
#define CFSBW_HOST_INT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "cfsbw_host.h"
#include "common/helpers.h"

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
struct host_group;

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
	struct host_group *grp; /* the group it is in (exactly one) */
	struct list_head grp_link; /* in grp->procs */
	clockid_t clock;       /* its process CPU clock */
	timer_t timer;         /* CPU-time timer on that clock, signals us */
	bool timer_ok;
	int64_t armed_cpu_ns;  /* the CPU time its CPU-time timer is set for */
	/* A second timer, on CLOCK_MONOTONIC (cputimer.c, "wall backstop"),
	 * for a process whose CPU-time timer came late; made when needed. */
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
	bool stop_deferred;    /* throttled during a refresh: stop after it */
	bool resume_pending;   /* unthrottled: resume after that charge */
	int64_t last_cpu_ns;   /* process CPU time read so far */
	int64_t debt_ns;       /* read but not charged yet: ran while throttled */
	/*
	 * Pool runtime beyond its account that its CPU-time timer was armed
	 * for (cputimer.c, "reach"): promised to it, not yet drawn.
	 */
	int64_t reach_ns;
	bool resync;           /* reach taken back for a timer: re-arm after */
	bool enqueued;         /* R9: counted as runnable by the core */
	bool idle;             /* no CPU for a whole period: dequeued */
	uint64_t active_seq;   /* grp->period_seq when its CPU time last grew */
	unsigned nr_threads;
	struct host_thread *threads;
};

/* A group's timer in the driver's heap (group.c). */
enum host_gtimer_kind { HOST_GT_PERIOD, HOST_GT_SLACK, HOST_NR_GT };

struct host_gtimer {
	int64_t at_ns;
	uint64_t seq;       /* insertion order: equal deadlines fire in order */
	unsigned idx;       /* position in the heap, or HOST_GT_NONE */
	struct host_group *grp;
	enum host_gtimer_kind kind;
};
#define HOST_GT_NONE UINT32_MAX

/*
 * The driver's data for a core group (cfsbw_group_driver_data): made when
 * a process is placed in it or in a descendant, or when the core first asks
 * for one of its timers; freed by cfsbw_host_group_destroy().
 */
struct host_group {
	struct cfsbw_group *g;
	struct host_group *parent; /* the driver data of g's parent, or NULL */
	struct list_head all_link; /* in cfsbw_host.groups */
	struct list_head procs;    /* the processes in g itself */
	unsigned nr_procs;
	unsigned nr_idle;          /* of those, dequeued as idle */
	/* cpuacct.usage: CPU time of g and its descendants, ns. */
	uint64_t usage_ns;
	/*
	 * CPU time a process used beyond its account's runtime when it left:
	 * cfsbw_rq_offline() forgets an account's debt, so the driver charges
	 * it to the next process of the group charged (R13 over whole runs).
	 */
	int64_t debt_ns;
	/* The ledger (cputimer.c, "reach"): the sum of its processes'
	 * reach_ns, never more than the pool. */
	int64_t reach_ns;
	unsigned nr_reaching;
	bool reach_revoking;
	/* Period timer expiries so far: the idle scan's clock. */
	uint64_t period_seq;
	struct host_gtimer timers[HOST_NR_GT];
};

/* The driver's own POSIX timers, on CLOCK_MONOTONIC. */
enum host_timer {
	HOST_TIMER_GROUPS, /* the earliest of the groups' timers (group.c) */
	HOST_TIMER_STAT,   /* --stat-interval */
	HOST_TIMER_EARLY,  /* a held early tid is due for release */
	HOST_NR_TIMERS
};

#define HOST_WALL_BIT 0x40000000

/* A tid whose first stop came before its creator's fork event. */
#define HOST_MAX_EARLY 64
/* How long such a tid may be held waiting to be named: 100 ms. */
#define HOST_EARLY_MAX_NS (100 * CFSBW_NSEC_PER_MSEC)

/* A descriptor the loop watches for the caller (cfsbw_host_watch_fd). */
struct host_watch {
	int fd;
	cfsbw_host_fd_fn *fn;
	void *ctx;
};

#define HOST_MAX_UNGOVERNED 32

struct cfsbw_host {
	struct cfsbw_tree *tree;
	struct cfsbw_group *group; /* "/run" in command mode, else NULL */
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
	unsigned nr_throttled;    /* live processes with throttled set */
	pid_t early[HOST_MAX_EARLY];
	int64_t early_since_ns[HOST_MAX_EARLY];
	unsigned nr_early;

	/* group.c */
	struct list_head groups;   /* every host_group */
	unsigned nr_groups;
	struct host_gtimer **gt_heap;
	unsigned gt_len, gt_cap;
	uint64_t gt_seq;
	int64_t gt_armed_ns;       /* HOST_TIMER_GROUPS is set for, or 0 */
	int64_t gt_interval_ns;    /* and repeats every, or 0 */

	/* loop.c */
	sigset_t old_mask; /* the caller's, restored in the command */
	struct sigaction old_chld; /* the caller's SIGCHLD disposition, too */
	int sig_fd;
	int epoll_fd;
	struct host_watch *watches;
	unsigned nr_watches, watches_cap;
	bool stop_requested;
	int cputimer_signo; /* CPU-time timers; value: the runqueue (with
			     * HOST_WALL_BIT for a wall backstop) */
	unsigned nr_cpus;   /* online CPUs: how fast a process can use CPU */
	int timer_signo;    /* host timers; value: enum host_timer */
	timer_t timers[HOST_NR_TIMERS];
	int nr_timers;
	bool quiet; /* SIGCHLD carries exits only: a throttle's stops are due */
	/* Unthrottled processes to charge and re-arm after a core call. */
	unsigned *arm_list;
	unsigned nr_arm;
	/* Inside a group timer's expiry (govern.c, "stops deferred"): the
	 * processes throttled there, to stop once it is over. */
	bool defer_stops;
	unsigned *stop_list;
	unsigned nr_stop;
	uint64_t usage_ns;
	uint64_t nr_processes;
	uint64_t nr_thread_stops;  /* PTRACE_INTERRUPTs sent */
	int64_t start_ns;

	/* govern.c / trace.c */
	pid_t root_pid;        /* the command or the (first) attached process */
	unsigned nr_extra_roots; /* other attached processes still alive */
	bool root_is_child;    /* spawned: our own child */
	bool root_gone;
	int root_status;       /* wait status of the root process's leader */
	bool warned_full;
	bool exec_watch_known, exec_watch; /* trace.c: exec events wanted */
	bool warned_exec;      /* a privileged program's exec was named */
	pid_t trace_pending;   /* a report peeked at, not consumed yet */
	bool trace_peek_both;  /* a stop was read: look at stops and exits
				* together next (trace.c) */
	char place_reason[96]; /* why the last place failed (-EPERM) */
	/*
	 * admit.c: descendants of a --pid process that could not be taken
	 * in (issue 16): how many, and the first HOST_MAX_UNGOVERNED.
	 */
	unsigned nr_ungoverned;
	struct host_ungoverned {
		pid_t pid;
		char why[96];
	} ungoverned[HOST_MAX_UNGOVERNED];
};

/* loop.c */
struct timespec cfsbw_host__ns_to_ts(int64_t ns);
int64_t cfsbw_host__clock_ns(clockid_t clock);
/* Arm one of the driver's timers at an absolute CLOCK_MONOTONIC time. */
void cfsbw_host__timer_at(struct cfsbw_host *h, enum host_timer which,
			  int64_t expires_ns);

/* proc.c */
int cfsbw_host__table_init(struct cfsbw_host *h);
void cfsbw_host__table_free(struct cfsbw_host *h);
struct host_thread *cfsbw_host__thread_find(struct cfsbw_host *h, pid_t tid);
/* A new process with no thread, in no group; NULL when out of memory or
 * runqueues. */
struct host_proc *cfsbw_host__proc_new(struct cfsbw_host *h, pid_t pid);
/* A free runqueue exists, or could be made: true, else false. */
bool cfsbw_host__proc_room(struct cfsbw_host *h);
struct host_thread *cfsbw_host__thread_new(struct cfsbw_host *h,
					   struct host_proc *p, pid_t tid);
/* Forget a thread; returns true when it was its process's last. */
bool cfsbw_host__thread_forget(struct cfsbw_host *h, struct host_thread *t);
/* The process must have left the core and its group. */
void cfsbw_host__proc_free(struct cfsbw_host *h, struct host_proc *p);
bool cfsbw_host__early_take(struct cfsbw_host *h, pid_t tid);
/* false when full: the caller lets the tid run on, unregistered for now. */
bool cfsbw_host__early_add(struct cfsbw_host *h, pid_t tid, int64_t now_ns);
/* Release the tids held too long; the next one's due time, or 0. */
int64_t cfsbw_host__early_expire(struct cfsbw_host *h, int64_t now_ns,
				 void (*release)(pid_t tid));

/* group.c */
/* The driver data of g and of each ancestor, made if missing; NULL on
 * -ENOMEM (nothing made). */
struct host_group *cfsbw_host__group_get(struct cfsbw_host *h,
					 struct cfsbw_group *g);
void cfsbw_host__group_add_proc(struct host_group *grp, struct host_proc *p);
void cfsbw_host__group_del_proc(struct host_group *grp, struct host_proc *p);
/*
 * The group whose period timer tells whether p ran (R9): its own if it is
 * limited, else its nearest limited ancestor (an unlimited group has no
 * period timer), else its own.
 */
struct host_group *cfsbw_host__clock_group(struct host_proc *p);
/* Set (at_ns >= 0) or cancel (at_ns < 0) one of a group's timers. */
void cfsbw_host__gtimer_set(struct cfsbw_host *h, struct host_group *grp,
			    enum host_gtimer_kind kind, int64_t at_ns);
/* Fire every group timer due at now_ns; re-arms the POSIX timer. */
void cfsbw_host__gtimers_run(struct cfsbw_host *h, int64_t now_ns);
/* Set HOST_TIMER_GROUPS for the heap's earliest deadline, if changed. */
void cfsbw_host__gtimers_sync(struct cfsbw_host *h);
void cfsbw_host__groups_free(struct cfsbw_host *h);

/* cputimer.c */
/* Make p's CPU-time timer (its clock must be set); 0 or -errno. */
int cfsbw_host__cputimer_create(struct cfsbw_host *h, struct host_proc *p);
void cfsbw_host__cputimer_delete(struct host_proc *p);
/* R6: arm p's timer for the runtime its account holds and its reach. */
void cfsbw_host__cputimer_arm(struct cfsbw_host *h, struct host_proc *p);
/* Read p's CPU clock, charge what it used since (R5), re-arm its timer. */
void cfsbw_host__charge(struct cfsbw_host *h, struct host_proc *p, bool arm);
/* The same, with the clock as just read (cpu < 0: gone, nothing). */
void cfsbw_host__charge_to(struct cfsbw_host *h, struct host_proc *p,
			   int64_t cpu, bool arm);
/* The CPU-time or wall timer of runqueue value fired. */
void cfsbw_host__cputimer_fired(struct cfsbw_host *h, int value);
/* p's sleepers are all that may run: arm its timer to catch them. */
void cfsbw_host__sleepers_watch(struct host_proc *p);
/* The ledger: p's promise is void / every promise of grp taken back /
 * re-armed / checked against the pool. */
void cfsbw_host__reach_drop(struct host_group *grp, struct host_proc *p);
void cfsbw_host__reach_take_back(struct cfsbw_host *h, struct host_group *grp);
void cfsbw_host__reach_rearm(struct cfsbw_host *h, struct host_group *grp);
void cfsbw_host__reach_check(struct cfsbw_host *h, struct host_group *grp);

/* govern.c */
extern const struct cfsbw_ops cfsbw_host__ops;
/* p (with its threads, in no group yet) joins grp (R9, R10). */
int cfsbw_host__proc_join(struct cfsbw_host *h, struct host_proc *p,
			  struct host_group *grp, bool charge_past);
/* p leaves its group and the core (R13); it stays in the table. */
void cfsbw_host__proc_leave(struct cfsbw_host *h, struct host_proc *p);
/* Charge and re-arm the processes the core unthrottled, and resume them. */
void cfsbw_host__run_arm_list(struct cfsbw_host *h);
/* Read every pending ptrace report and act on it. */
void cfsbw_host__reap(struct cfsbw_host *h);
/* R7: stop p's threads (with look: leave sleepers alone). */
void cfsbw_host__stop_proc(struct cfsbw_host *h, struct host_proc *p,
			   bool look);
/* Stop the processes throttled while stops were deferred. */
void cfsbw_host__stops_flush(struct cfsbw_host *h);
/* Charge every process (arm: re-arm those not throttled). */
void cfsbw_host__charge_all(struct cfsbw_host *h);
/* R13: CPU time used past their runtime and not repaid, of every group. */
uint64_t cfsbw_host__unpaid_ns(const struct cfsbw_host *h);
/* The held early tids' timer. */
void cfsbw_host__early_fired(struct cfsbw_host *h);
/* Resume, charge and detach every governed process; it leaves the core. */
void cfsbw_host__release_all(struct cfsbw_host *h);
/* A governed process moves to grp (SPEC section 8). */
void cfsbw_host__proc_move(struct cfsbw_host *h, struct host_proc *p,
			   struct host_group *grp);
/* tid has exited with status (wait(2)'s): forget it, or its process. */
void cfsbw_host__on_exited(struct cfsbw_host *h, pid_t tid, int status);

/* procfs.c */
bool cfsbw_host__tid_in_process(pid_t pid, pid_t tid);
/* A pid as text (a /proc directory name, a list's item): > 0, or -1. */
pid_t cfsbw_host__pid_of_text(const char *text);
/* Each existing child of thread tid of process pid, for fn. */
void cfsbw_host__trace_children(pid_t pid, pid_t tid,
				void (*fn)(void *ctx, pid_t child), void *ctx);
/* The process (thread group) of tid, or -1. */
pid_t cfsbw_host__trace_tgid(pid_t tid);
/* Why pid cannot be traced, into buf. */
void cfsbw_host__trace_why_not(pid_t pid, char *buf, size_t size);
/* A thread of a multi-threaded process that /proc shows asleep. */
bool cfsbw_host__thread_asleep(struct host_proc *p, struct host_thread *t);
/* One look, always: its stat line's state is 'S' or 'D'. */
bool cfsbw_host__thread_reads_asleep(struct host_proc *p, struct host_thread *t);

/* trace.c: what a ptrace report says. */
enum host_trace_kind {
	HOST_EV_BORN,       /* tid made child (fork, vfork or clone event) */
	HOST_EV_TRAP,       /* an interrupt's stop, or a new tracee's first */
	HOST_EV_GROUP_STOP, /* a stop signal (sig) stopped the thread */
	HOST_EV_SIGNAL,     /* signal-delivery stop of sig */
	HOST_EV_OTHER_STOP, /* any other ptrace stop */
	HOST_EV_ZOMBIE,     /* tid exited, not reaped: its clock still reads */
	HOST_EV_EXITED,     /* tid is gone; status as wait(2) gives it */
};

struct host_trace_event {
	enum host_trace_kind kind;
	pid_t tid;
	pid_t child;         /* HOST_EV_BORN */
	bool child_is_thread; /* HOST_EV_BORN: a thread of tid's process */
	int sig;
	int status;
};

/*
 * The next report, or false when none is pending.  Stops are consumed; an
 * exit is first reported as HOST_EV_ZOMBIE (the tracee is not reaped yet,
 * its CPU clock still reads) and consumed at the next call, which reports
 * HOST_EV_EXITED (or a stop that came since).
 */
bool cfsbw_host__trace_next(struct cfsbw_host *h,
			    struct host_trace_event *ev);

/* A command started and traced, waiting for the word to exec. */
struct host_spawn {
	pid_t pid;
	int go_fd, report_fd;
};
/* Fork argv's process and seize it; 0, or -errno with nothing left. */
int cfsbw_host__trace_spawn_start(struct cfsbw_host *h, char *const argv[],
				  struct host_spawn *sp);
/* Let it exec: 0, or exec's -errno once the child is reaped (*status). */
int cfsbw_host__trace_spawn_go(struct host_spawn *sp, int *status);
/* Kill it and reap it. */
void cfsbw_host__trace_spawn_abort(struct host_spawn *sp);
/* Seize process p->pid's threads into p (repeating until none appears
 * that p lacks); 0 or -errno. */
int cfsbw_host__trace_seize_threads(struct cfsbw_host *h, struct host_proc *p);
/* Let tid run on from a ptrace stop, delivering sig (0: none). */
void cfsbw_host__trace_cont(pid_t tid, int sig);
void cfsbw_host__thread_cont(struct host_thread *t, int sig);
void cfsbw_host__thread_listen(struct host_thread *t);
void cfsbw_host__thread_interrupt(struct cfsbw_host *h, struct host_thread *t);
void cfsbw_host__thread_detach(pid_t tid, int sig);
/* p's threads sent a PTRACE_INTERRUPT whose stop has not been read yet. */
unsigned cfsbw_host__trace_pending_stops(const struct host_proc *p);
/*
 * Detach every thread of every process (each charged first by the
 * caller), resuming those held, and forget them; processes left empty stay
 * in the table for the caller.  Records the command's exit if it comes.
 */
void cfsbw_host__trace_detach_all(struct cfsbw_host *h);
/*
 * After detaching: one step of waiting for the command to exit, detaching
 * any tracee that still reports a stop.  1: it exited (status in
 * h->root_status); 0: nothing now, wait for SIGCHLD; -1: no child left.
 */
int cfsbw_host__trace_wait_root(struct cfsbw_host *h);

#endif
