/*
 * bandwidth.h - the core's private header: the objects behind the opaque
 * types of cfsbw.h, and the internal interfaces between the core's files.
 *
 * One mechanism; each policy is a table of its steps (struct
 * cfsbw_policy_steps, one file per policy).  The files, each calling only
 * the ones below it (`make check-symbols` prints it, `make test` checks it):
 *
 *   files.c       the file interface (section 2, R2)
 *   period.c      timer expiries (R10) and reconfiguration (R4)
 *   account.c     charging (R5, R6, R7): the fast path and the slow path
 *   runqueue.c    tasks coming and going (R9, R10), a runqueue going away
 *   tree.c        the tree of groups, their life cycle, memory
 *   policy.c      the policies side by side: names, facts (R1), steps
 *   policy_v4.c, policy_upstream.c, policy_hardlimits.c   the steps
 *   throttle.c    throttling an account and releasing it (R7, R10, R12)
 *   hierarchy.c   what a throttle means above and below (R11, R9)
 *   pool.c        the pool: runtime taken and given back, its timer (R6)
 *   parse.c       durations
 *
 * Ownership, as in seed 003: an account's runtime_remaining and h_nr_running
 * belong to the thread driving its runqueue while the account is not
 * throttled; a throttled account belongs to its pool (the period and slack
 * timers refill it) and is touched only under the pool lock.  The flag
 * "throttled" is the hand-over: set by the owner under the lock, cleared
 * (with release order, after the refill) by whoever unthrottles it.
 *
 * Lock order: a group's pool lock may be held while an ancestor's is
 * taken (an unthrottle restarting the ancestors' timers), never the
 * reverse.
 */
#ifndef CFSBW_CORE_BANDWIDTH_H
#define CFSBW_CORE_BANDWIDTH_H

#include <stdatomic.h>

#include "cfsbw.h"
#include "common/helpers.h"

/*
 * The pool lock (seed 003's cfs_b->lock).  A spinlock: it guards a few
 * dozen instructions, is never held across a callback that blocks, and
 * keeps the core free of any OS threading library.
 */
struct cfsbw_spinlock {
	atomic_int locked;
};

static inline void spin_lock(struct cfsbw_spinlock *l)
{
	while (atomic_exchange_explicit(&l->locked, 1, memory_order_acquire))
		while (atomic_load_explicit(&l->locked, memory_order_relaxed))
			;
}

static inline void spin_unlock(struct cfsbw_spinlock *l)
{
	atomic_store_explicit(&l->locked, 0, memory_order_release);
}

/*
 * The bandwidth part of one group on one runqueue (struct cfs_rq's).
 * Aligned to a cache line so that runqueues driven by different threads
 * never share one.
 */
/* A throttled account's clock that is not running (times are >= 0). */
#define CFSBW_CLOCK_STOPPED (-1)

struct cfsbw_account {
	/* R6: runtime held locally, ns; <= 0 means "ask the pool". */
	_Alignas(64) int64_t runtime_remaining;
	/* R7: this account is throttled (on its pool's throttled list). */
	atomic_int throttled;
	/* R9: runnable tasks below, not counting throttled sub-trees below. */
	unsigned h_nr_running;
	unsigned rq; /* which runqueue: the index in its group */
	/* hardlimits: runtime this runqueue may use per period, ns. */
	int64_t hl_runtime;
	/*
	 * R12: when its throttled time started counting, on the driver's
	 * clock; CFSBW_CLOCK_STOPPED while it does not count (a policy with
	 * throttled_clock_needs_tasks, no task under it).
	 */
	int64_t throttled_clock;
	/* On the pool's throttled list, in throttling order (R10). */
	struct list_head throttled_link;
};

/*
 * The group's global runtime (struct cfs_bandwidth).  The configuration,
 * read on every charge, sits apart from the lock and the state that the
 * slow path and the timers write, on a cache line of its own.
 */
