/*
 * group.c - the driver's data per group: the processes in it, its usage
 * (cpuacct.usage), and its period and slack timers: when they are due and
 * what an expiry does (R9, R10).
 *
 * The core asks for one period timer per group (R10) and, under the
 * upstream policy, one slack timer.  With many groups, a POSIX timer each
 * would cost a system call per re-arm and a signal per expiry; instead the
 * groups' timers are kept in one binary heap keyed by (deadline, sequence)
 * and one POSIX timer (HOST_TIMER_GROUPS) is set for the earliest: one
 * wake-up serves every group whose period ends then, and nothing is ever
 * scanned (STYLE: "Timers live in a heap").  The POSIX timer is set only
 * when the earliest deadline changes, once per batch of events
 * (cfsbw_host__gtimers_sync), not at each core callback.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "host/host_int.h"

/* ---- the heap ---- */

static bool gt_before(const struct host_gtimer *a, const struct host_gtimer *b)
{
	if (a->at_ns != b->at_ns)
		return a->at_ns < b->at_ns;
	return a->seq < b->seq;
}

static void gt_put(struct cfsbw_host *h, unsigned i, struct host_gtimer *t)
{
	h->gt_heap[i] = t;
	t->idx = i;
}

static void gt_up(struct cfsbw_host *h, unsigned i)
{
	struct host_gtimer *t = h->gt_heap[i];
	while (i > 0) {
		unsigned parent = (i - 1) / 2;
		if (!gt_before(t, h->gt_heap[parent]))
			break;
		gt_put(h, i, h->gt_heap[parent]);
		i = parent;
	}
	gt_put(h, i, t);
}

static void gt_down(struct cfsbw_host *h, unsigned i)
{
	struct host_gtimer *t = h->gt_heap[i];
	for (;;) {
		unsigned c = 2 * i + 1;
		if (c >= h->gt_len)
			break;
		if (c + 1 < h->gt_len && gt_before(h->gt_heap[c + 1], h->gt_heap[c]))
			c++;
		if (!gt_before(h->gt_heap[c], t))
			break;
		gt_put(h, i, h->gt_heap[c]);
		i = c;
	}
	gt_put(h, i, t);
}

static void gt_remove(struct cfsbw_host *h, struct host_gtimer *t)
{
	if (t->idx == HOST_GT_NONE)
		return;
	unsigned i = t->idx;
	t->idx = HOST_GT_NONE;
	h->gt_len--;
	if (i == h->gt_len)
		return;
	gt_put(h, i, h->gt_heap[h->gt_len]);
	gt_up(h, i);
	gt_down(h, h->gt_heap[i]->idx);
}

void cfsbw_host__gtimer_set(struct cfsbw_host *h, struct host_group *grp,
			    enum host_gtimer_kind kind, int64_t at_ns)
{
	struct host_gtimer *t = &grp->timers[kind];
	gt_remove(h, t);
	if (at_ns < 0)
		return;
	/* Room was made with the group (group_new): no allocation here. */
	BUG_ON(h->gt_len >= h->gt_cap);
	t->at_ns = at_ns;
	t->seq = h->gt_seq++;
	gt_put(h, h->gt_len++, t);
	gt_up(h, t->idx);
}

void cfsbw_host__gtimers_sync(struct cfsbw_host *h)
{
	const struct host_gtimer *top = h->gt_len ? h->gt_heap[0] : NULL;
	int64_t at = top ? top->at_ns : 0;
	if (at == h->gt_armed_ns)
		return;
	/*
	 * Periodic, at the earliest group's period: with one group, or
	 * groups whose periods end together, the next expiry is already set
	 * and a period costs no timer_settime (one of about 15 system calls
	 * per group and period, docs/host.md section 11).  An expiry that no
	 * group needs any more is one spare wake-up, which sets the timer
	 * anew.
	 */
	int64_t interval = top && top->kind == HOST_GT_PERIOD
				   ? cfsbw_group_period_ns(top->grp->g)
				   : 0;
	h->gt_armed_ns = at;
	h->gt_interval_ns = interval;
	struct itimerspec its = {cfsbw_host__ns_to_ts(interval),
				 cfsbw_host__ns_to_ts(at)};
	int rc = timer_settime(h->timers[HOST_TIMER_GROUPS], TIMER_ABSTIME,
			       &its, NULL);
	BUG_ON(rc < 0);
}

