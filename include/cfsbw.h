/*
 * cfsbw.h - CFS bandwidth control (Linux's CPU "hard limit") as a library.
 *
 * This is the controller core: a tree of groups, each with a quota of CPU
 * time per period, a global pool refilled by a period timer, and one local
 * account per runqueue that draws runtime from the pool in slices.  It is
 * pure and deterministic: no I/O, no clocks, no threads.  Time is passed in
 * by the caller as nanoseconds on the caller's own monotonic clock.
 *
 * Drivers (the simulator, the host enforcer) feed the core execution time
 * with cfsbw_charge(), fire its timers when asked to, and act on its
 * decisions, which arrive through the callbacks of struct cfsbw_ops.
 *
 * Rules cited as R1..R13 are those of the project's SPEC.md.
 *
 * Errors: functions return 0 (or a length) on success and a negative errno
 * (-EINVAL, -ERANGE, -ENOENT, -EEXIST, -EBUSY, -ENOMEM, -ENOSPC) on failure.
 * After an error return nothing has changed and no callback has fired.
 *
 * Concurrency (seed 003's model):
 *  - A local account (one group on one runqueue) is touched only by the one
 *    thread driving that runqueue at a time: cfsbw_charge(),
 *    cfsbw_task_enqueue() and cfsbw_task_dequeue() on runqueue rq take no
 *    lock on their common path.
 *  - Each group's pool has its own lock, taken when a slice is requested,
 *    runtime is returned, an account throttles, or the period refreshes.
 *    cfsbw_period_timer_fire() and cfsbw_slack_timer_fire() may run on any
 *    thread, concurrently with charges on every runqueue.
 *  - Tree changes and configuration writes (group create/destroy, file
 *    writes, cfsbw_rq_offline) must not run concurrently with any other call
 *    on the same tree: the driver serializes them (single-threaded drivers
 *    need do nothing).
 *  - Callbacks run on the thread that caused them, with the group's pool
 *    lock held.  They must not call back into the core for that group; they
 *    should record the decision (reschedule, stop or resume a process, arm a
 *    timer) and return.
 */
#ifndef CFSBW_H
#define CFSBW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CFSBW_VERSION "0.1.0"

/* "No limit": the quota of an unlimited group (RUNTIME_INF in the seeds). */
#define CFSBW_RUNTIME_INF INT64_MAX

/* Returned by the timer-fire functions when the timer must not be re-armed. */
#define CFSBW_TIMER_STOP ((int64_t)-1)

#define CFSBW_NSEC_PER_USEC INT64_C(1000)
#define CFSBW_NSEC_PER_MSEC INT64_C(1000000)
#define CFSBW_NSEC_PER_SEC INT64_C(1000000000)

/*
 * The edges of the core's numbers (2^62 ns is 146 years).  now_ns, in
 * every call, is 0 or more; near INT64_MAX, an expiry the core asks for
 * (period and slack timers) saturates at INT64_MAX rather than wrap into
 * the past.  A charge above CFSBW_CHARGE_MAX_NS counts as that much.  A
 * throttled account's debt (R13) saturates at CFSBW_DEBT_MAX_NS: a charge
 * takes it no deeper, and never makes it smaller either (hardlimits, taking
 * back lent runtime when a runqueue goes away, can leave an account a
 * period's runtime below that).  cpu.stat's times saturate at UINT64_MAX
 * ns rather than wrap (throttled time is summed over runqueues).
 */
#define CFSBW_CHARGE_MAX_NS (INT64_C(1) << 62)
#define CFSBW_DEBT_MAX_NS (INT64_C(1) << 62)

/*
 * Policies (SPEC section 6).  X(enum suffix, name used in files and flags)
 *  - v4:         Paul Turner's CFS Bandwidth Control v4 (seeds 002-008).
 *  - upstream:   today's Linux: 100 ms / 5 ms defaults, slack return and
 *                slack timer, burst, refresh gives -runtime_remaining + 1.
 *  - hardlimits: Bharata Rao's CFS hard limits v5 (seeds 009-011): runtime
 *                per runqueue, borrowed between runqueues before throttling.
 */