struct cfsbw_pool {
	/* Configuration: written only by configuration-class calls. */
	int64_t period_ns;
	int64_t quota_ns; /* CFSBW_RUNTIME_INF: unlimited */
	int64_t burst_ns;
	/* R10: the grid of a first start (cfsbw_group_set_period_phase);
	 * negative: one period after it */
	int64_t phase_ns;
	/* State, under lock. */
	_Alignas(64) struct cfsbw_spinlock lock;
	int64_t runtime;      /* R6: left in this period */
	int64_t runtime_snap; /* upstream: pool just after the last refill */
	int64_t expires_ns;   /* next period-timer expiry (0: never armed) */
	int64_t slack_expires_ns;
	atomic_bool timer_active;
	bool slack_started;
	bool idle;            /* upstream: no draw since the last refresh */
	struct list_head throttled;
	/* R10 (v4): accounts with runnable tasks; the timer may stop at 0. */
	atomic_uint nr_busy;
	struct cfsbw_stats stats;
};

struct cfsbw_group {
	/* What every charge reads (R5), on the first cache line: */
	struct cfsbw_tree *tree;
	/* the first group charged: this one when its quota is finite, else
	 * bw_up (group_first_limited), kept so that a charge reads no pool */
	struct cfsbw_group *bw_first;
	/* R5: nearest strict ancestor with a finite quota, or NULL. */
	struct cfsbw_group *bw_up;
	/*
	 * One account per runqueue, in one array so that the accounting path
	 * finds an account with one load.  The array grows, and the accounts
	 * move, only in cfsbw_tree_set_nr_rq(), a configuration-class call:
	 * nobody holds a pointer to an account across it.
	 */
	struct cfsbw_account *acct; /* [acct_cap], tree->nr_rq of them live */
	struct cfsbw_group *parent;
	struct cfsbw_group *first_child, *last_child, *next_sibling;
	struct cfsbw_group *prev_sibling;
	/* names.c: its name is path + name_off, name_len bytes; name_next
	 * links the groups of one bucket of the tree's index */
	struct cfsbw_group *name_next;
	uint32_t name_off, name_len, name_hash;
	unsigned depth;
	unsigned shares;
	char *path;
	void *driver_data;
	unsigned acct_cap;
	struct cfsbw_pool pool;
};

struct cfsbw_tree {
	unsigned nr_rq;
	enum cfsbw_policy policy;
	const struct cfsbw_policy_info *info; /* the policy's facts */
	const struct cfsbw_policy_steps *steps; /* = info->steps */
	int64_t slice_ns; /* sched_cfs_bandwidth_slice_us, in ns */
	bool align_periods; /* cfsbw_tree_align_periods */
	struct cfsbw_ops ops;
	void *ctx;
	struct cfsbw_allocator allocator;
	struct cfsbw_group *root;
	/* names.c: every group but the root, by parent and name */
	struct cfsbw_group **name_buckets;
	size_t nr_name_buckets, nr_named;
};

/* names.c: the index of groups by parent and name.  init fails (-1) only
 * for want of memory; add never fails. */
int cfsbw__names_init(struct cfsbw_tree *tree);
void cfsbw__names_free(struct cfsbw_tree *tree);
void cfsbw__names_add(struct cfsbw_tree *tree, struct cfsbw_group *g);
void cfsbw__names_del(struct cfsbw_tree *tree, struct cfsbw_group *g);
struct cfsbw_group *cfsbw__names_find(const struct cfsbw_tree *tree,
				      const struct cfsbw_group *parent,
				      const char *name, size_t len);

/* The account of g on runqueue rq (< g->tree->nr_rq). */
static inline struct cfsbw_account *group_acct(const struct cfsbw_group *g,
					       unsigned rq)
{
	return &g->acct[rq];
}

static inline bool group_limited(const struct cfsbw_group *g)
{
	return g->pool.quota_ns != CFSBW_RUNTIME_INF;
}

/* R5: the first group on g's path whose accounts are charged. */
static inline struct cfsbw_group *group_first_limited(struct cfsbw_group *g)
{
	return g->bw_first;
}

/*
 * R11: g is throttled on rq itself or through an ancestor.  Only a group
 * with a finite quota ever throttles, so the walk up the limited groups
 * (the chain a charge has just walked) meets every account that can: a
 * load or two, where a count in every account of the subtree cost a walk
 * of the whole subtree at each throttle and each release.
 */
static inline bool group_throttled(const struct cfsbw_group *g, unsigned rq)
{
	for (const struct cfsbw_group *b = g->bw_first; b; b = b->bw_up)
		if (atomic_load_explicit(&group_acct(b, rq)->throttled,
					 memory_order_relaxed))
			return true;
	return false;
}