/* ---- the period and slack timers (R9, R10) ---- */

/* Every thread of p asleep now, by /proc (one look each). */
static bool proc_asleep(struct host_proc *p)
{
	for (struct host_thread *t = p->threads; t; t = t->proc_next)
		if (!cfsbw_host__thread_reads_asleep(p, t))
			return false;
	return p->threads != NULL;
}

/*
 * R9, R10: the driver cannot see a process fall asleep without polling, so
 * at each expiry it looks at the group's processes whose CPU time did not
 * grow during the whole period before (their timers did not fire: one
 * clock read each, and only for them).  Those that still have not run are
 * dequeued as idle, and their CPU-time timer is armed for their next tick
 * of CPU, which enqueues them again.  When every process of the group
 * sleeps, the period timer stops, as the kernel's does, and nr_periods
 * stops counting.
 *
 * Under the upstream policy a runqueue that goes idle gives its runtime
 * back to the pool but 1 ms, at once (return_cfs_rq_runtime), and only
 * runtime in the pool carries over as a burst.  The driver does not see
 * a process fall asleep; at a refresh it looks: a process that ran in
 * the period and sleeps now is dequeued as idle too, so that what it
 * drew and did not use is the pool's before the refill, as in the kernel
 * (a server at 0.11 CPU under 26 ms and a 26 ms burst per 100 ms was
 * throttled in 15% of periods here, 5% in the kernel's cgroup).  A
 * process with a thread running is left alone.  Only with a burst:
 * without one nothing carries over, the process keeps its slice as
 * before, and the same server's p99 under 32 ms per 100 ms stayed with
 * the kernel's (153 and 156 ms; the kernel 133 to 153 ms over 4 runs),
 * where with the look it fell to 124 to 137 ms over 4 (one account per
 * process holds no runtime stranded on another CPU, as the kernel's
 * per-CPU accounts do).
 */
static void idle_scan(struct cfsbw_host *h, struct host_group *grp,
		      uint64_t seq)
{
	bool slack = cfsbw_tree_policy(h->tree) == CFSBW_POLICY_UPSTREAM &&
		     cfsbw_group_burst_ns(grp->g) > 0;
	list_for_each_entry(p, &grp->procs, struct host_proc, grp_link) {
		if (p->idle || p->throttled || !p->enqueued)
			continue;
		bool quiet = p->active_seq + 1 < seq; /* no CPU for a period */
		if (!quiet && !(slack && proc_asleep(p)))
			continue;
		int64_t cpu = cfsbw_host__clock_ns(p->clock);
		if (cpu < 0)
			continue;
		if (cpu > p->last_cpu_ns) {
			cfsbw_host__charge_to(h, p, cpu, true);
			if (quiet || p->throttled || !p->enqueued)
				continue;
		}
		p->idle = true;
		grp->nr_idle++;
		p->enqueued = false;
		cfsbw_task_dequeue(grp->g, p->rq, cfsbw_host_now_ns());
		cfsbw_host__cputimer_arm(h, p);
	}
}

/*
 * The processes of an unlimited group have no period timer of their own:
 * the nearest limited ancestor's looks at them too (R9, R11), down to the
 * next limited group, which has its own timer.
 */
static void idle_scan_tree(struct cfsbw_host *h, struct host_group *grp,
			   uint64_t seq, unsigned depth)
{
	idle_scan(h, grp, seq);
	if (depth > 64)
		return;
	for (struct cfsbw_group *c = cfsbw_group_first_child(grp->g); c;
	     c = cfsbw_group_next_sibling(c)) {
		struct host_group *cg = cfsbw_group_driver_data(c);
		if (cg && cfsbw_group_quota_ns(c) == CFSBW_RUNTIME_INF)
			idle_scan_tree(h, cg, seq, depth + 1);
	}
}