#define CFSBW_POLICY_MAP(X)                                                    \
	X(V4, "v4")                                                            \
	X(UPSTREAM, "upstream")                                                \
	X(HARDLIMITS, "hardlimits")

enum cfsbw_policy {
#define CFSBW_POLICY_ENUM(e, name) CFSBW_POLICY_##e,
	CFSBW_POLICY_MAP(CFSBW_POLICY_ENUM)
#undef CFSBW_POLICY_ENUM
	CFSBW_POLICY_COUNT
};

/* "v4", "upstream", "hardlimits"; NULL for a value out of range. */
const char *cfsbw_policy_name(enum cfsbw_policy policy);
/* 0 and *out set, or -EINVAL for an unknown name. */
int cfsbw_policy_parse(const char *name, enum cfsbw_policy *out);

/*
 * Statistics of cpu.stat (R12, seed 006; the burst pair in the upstream
 * policy only).  X(field, shown only in the upstream policy)
 */
#define CFSBW_STAT_MAP(X)                                                      \
	X(nr_periods, 0)                                                       \
	X(nr_throttled, 0)                                                     \
	X(throttled_time, 0)                                                   \
	X(nr_bursts, 1)                                                        \
	X(burst_time, 1)

struct cfsbw_stats {
#define CFSBW_STAT_FIELD(name, upstream_only) uint64_t name;
	CFSBW_STAT_MAP(CFSBW_STAT_FIELD)
#undef CFSBW_STAT_FIELD
};

struct cfsbw_tree;
struct cfsbw_group;

/*
 * What the core asks of its driver.  Every callback is optional (NULL means
 * "nothing to do"); ctx is cfsbw_tree_config.ctx.
 */
struct cfsbw_ops {
	/*
	 * R7: the local account of g on rq ran dry and the pool was empty: g's
	 * entity on rq must be dequeued and rq rescheduled at once.  Everything
	 * below g on rq is now effectively throttled too (R11).
	 */
	void (*throttle)(void *ctx, struct cfsbw_group *g, unsigned rq);
	/*
	 * R10/R4: the account of g on rq has runtime again: re-enqueue g's entity
	 * on rq and wake rq if it was idle.  Descendants that are not throttled
	 * themselves (or by another ancestor) may run again (R11).
	 */
	void (*unthrottle)(void *ctx, struct cfsbw_group *g, unsigned rq);
	/*
	 * R10: arm g's period timer to fire at expires_ns (absolute, driver
	 * clock).  At expiry the driver calls cfsbw_period_timer_fire().  The
	 * core asks only when the timer is not already running.
	 */
	void (*period_timer_start)(void *ctx, struct cfsbw_group *g,
				   int64_t expires_ns);
	/* upstream policy: arm g's slack timer; at expiry call
	 * cfsbw_slack_timer_fire(). */
	void (*slack_timer_start)(void *ctx, struct cfsbw_group *g,
				  int64_t expires_ns);
};

/*
 * Memory for groups and their accounts.  alloc returns zeroed memory aligned
 * to align (a power of two) or NULL.  Never called on the accounting path.
 */
struct cfsbw_allocator {
	void *(*alloc)(size_t size, size_t align, void *ctx);
	void (*free)(void *ptr, void *ctx);
	void *ctx;
};

struct cfsbw_tree_config {
	unsigned nr_rq;            /* runqueues: 1..CFSBW_MAX_RQ */
	enum cfsbw_policy policy;  /* default (0): v4 */
	const struct cfsbw_ops *ops;
	void *ctx;                 /* passed to every callback */
	const struct cfsbw_allocator *allocator; /* NULL: the C library's */
};

#define CFSBW_MAX_RQ 65536u

