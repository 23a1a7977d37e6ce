/*
 * hierarchy.c - what a throttle means below and above the throttled
 * account, on its runqueue:
 *  - R11: every account in the group's subtree counts one more throttled
 *    level (throttle_count), so "is this task's group effectively
 *    throttled?" is one load on the accounting path, whatever the depth.
 *  - R9 (seed 007): the runnable tasks below a throttled account vanish
 *    from its ancestors' counts, so the root count says whether the
 *    runqueue has anything that can run.
 * The period timer's idle rule (R10) watches the same counts.
 */
#include "core/bandwidth.h"

/* The root never throttles: the walk up always ends there or earlier. */

void __account_add_h_nr(struct cfsbw_group *g, struct cfsbw_account *a,
			int delta)
{
	unsigned before = a->h_nr_running;
	a->h_nr_running = (unsigned)((int)before + delta);
	BUG_ON((int)before + delta < 0);
	if (!group_limited(g))
		return;
	/* R10: the pool knows how many of its accounts have work. */
	if (before == 0 && a->h_nr_running > 0)
		atomic_fetch_add_explicit(&g->pool.nr_busy, 1,
					  memory_order_relaxed);
	else if (before > 0 && a->h_nr_running == 0)
		atomic_fetch_sub_explicit(&g->pool.nr_busy, 1,
					  memory_order_relaxed);
}

/*
 * R9: add delta to each ancestor of g on rq up to and including the first
 * throttled one, whose own count still includes what is below it.
 */
static void propagate_h_nr(struct cfsbw_group *g, unsigned rq, int delta)
{
	for (struct cfsbw_group *p = g->parent; p && delta; p = p->parent) {
		struct cfsbw_account *pa = group_acct(p, rq);
		__account_add_h_nr(p, pa, delta);
		if (account_is_throttled(pa))
			break;
	}
}

void __hierarchy_throttle(struct cfsbw_group *g, unsigned rq)
{
	for (struct cfsbw_group *d = g; d; d = __group_next_pre(d, g))
		atomic_fetch_add_explicit(&group_acct(d, rq)->throttle_count, 1,
					  memory_order_relaxed);
	propagate_h_nr(g, rq, -(int)group_acct(g, rq)->h_nr_running);
}

/*
 * R10: tasks that reappear under limited ancestors are tasks of those
 * groups becoming runnable: their period timers start if stopped.  Up to
 * the first throttled ancestor, which still hides them.  Takes the
 * ancestors' pool locks while the caller holds g's (descendant first).
 */
static void start_ancestor_timers(struct cfsbw_group *g, unsigned rq,
				  int64_t now_ns)
{
	for (struct cfsbw_group *p = g->bw_up; p; p = p->bw_up) {
		if (!atomic_load_explicit(&p->pool.timer_active,
					  memory_order_relaxed)) {
			spin_lock(&p->pool.lock);
			__pool_start_timer(p, now_ns);
			spin_unlock(&p->pool.lock);
		}
		if (account_is_throttled(group_acct(p, rq)))
			break;
	}
}

void __hierarchy_unthrottle(struct cfsbw_group *g, unsigned rq,
			    int64_t now_ns)
{
	for (struct cfsbw_group *d = g; d; d = __group_next_pre(d, g))
		atomic_fetch_sub_explicit(&group_acct(d, rq)->throttle_count, 1,
					  memory_order_relaxed);
	unsigned nr = group_acct(g, rq)->h_nr_running;
	propagate_h_nr(g, rq, (int)nr);
	if (nr)
		start_ancestor_timers(g, rq, now_ns);
}

void cfsbw_task_enqueue(struct cfsbw_group *g, unsigned rq, int64_t now_ns)
{
	BUG_ON(rq >= g->tree->nr_rq);
	/* R9: count the task up to the first throttled level (seed 007). */
	for (struct cfsbw_group *c = g; c; c = c->parent) {
		struct cfsbw_account *a = group_acct(c, rq);
		__account_add_h_nr(c, a, 1);
		if (account_is_throttled(a))
			break;
	}
	/* R10: a runnable task starts its groups' period timers. */
	for (struct cfsbw_group *b = group_first_limited(g); b; b = b->bw_up) {
		if (atomic_load_explicit(&b->pool.timer_active,
					 memory_order_relaxed))
			continue;
		spin_lock(&b->pool.lock);
		__pool_start_timer(b, now_ns);
		spin_unlock(&b->pool.lock);
	}
}

void cfsbw_task_dequeue(struct cfsbw_group *g, unsigned rq, int64_t now_ns)
{
	BUG_ON(rq >= g->tree->nr_rq);
	for (struct cfsbw_group *c = g; c; c = c->parent) {
		struct cfsbw_account *a = group_acct(c, rq);
		BUG_ON(a->h_nr_running == 0);
		__account_add_h_nr(c, a, -1);
		bool stop = account_is_throttled(a);
		/* upstream: an account that goes idle returns its slack. */
		if (a->h_nr_running == 0 && !stop && group_limited(c) &&
		    g->tree->policy == CFSBW_POLICY_UPSTREAM)
			__upstream_return_slack(c, a, now_ns);
		if (stop)
			break;
	}
}

unsigned cfsbw_rq_nr_running(const struct cfsbw_tree *tree, unsigned rq)
{
	return group_acct(tree->root, rq)->h_nr_running;
}

unsigned cfsbw_group_h_nr_running(const struct cfsbw_group *g, unsigned rq)
{
	return group_acct(g, rq)->h_nr_running;
}

/*
 * A runqueue goes away.  Walk top-down so that each throttled account is
 * released before its descendants look at their counts; then every
 * account on rq starts afresh.  Its unused runtime goes back to the pool
 * (a process that lived 2 ms must not strand the rest of its slice), but
 * never beyond what a period may hand out (R13).
 */
void cfsbw_rq_offline(struct cfsbw_tree *tree, unsigned rq, int64_t now_ns)
{
	BUG_ON(rq >= tree->nr_rq);
	for (struct cfsbw_group *g = tree->root; g;
	     g = __group_next_pre(g, tree->root)) {
		struct cfsbw_account *a = group_acct(g, rq);
		struct cfsbw_pool *pool = &g->pool;

		spin_lock(&pool->lock);
		if (account_is_throttled(a)) {
			if (now_ns > a->throttled_clock)
				pool->stats.throttled_time +=
					(uint64_t)(now_ns - a->throttled_clock);
			list_del(&a->throttled_link);
			atomic_store_explicit(&a->throttled, 0,
					      memory_order_release);
		}
		if (group_limited(g)) {
			if (tree->policy == CFSBW_POLICY_HARDLIMITS) {
				__hardlimits_offline(g, a);
			} else if (a->runtime_remaining > 0) {
				__pool_return(g, a->runtime_remaining, now_ns);
			}
			if (tree->policy != CFSBW_POLICY_HARDLIMITS)
				a->runtime_remaining = 0;
			if (a->h_nr_running)
				atomic_fetch_sub_explicit(&pool->nr_busy, 1,
							  memory_order_relaxed);
		}
		a->h_nr_running = 0;
		atomic_store_explicit(&a->throttle_count, 0,
				      memory_order_relaxed);
		spin_unlock(&pool->lock);
	}
}
