/*
 * bandwidth.h - the core's private header: the objects behind the opaque
 * types of cfsbw.h, and the internal interfaces between the core's files.
 *
 *   tree.c       the tree of groups, their life cycle, memory
 *   account.c    charging (R5, R6, R7): the fast path and the slice request
 *   hierarchy.c  effective throttling (R11), runnable counts (R9), offline
 *   period.c     the period and slack timers (R10), reconfiguration (R4)
 *   hardlimits.c the hard-limits policy (seeds 009-011)
 *   files.c      the file interface (section 2, R2)
 *   parse.c      integers as the kernel parses them, durations
 *   policy.c     policy names and defaults (R1)
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
struct cfsbw_account {
	/* R6: runtime held locally, ns; <= 0 means "ask the pool". */
	_Alignas(64) int64_t runtime_remaining;
	/* R7: this account is throttled (on its pool's throttled list). */
	atomic_int throttled;
	/* R11: throttled accounts at or above this one on this runqueue. */
	atomic_int throttle_count;
	/* R9: runnable tasks below, not counting throttled sub-trees below. */
	unsigned h_nr_running;
	unsigned rq; /* which runqueue: the index in its group */
	/* hardlimits: runtime this runqueue may use per period, ns. */
	int64_t hl_runtime;
	/* R12: when it throttled, on the driver's clock. */
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
	struct cfsbw_tree *tree;
	struct cfsbw_group *parent;
	struct cfsbw_group *first_child, *last_child, *next_sibling;
	/* R5: nearest strict ancestor with a finite quota, or NULL. */
	struct cfsbw_group *bw_up;
	unsigned depth;
	unsigned shares;
	char *path;
	void *driver_data;
	/*
	 * One account per runqueue, in one array so that the accounting path
	 * finds an account with one load.  The array grows, and the accounts
	 * move, only in cfsbw_tree_set_nr_rq(), a configuration-class call:
	 * nobody holds a pointer to an account across it.
	 */
	struct cfsbw_account *acct; /* [acct_cap], tree->nr_rq of them live */
	unsigned acct_cap;
	struct cfsbw_pool pool;
};

struct cfsbw_tree {
	unsigned nr_rq;
	enum cfsbw_policy policy;
	int64_t slice_ns; /* sched_cfs_bandwidth_slice_us, in ns */
	struct cfsbw_ops ops;
	void *ctx;
	struct cfsbw_allocator allocator;
	struct cfsbw_group *root;
};

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
	return group_limited(g) ? g : g->bw_up;
}

static inline bool account_is_throttled(const struct cfsbw_account *a)
{
	return atomic_load_explicit(&a->throttled, memory_order_acquire) != 0;
}

/*
 * Pre-order walk of the subtree rooted at top: returns the group after pos,
 * or NULL when the subtree is done.  No recursion, no allocation.
 */
struct cfsbw_group *__group_next_pre(struct cfsbw_group *pos,
				     struct cfsbw_group *top);

/* policy.c */
int64_t __policy_default_period_ns(enum cfsbw_policy policy);
int64_t __policy_default_slice_ns(enum cfsbw_policy policy);

/* tree.c: recompute bw_up below g after g's quota became (un)limited. */
void __group_update_bw_links(struct cfsbw_group *g);

/* account.c, under the pool lock */
void __account_throttle(struct cfsbw_group *g, struct cfsbw_account *a,
			int64_t now_ns);
void __account_unthrottle(struct cfsbw_group *g, struct cfsbw_account *a,
			  int64_t now_ns);

/* hierarchy.c: R11 and R9 bookkeeping when an account (un)throttles. */
void __hierarchy_throttle(struct cfsbw_group *g, unsigned rq);
void __hierarchy_unthrottle(struct cfsbw_group *g, unsigned rq,
			    int64_t now_ns);
void __account_add_h_nr(struct cfsbw_group *g, struct cfsbw_account *a,
			int delta);

/* period.c */
void __pool_start_timer(struct cfsbw_group *g, int64_t now_ns);
int64_t __pool_take(struct cfsbw_group *g, int64_t want_ns);
int __group_set_bandwidth(struct cfsbw_group *g, int64_t period_ns,
			  int64_t quota_ns, int64_t burst_ns, int64_t now_ns);
void __upstream_return_slack(struct cfsbw_group *g, struct cfsbw_account *a,
			     int64_t now_ns);
void __pool_return(struct cfsbw_group *g, int64_t amount_ns, int64_t now_ns);

/* hardlimits.c */
bool __hardlimits_charge(struct cfsbw_group *g, struct cfsbw_account *a,
			 int64_t now_ns);
bool __hardlimits_refresh(struct cfsbw_group *g, int64_t overrun,
			  int64_t now_ns);
void __hardlimits_reset(struct cfsbw_group *g);
void __hardlimits_offline(struct cfsbw_group *g, struct cfsbw_account *a);

/* Limits of R2 (linux-upstream.md section 2). */
#define MIN_CFS_QUOTA_US INT64_C(1000)
#define MIN_CFS_PERIOD_US INT64_C(1000)
#define MAX_CFS_PERIOD_US INT64_C(1000000)
#define MAX_CFS_QUOTA_US ((INT64_C(1) << 44) - 1) /* max_cfs_runtime */
#define MIN_SHARES 2u
#define MAX_SHARES 262144u
#define DEFAULT_SHARES 1024u

#endif /* CFSBW_CORE_BANDWIDTH_H */