/*
 * Create a tree holding only the root group "/" (unlimited, R2).  The
 * caller owns *out and frees it with cfsbw_tree_free().
 * Returns 0, -EINVAL (nr_rq or policy out of range) or -ENOMEM.
 */
int cfsbw_tree_create(const struct cfsbw_tree_config *cfg,
		      struct cfsbw_tree **out);
/* Frees the tree and every group in it.  Timers are the driver's to cancel. */
void cfsbw_tree_free(struct cfsbw_tree *tree);

unsigned cfsbw_tree_nr_rq(const struct cfsbw_tree *tree);
/*
 * Grow the tree to nr_rq runqueues, for drivers whose runqueues come and
 * go (the host driver's processes).  The new runqueues start with empty,
 * unthrottled accounts in every group; existing accounts do not move.
 * Returns 0, -EINVAL (below the current count or above CFSBW_MAX_RQ) or
 * -ENOMEM (nothing changed).  A configuration-class call.
 */
int cfsbw_tree_set_nr_rq(struct cfsbw_tree *tree, unsigned nr_rq);
enum cfsbw_policy cfsbw_tree_policy(const struct cfsbw_tree *tree);
/* The system-wide slice (sched_cfs_bandwidth_slice_us), in ns. */
int64_t cfsbw_tree_slice_ns(const struct cfsbw_tree *tree);
/*
 * R10: where a group's periods fall.  By default a period timer started
 * for the first time expires one period after that moment.  With on, it
 * expires at the first multiple of the period (counted from time 0) after
 * it, as Linux's hrtimer_forward_now from 0 did before 6.12 (which now
 * starts at a random offset): groups with the same period refresh at the
 * same moments, so a driver serving many groups wakes once for all of
 * them (the host driver in daemon mode).  The first period is then
 * shorter than a whole one.  Groups whose timer started already keep
 * their phase.  A configuration-class call.
 */
void cfsbw_tree_align_periods(struct cfsbw_tree *tree, bool on);
struct cfsbw_group *cfsbw_tree_root(struct cfsbw_tree *tree);

/*
 * Groups.  A path is "/" or "/name[/name...]" with names of 1..64
 * characters from [A-Za-z0-9_.-], neither "." nor "..".
 *
 * cfsbw_group_create: the parent must exist.  New groups start unlimited
 * with the policy's default period (R1) and shares 1024.  The tree owns the
 * group.  Returns 0, -EINVAL (bad path), -ENOENT (no parent), -EEXIST,
 * -ENOMEM.
 */
int cfsbw_group_create(struct cfsbw_tree *tree, const char *path,
		       struct cfsbw_group **out);
/* The group at path, or NULL. */
struct cfsbw_group *cfsbw_group_find(struct cfsbw_tree *tree, const char *path);
/*
 * Destroy a group that has no children and no runnable tasks on any
 * runqueue.  Returns 0, -EBUSY (children or tasks; also for the root).
 * The driver cancels the group's timers first.
 */
int cfsbw_group_destroy(struct cfsbw_group *g);

const char *cfsbw_group_path(const struct cfsbw_group *g);
struct cfsbw_tree *cfsbw_group_tree(const struct cfsbw_group *g);
struct cfsbw_group *cfsbw_group_parent(const struct cfsbw_group *g);
/* Children in creation order: first child, then each next sibling. */
struct cfsbw_group *cfsbw_group_first_child(const struct cfsbw_group *g);
struct cfsbw_group *cfsbw_group_next_sibling(const struct cfsbw_group *g);
unsigned cfsbw_group_depth(const struct cfsbw_group *g); /* root: 0 */

/* A pointer the driver may hang on a group; the core never touches it. */
void cfsbw_group_set_driver_data(struct cfsbw_group *g, void *data);
void *cfsbw_group_driver_data(const struct cfsbw_group *g);