static void gtimer_fire(struct cfsbw_host *h, struct host_group *grp,
			enum host_gtimer_kind kind, int64_t now_ns)
{
	int64_t next;
	/* Throttles until the refresh is over are marked, not stopped yet
	 * ("stops deferred", above). */
	h->defer_stops = true;
	/* What ran on promises belongs to the period ending (R10). */
	cfsbw_host__reach_take_back(h, grp);
	if (kind == HOST_GT_PERIOD) {
		grp->period_seq++;
		idle_scan_tree(h, grp, grp->period_seq, 0);
		next = cfsbw_period_timer_fire(grp->g, now_ns);
	} else {
		next = cfsbw_slack_timer_fire(grp->g, now_ns);
	}
	if (next != CFSBW_TIMER_STOP)
		cfsbw_host__gtimer_set(h, grp, kind, next);
	/* R10: resumed processes are charged what they ran and re-armed. */
	cfsbw_host__run_arm_list(h);
	cfsbw_host__reach_rearm(h, grp);
	cfsbw_host__reach_check(h, grp);
	cfsbw_host__stops_flush(h);
}

void cfsbw_host__gtimers_run(struct cfsbw_host *h, int64_t now_ns)
{
	/* It fired: a one-shot timer is off, a periodic one is set for its
	 * next expiry after now (the kernel skips the ones it overran). */
	if (!h->gt_interval_ns)
		h->gt_armed_ns = 0;
	while (h->gt_interval_ns && h->gt_armed_ns <= now_ns)
		h->gt_armed_ns += h->gt_interval_ns;
	while (h->gt_len && h->gt_heap[0]->at_ns <= now_ns) {
		struct host_gtimer *t = h->gt_heap[0];
		gt_remove(h, t);
		gtimer_fire(h, t->grp, t->kind, now_ns);
	}
	cfsbw_host__gtimers_sync(h);
}

/* ---- groups ---- */

static struct host_group *group_new(struct cfsbw_host *h,
				    struct cfsbw_group *g,
				    struct host_group *parent)
{
	unsigned need = HOST_NR_GT * (h->nr_groups + 1);
	if (need > h->gt_cap) {
		unsigned cap = h->gt_cap ? h->gt_cap * 2 : 16;
		if (cap < need)
			cap = need;
		struct host_gtimer **heap =
			realloc(h->gt_heap, cap * sizeof(*heap));
		if (!heap)
			return NULL;
		h->gt_heap = heap;
		h->gt_cap = cap;
	}
	struct host_group *grp = calloc(1, sizeof(*grp));
	if (!grp)
		return NULL;
	grp->g = g;
	grp->parent = parent;
	for (int k = 0; k < HOST_NR_GT; k++) {
		grp->timers[k].idx = HOST_GT_NONE;
		grp->timers[k].grp = grp;
		grp->timers[k].kind = (enum host_gtimer_kind)k;
	}
	list_init(&grp->procs);
	list_add_tail(&h->groups, &grp->all_link);
	h->nr_groups++;
	cfsbw_group_set_driver_data(g, grp);
	return grp;
}

/*
 * The heap holds at most HOST_NR_GT timers per group, and room for them is
 * made with the group (group_new), so that setting a timer from inside a
 * core callback never allocates.
 */
struct host_group *cfsbw_host__group_get(struct cfsbw_host *h,
					 struct cfsbw_group *g)
{
	struct host_group *grp = cfsbw_group_driver_data(g);
	if (grp)
		return grp;
	struct host_group *parent = NULL;
	if (cfsbw_group_parent(g)) {
		parent = cfsbw_host__group_get(h, cfsbw_group_parent(g));
		if (!parent)
			return NULL;
	}
	return group_new(h, g, parent);
}

static void group_free(struct cfsbw_host *h, struct host_group *grp)
{
	for (int k = 0; k < HOST_NR_GT; k++)
		gt_remove(h, &grp->timers[k]);
	list_del(&grp->all_link);
	h->nr_groups--;
	cfsbw_group_set_driver_data(grp->g, NULL);
	free(grp);
}

