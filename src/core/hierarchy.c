/*
 * hierarchy.c - what a throttle means above the throttled account, on
 * its runqueue:
 *  - R9 (seed 007): the runnable tasks below a throttled account vanish
 *    from its ancestors' counts, so the root count says whether the
 *    runqueue has anything that can run.
 *  - R11 writes nothing below it: "is this group effectively throttled?"
 *    reads the throttled flags of the limited groups from it up
 *    (group_throttled()), the chain every charge walks anyway.
 * The period timer's idle rule (R10) watches the same counts.
 */
#include "core/bandwidth.h"

/* The root never throttles: the walk up always ends there or earlier. */

void cfsbw__account_add_h_nr(struct cfsbw_group *g, struct cfsbw_account *a,
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
 * R12, throttled_clock_needs_tasks (upstream): Linux 6.18 counts a
 * throttled queue's time from when the throttle first takes a task off it
 * (eb962f251fbb), so a queue throttled as its last task went to sleep
 * counts nothing until a task wakes under it.  Called when a's count of runnable tasks went from before to what it
 * is: if a is throttled and the count left or reached zero, its clock
 * starts, or stops and what it counted is added.
 */
void cfsbw__account_throttled_clock(struct cfsbw_group *g,
				    struct cfsbw_account *a, unsigned before,
				    int64_t now_ns)
{
	if (!g->tree->info->throttled_clock_needs_tasks ||
	    (before == 0) == (a->h_nr_running == 0) || !account_is_throttled(a))
		return;
	spin_lock(&g->pool.lock);
	if (account_is_throttled(a)) {
		bool running = a->throttled_clock != CFSBW_CLOCK_STOPPED;
		if (a->h_nr_running > 0 && !running) {
			a->throttled_clock = now_ns;
		} else if (a->h_nr_running == 0 && running) {
			if (now_ns > a->throttled_clock)
				stat_add_sat(&g->pool.stats.throttled_time,
					     (uint64_t)(now_ns -
							a->throttled_clock));
			a->throttled_clock = CFSBW_CLOCK_STOPPED;
		}
	}
	spin_unlock(&g->pool.lock);
}

/*
 * R9: add delta to each ancestor of g on rq up to and including the first
 * throttled one, whose own count still includes what is below it.
 *
 * R10: tasks that reappear (delta > 0) under limited ancestors are tasks of
 * those groups becoming runnable: their period timers start if stopped, up
 * to the same first throttled ancestor, which still hides them (only a
 * limited group is ever throttled).  Takes the ancestors' pool locks while
 * the caller holds g's (descendant first).
 */
static void propagate_h_nr(struct cfsbw_group *g, unsigned rq, int delta,
			   int64_t now_ns)
{
	for (struct cfsbw_group *p = g->parent; p && delta; p = p->parent) {
		struct cfsbw_account *pa = group_acct(p, rq);
		unsigned before = pa->h_nr_running;
		cfsbw__account_add_h_nr(p, pa, delta);
		if (delta > 0 && group_limited(p) &&
		    !atomic_load_explicit(&p->pool.timer_active,
					  memory_order_relaxed)) {
			spin_lock(&p->pool.lock);
			cfsbw__pool_start_timer(p, now_ns);
			spin_unlock(&p->pool.lock);
		}
		if (account_is_throttled(pa)) {
			cfsbw__account_throttled_clock(p, pa, before, now_ns);
			break;
		}
	}
}

void cfsbw__hierarchy_throttle(struct cfsbw_group *g, unsigned rq,
			       int64_t now_ns)
{
	propagate_h_nr(g, rq, -(int)group_acct(g, rq)->h_nr_running, now_ns);
}

void cfsbw__hierarchy_unthrottle(struct cfsbw_group *g, unsigned rq,
			    int64_t now_ns)
{
	propagate_h_nr(g, rq, (int)group_acct(g, rq)->h_nr_running, now_ns);
}