/*
 * R10, as Linux since 6.4 (init_cfs_bandwidth sets a new group's period
 * timer to a random moment within one period, so that groups' refreshes
 * interleave): the group's period timer, started for the first time,
 * expires at phase_ns if that is still ahead, else at the first moment
 * phase_ns + k periods after the start; then every period.  Its first
 * period is shorter than a whole one, or longer when phase_ns is more
 * than a period ahead, as Linux's is when the quota was set under a
 * longer period (the default 100 ms) and the period changed after: the
 * timer keeps the expiry it was armed with.  Negative: one period after
 * the start, the default.  No effect on a timer that started before, or
 * with the tree's periods aligned (cfsbw_tree_align_periods).  A
 * configuration-class call.
 */
void cfsbw_group_set_period_phase(struct cfsbw_group *g, int64_t phase_ns);
/* The phase set (-1: none). */
int64_t cfsbw_group_period_phase_ns(const struct cfsbw_group *g);

/* Configuration as numbers, in ns (quota CFSBW_RUNTIME_INF: unlimited). */
int64_t cfsbw_group_period_ns(const struct cfsbw_group *g);
int64_t cfsbw_group_quota_ns(const struct cfsbw_group *g);
int64_t cfsbw_group_burst_ns(const struct cfsbw_group *g);
unsigned cfsbw_group_shares(const struct cfsbw_group *g); /* cpu.shares */
/* Runtime left in the pool for this period, in ns. */
int64_t cfsbw_group_pool_runtime_ns(struct cfsbw_group *g);
/* A snapshot of cpu.stat (R12), taken under the pool lock. */
void cfsbw_group_stats(struct cfsbw_group *g, struct cfsbw_stats *out);

/*
 * Accounting (R5-R7).  Charge delta_ns of execution by a task of group g on
 * runqueue rq, ending at now_ns, to g's account and to the account of every
 * ancestor with a finite quota.  Unlimited groups cost nothing (R5); the
 * cost does not grow with the number of unlimited ancestors.
 *
 * Returns true when the task must stop running on rq: an account on its
 * path is throttled (R7, R11); the throttle callback has fired for each
 * account that became throttled.  Runs on rq's thread.  Never allocates.
 *
 * A charge of 0 ns is the check before a task of g starts running on rq
 * (upstream's check_enqueue_throttle): an account holding no runtime asks
 * its pool, and throttles if the pool is dry, so that a runqueue does not
 * run a tick on credit.  Negative deltas are ignored; deltas above
 * CFSBW_CHARGE_MAX_NS count as CFSBW_CHARGE_MAX_NS.
 */
bool cfsbw_charge(struct cfsbw_group *g, unsigned rq, int64_t delta_ns,
		  int64_t now_ns);

/*
 * Runnable tasks (R9, seed 007).  The driver reports each task of group g
 * that becomes runnable on rq (enqueue) or stops being runnable there
 * (dequeue: sleep, exit, migration away).  The core keeps the hierarchical
 * count of runnable tasks that are not under a throttled account, starts
 * period timers (R10), and in the upstream policy returns slack when an
 * account goes idle.
 */
void cfsbw_task_enqueue(struct cfsbw_group *g, unsigned rq, int64_t now_ns);
void cfsbw_task_dequeue(struct cfsbw_group *g, unsigned rq, int64_t now_ns);
/*
 * R9: tasks runnable on rq that can run: "is rq idle?" is
 * cfsbw_rq_nr_running(tree, rq) == 0.
 */
unsigned cfsbw_rq_nr_running(const struct cfsbw_tree *tree, unsigned rq);
/* Runnable tasks counted at g's account on rq (seed 007's h_nr_tasks). */
unsigned cfsbw_group_h_nr_running(const struct cfsbw_group *g, unsigned rq);

/* R11: g's account on rq is throttled, itself or through an ancestor. */
bool cfsbw_throttled(const struct cfsbw_group *g, unsigned rq);
/* R7: g's own account on rq is throttled. */
bool cfsbw_account_throttled(const struct cfsbw_group *g, unsigned rq);
/* runtime_remaining of g's account on rq, in ns (CFSBW_RUNTIME_INF when
 * the group is unlimited). */
