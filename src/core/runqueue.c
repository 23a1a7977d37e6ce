/*
 * runqueue.c - what the driver reports about its runqueues: tasks becoming
 * runnable and stopping (R9, seed 007; R10: runnable tasks start their
 * groups' period timers), and a runqueue going away.
 */
#include "core/bandwidth.h"

void cfsbw_task_enqueue(struct cfsbw_group *g, unsigned rq, int64_t now_ns)
{
	BUG_ON(rq >= g->tree->nr_rq);
	/* R9: count the task up to the first throttled level (seed 007). */
	for (struct cfsbw_group *c = g; c; c = c->parent) {
		struct cfsbw_account *a = group_acct(c, rq);
		unsigned before = a->h_nr_running;
		cfsbw__account_add_h_nr(c, a, 1);
		if (account_is_throttled(a)) {
			/* R12: the first task waiting under it. */
			cfsbw__account_throttled_clock(c, a, before, now_ns);
			break;
		}
	}
	/* R10: a runnable task starts its groups' period timers. */
	for (struct cfsbw_group *b = group_first_limited(g); b; b = b->bw_up) {
		if (atomic_load_explicit(&b->pool.timer_active,
					 memory_order_relaxed))
			continue;
		spin_lock(&b->pool.lock);
		cfsbw__pool_start_timer(b, now_ns);
		spin_unlock(&b->pool.lock);
	}
}

void cfsbw_task_dequeue(struct cfsbw_group *g, unsigned rq, int64_t now_ns)
{
	const struct cfsbw_policy_steps *steps = g->tree->steps;

	BUG_ON(rq >= g->tree->nr_rq);
	for (struct cfsbw_group *c = g; c; c = c->parent) {
		struct cfsbw_account *a = group_acct(c, rq);
		BUG_ON(a->h_nr_running == 0);
		unsigned before = a->h_nr_running;
		cfsbw__account_add_h_nr(c, a, -1);
		bool stop = account_is_throttled(a);
		/* upstream: an account that goes idle returns its slack. */
		if (a->h_nr_running == 0 && !stop && group_limited(c) &&
		    steps->went_idle)
			steps->went_idle(c, a, now_ns);
		if (stop) {
			/* R12: the last task gone from under it. */
			cfsbw__account_throttled_clock(c, a, before, now_ns);
			break;
		}
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
 * account on rq starts afresh, the policy giving back what it held.
 */
void cfsbw_rq_offline(struct cfsbw_tree *tree, unsigned rq, int64_t now_ns)
{
	BUG_ON(rq >= tree->nr_rq);
	for (struct cfsbw_group *g = tree->root; g;
	     g = group_next_pre(g, tree->root)) {
		struct cfsbw_account *a = group_acct(g, rq);
		struct cfsbw_pool *pool = &g->pool;

		spin_lock(&pool->lock);
		if (account_is_throttled(a))
			cfsbw__account_forget_throttle(g, a, now_ns);
		if (group_limited(g)) {
			tree->steps->offline(g, a, now_ns);
			if (a->h_nr_running)
				atomic_fetch_sub_explicit(&pool->nr_busy, 1,
							  memory_order_relaxed);
		}
		a->h_nr_running = 0;
		spin_unlock(&pool->lock);
	}
}