/* g's bw_first from its quota and bw_up: wherever either changes. */
static inline void group_set_bw_first(struct cfsbw_group *g)
{
	g->bw_first = group_limited(g) ? g : g->bw_up;
}

static inline bool account_is_throttled(const struct cfsbw_account *a)
{
	return atomic_load_explicit(&a->throttled, memory_order_acquire) != 0;
}

/*
 * Pre-order walk of the subtree rooted at top: returns the group after pos,
 * or NULL when the subtree is done.  No recursion, no allocation.
 */
static inline struct cfsbw_group *group_next_pre(struct cfsbw_group *pos,
						 struct cfsbw_group *top)
{
	if (pos->first_child)
		return pos->first_child;
	while (pos != top) {
		if (pos->next_sibling)
			return pos->next_sibling;
		pos = pos->parent;
	}
	return NULL;
}

/*
 * t + d for a time t >= 0 and a duration d >= 0, saturated at INT64_MAX:
 * an expiry near the end of the clock is asked for at INT64_MAX, never
 * wrapped into the past (cfsbw.h).
 */
static inline int64_t time_add_sat(int64_t t, int64_t d)
{
	return t > INT64_MAX - d ? INT64_MAX : t + d;
}

/*
 * *stat += d, saturated at UINT64_MAX: cpu.stat's times never decrease
 * (R12), even where throttled time summed over many runqueues passes 2^64
 * ns near the end of the clock (found by fuzz_files).
 */
static inline void stat_add_sat(uint64_t *stat, uint64_t d)
{
	*stat = *stat > UINT64_MAX - d ? UINT64_MAX : *stat + d;
}

/*
 * The first multiple of period_ns after expires_ns, counted from
 * expires_ns, that is later than now_ns (hrtimer_forward), saturated at
 * INT64_MAX; *overrun (if not NULL) gets how many periods it moved.
 * expires_ns <= now_ns, both >= 0.
 */
static inline int64_t time_forward(int64_t expires_ns, int64_t now_ns,
				   int64_t period_ns, int64_t *overrun)
{
	/* steps * period_ns <= now_ns - expires_ns: no overflow */
	int64_t steps = (now_ns - expires_ns) / period_ns;
	if (overrun)
		*overrun = steps + 1;
	return time_add_sat(expires_ns + steps * period_ns, period_ns);
}

/*
 * A policy's steps: what policies do differently, called by the mechanism
 * (SPEC section 6).  Steps marked "pool lock held" are called with g's
 * pool lock held and never take it.  A NULL step does nothing.
 */
struct cfsbw_policy_steps {
	/*
	 * An account starts afresh: created, or its group reconfigured (R4).
	 * NULL: it holds nothing (account_reset() below).
	 */
	void (*account_reset)(struct cfsbw_group *g, struct cfsbw_account *a);
	/*
	 * R4: the pool after a write of period, quota or burst, the new
	 * values already in place (was_limited: the quota before the write
	 * was finite).  NULL: a full quota.  Pool lock held.
	 */
	void (*reconfigure_pool)(struct cfsbw_group *g, bool was_limited);
	/*
	 * R6: a's runtime ran out on a charge (a is not throttled): refill it.
	 * Returns true when a must throttle (R7).  Pool lock held.
	 */
	bool (*refill)(struct cfsbw_group *g, struct cfsbw_account *a,
		       int64_t now_ns);
	/*
	 * R10: the period timer fired, overrun periods late (>= 1).  Returns
	 * false when the timer may stop.  Pool lock held.
	 */
	bool (*refresh)(struct cfsbw_group *g, int64_t overrun, int64_t now_ns);
	/*
	 * a's runqueue goes away: what a holds goes back, and a starts afresh.
	 * Fires no callback.  Pool lock held.
	 */
	void (*offline)(struct cfsbw_group *g, struct cfsbw_account *a,
			int64_t now_ns);
	/* a, not throttled, has no runnable task left.  Takes the pool lock. */
	void (*went_idle)(struct cfsbw_group *g, struct cfsbw_account *a,
			  int64_t now_ns);
	/* The slack timer fired: the next expiry or CFSBW_TIMER_STOP.  Pool
	 * lock held. */
	int64_t (*slack_timer_fire)(struct cfsbw_group *g, int64_t now_ns);
};