int64_t cfsbw_account_runtime_ns(const struct cfsbw_group *g, unsigned rq);

/*
 * The runtime a task of g may use on rq before the next charge must ask a
 * pool: the least runtime_remaining over g's limited path (R5), or
 * CFSBW_RUNTIME_INF when nothing above g is limited.  A value <= 0 means
 * the next charge asks for a slice.  Drivers arm CPU-time timers with it.
 */
int64_t cfsbw_runtime_left_ns(struct cfsbw_group *g, unsigned rq);

/*
 * Timers (R10).  The driver calls these when a timer the core asked for
 * (through ops) expires, with now_ns >= the requested expiry.  An expiry
 * that is late by k periods counts k.  Each returns the absolute time at
 * which to fire next, or CFSBW_TIMER_STOP.
 */
int64_t cfsbw_period_timer_fire(struct cfsbw_group *g, int64_t now_ns);
int64_t cfsbw_slack_timer_fire(struct cfsbw_group *g, int64_t now_ns);

/*
 * A runqueue goes away (a CPU offline, a process that exited): every
 * account on rq gives its unused runtime back to its pool, is unthrottled
 * (counting its throttled time) and forgets its tasks.  The index may be
 * used again afterwards.  No throttle or unthrottle callback fires: the
 * runqueue is gone, and nothing is left to resume on it.  In the upstream
 * policy the runtime given back may arm the slack timer
 * (ops.slack_timer_start), as an idle account's slack does, so that
 * throttled accounts get it before the refresh.  A configuration-class
 * call.
 */
void cfsbw_rq_offline(struct cfsbw_tree *tree, unsigned rq, int64_t now_ns);

/*
 * The file interface (SPEC section 2): the one place values are parsed.
 *
 * cfsbw_file_write: write text (as echo would: a trailing newline is fine)
 * to the file name of group g at now_ns.  Returns 0, -ENOENT (no such file
 * in this policy), -EINVAL (R2), -ERANGE (a number too large for 64 bits).
 * A rejected write changes nothing.  A configuration-class call.
 *
 * cfsbw_file_read: the file's contents, as the kernel prints them, into buf
 * (always NUL-terminated when size > 0).  Returns the length, -ENOENT, or
 * -ENOSPC when size is too small.
 */
int cfsbw_file_write(struct cfsbw_group *g, const char *name,
		     const char *text, int64_t now_ns);
int cfsbw_file_read(struct cfsbw_group *g, const char *name, char *buf,
		    size_t size);
/*
 * What a valid write to the file (or sysctl) name looks like: the rule a
 * rejected write broke, for messages, e.g. "R2: the period is a whole
 * number of microseconds from 1000 (1ms) to 1000000 (1s)".  NULL for an
 * unknown name.  The same text whatever the policy.
 */
const char *cfsbw_file_rule(const char *name);
/* The names of g's files in this policy, in table order; NULL past the end. */
const char *cfsbw_file_name(const struct cfsbw_tree *tree, unsigned index);

/* System-wide settings: "sched_cfs_bandwidth_slice_us" (integer >= 1). */
int cfsbw_sysctl_write(struct cfsbw_tree *tree, const char *name,
		       const char *text);
int cfsbw_sysctl_read(const struct cfsbw_tree *tree, const char *name,
		      char *buf, size_t size);

/*
 * Parse a duration: a non-negative decimal number with an optional unit
 * "ns", "us", "ms" or "s" ("1.5ms", "250us", "2s"); a bare number is in
 * units of default_unit_ns (CFSBW_NSEC_PER_USEC for cgroup-file
 * compatibility).  Returns 0 and *out_ns, -EINVAL (not a duration, or a
 * fraction finer than 1 ns) or -ERANGE (above INT64_MAX ns).
 */
int cfsbw_parse_duration(const char *text, int64_t default_unit_ns,
			 int64_t *out_ns);

#ifdef __cplusplus
}
#endif

#endif /* CFSBW_H */