void cfsbw_host__groups_free(struct cfsbw_host *h)
{
	list_for_each_entry_safe(grp, &h->groups, struct host_group, all_link)
		group_free(h, grp);
	free(h->gt_heap);
	h->gt_heap = NULL;
	h->gt_len = h->gt_cap = 0;
}

void cfsbw_host__group_add_proc(struct host_group *grp, struct host_proc *p)
{
	p->grp = grp;
	list_add_tail(&grp->procs, &p->grp_link);
	grp->nr_procs++;
}

void cfsbw_host__group_del_proc(struct host_group *grp, struct host_proc *p)
{
	list_del(&p->grp_link);
	p->grp = NULL;
	grp->nr_procs--;
}

struct host_group *cfsbw_host__clock_group(struct host_proc *p)
{
	for (struct host_group *a = p->grp; a; a = a->parent)
		if (cfsbw_group_quota_ns(a->g) != CFSBW_RUNTIME_INF)
			return a;
	return p->grp;
}

/* ---- the public queries ---- */

static struct host_group *grp_of(const struct cfsbw_host *h,
				 const struct cfsbw_group *g)
{
	if (!g || cfsbw_group_tree(g) != h->tree)
		return NULL;
	return cfsbw_group_driver_data(g);
}

struct cfsbw_group *cfsbw_host_group_of(struct cfsbw_host *h, pid_t pid)
{
	struct host_thread *t = cfsbw_host__thread_find(h, pid);
	if (!t || t->proc->pid != pid || !t->proc->grp)
		return NULL;
	return t->proc->grp->g;
}

/* fn for p itself or for each of its threads: what a group's cgroup.procs
 * and tasks list (SPEC section 8). */
static int proc_for_each_pid(const struct host_proc *p, bool threads,
			     int (*fn)(void *ctx, pid_t pid), void *ctx)
{
	if (!threads)
		return fn(ctx, p->pid);
	for (const struct host_thread *t = p->threads; t; t = t->proc_next) {
		int rc = fn(ctx, t->tid);
		if (rc)
			return rc;
	}
	return 0;
}

static int group_for_each_pid(struct cfsbw_host *h, struct cfsbw_group *g,
			      bool threads, int (*fn)(void *ctx, pid_t pid),
			      void *ctx)
{
	struct host_group *grp = grp_of(h, g);
	if (!grp)
		return 0;
	list_for_each_entry(p, &grp->procs, struct host_proc, grp_link) {
		int rc = proc_for_each_pid(p, threads, fn, ctx);
		if (rc)
			return rc;
	}
	return 0;
}

int cfsbw_host_for_each_proc(struct cfsbw_host *h, struct cfsbw_group *g,
			     int (*fn)(void *ctx, pid_t pid), void *ctx)
{
	return group_for_each_pid(h, g, false, fn, ctx);
}

int cfsbw_host_for_each_thread(struct cfsbw_host *h, struct cfsbw_group *g,
			       int (*fn)(void *ctx, pid_t tid), void *ctx)
{
	return group_for_each_pid(h, g, true, fn, ctx);
}

unsigned cfsbw_host_group_nr_procs(const struct cfsbw_host *h,
				   const struct cfsbw_group *g)
{
	const struct host_group *grp = grp_of(h, g);
	return grp ? grp->nr_procs : 0;
}

uint64_t cfsbw_host_group_usage_ns(const struct cfsbw_host *h,
				   const struct cfsbw_group *g)
{
	const struct host_group *grp = grp_of(h, g);
	return grp ? grp->usage_ns : 0;
}

int cfsbw_host_group_destroy(struct cfsbw_host *h, struct cfsbw_group *g)
{
	if (!g || cfsbw_group_tree(g) != h->tree)
		return -EINVAL;
	if (g == h->group || !cfsbw_group_parent(g) ||
	    cfsbw_group_first_child(g))
		return -EBUSY;
	struct host_group *grp = cfsbw_group_driver_data(g);
	if (grp && grp->nr_procs)
		return -EBUSY;
	/* The core's rule: the driver cancels the group's timers first. */
	if (grp)
		group_free(h, grp);
	int err = cfsbw_group_destroy(g);
	BUG_ON(err < 0 && err != -EBUSY);
	return err;
}