/* An account starts afresh, as its policy says: by default, empty. */
static inline void account_reset(struct cfsbw_group *g, struct cfsbw_account *a)
{
	if (g->tree->steps->account_reset)
		g->tree->steps->account_reset(g, a);
	else
		a->runtime_remaining = 0;
}

/*
 * A policy's facts, side by side with the other policies' in policy.c's
 * POLICY_LIST, and its steps.
 */
struct cfsbw_policy_info {
	int64_t default_period_ns; /* R1 */
	int64_t default_slice_ns;  /* R1: sched_cfs_bandwidth_slice_us */
	bool has_burst;            /* cpu.cfs_burst_us, cpu.stat's bursts */
	/*
	 * R12: a throttled account's clock runs only while a task waits
	 * under it (upstream, Linux 6.18: the clock starts when the throttle
	 * first takes a task off the queue), not from the throttle to the
	 * release.
	 */
	bool throttled_clock_needs_tasks;
	const struct cfsbw_policy_steps *steps;
};

/* policy.c: policy p (< CFSBW_POLICY_COUNT). */
const struct cfsbw_policy_info *cfsbw__policy_info(enum cfsbw_policy p);
/* policy_v4.c, policy_upstream.c, policy_hardlimits.c */
extern const struct cfsbw_policy_steps cfsbw__policy_v4;
extern const struct cfsbw_policy_steps cfsbw__policy_upstream;
extern const struct cfsbw_policy_steps cfsbw__policy_hardlimits;

/* tree.c: recompute bw_up below g after g's quota became (un)limited. */
void cfsbw__group_update_bw_links(struct cfsbw_group *g);

/* period.c: R4, validated by the caller (files.c). */
int cfsbw__group_set_bandwidth(struct cfsbw_group *g, int64_t period_ns,
			       int64_t quota_ns, int64_t burst_ns,
			       int64_t now_ns);

/* throttle.c, pool lock held */
void cfsbw__account_throttle(struct cfsbw_group *g, struct cfsbw_account *a,
			     int64_t now_ns);
void cfsbw__account_unthrottle(struct cfsbw_group *g, struct cfsbw_account *a,
			       int64_t now_ns);
void cfsbw__account_forget_throttle(struct cfsbw_group *g,
				    struct cfsbw_account *a, int64_t now_ns);
/* R10: hand the pool to throttled accounts, in the order they throttled:
 * a slice each (v4), or what clears each one's debt (upstream). */
void cfsbw__distribute_slices(struct cfsbw_group *g, int64_t now_ns);
void cfsbw__distribute_debts(struct cfsbw_group *g, int64_t now_ns);

/* hierarchy.c: R11 and R9 bookkeeping when an account (un)throttles. */
void cfsbw__hierarchy_throttle(struct cfsbw_group *g, unsigned rq,
			       int64_t now_ns);
void cfsbw__hierarchy_unthrottle(struct cfsbw_group *g, unsigned rq,
				 int64_t now_ns);
/* hierarchy.c, takes the pool lock when it acts */
void cfsbw__account_throttled_clock(struct cfsbw_group *g,
				    struct cfsbw_account *a, unsigned before,
				    int64_t now_ns);
void cfsbw__account_add_h_nr(struct cfsbw_group *g, struct cfsbw_account *a,
			     int delta);

/* pool.c, pool lock held */
void cfsbw__pool_start_timer(struct cfsbw_group *g, int64_t now_ns);
int64_t cfsbw__pool_take(struct cfsbw_group *g, int64_t want_ns);
void cfsbw__pool_return(struct cfsbw_group *g, int64_t amount_ns);
void cfsbw__pool_assign(struct cfsbw_group *g, struct cfsbw_account *a,
			int64_t want_ns, int64_t now_ns);

/* Limits of R2 (linux-upstream.md section 2). */
#define MIN_CFS_QUOTA_US INT64_C(1000)
#define MIN_CFS_PERIOD_US INT64_C(1000)
#define MAX_CFS_PERIOD_US INT64_C(1000000)
#define MAX_CFS_QUOTA_US ((INT64_C(1) << 44) - 1) /* max_cfs_runtime */
#define MIN_SHARES 2u
#define MAX_SHARES 262144u
#define DEFAULT_SHARES 1024u

#endif /* CFSBW_CORE_BANDWIDTH_H */
