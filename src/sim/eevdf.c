/*
 * eevdf.c - the fair scheduler of Linux 6.6 and later (EEVDF, "earliest
 * eligible virtual deadline first"), the scenario's `scheduler eevdf`;
 * cfs.c holds the queues both models share and the CFS of the seeds'
 * time, the default (SPEC section 7).
 *
 * Virtual time runs as in CFS (NICE_0_LOAD / weight of real time).  What
 * changes is who runs and where a woken entity starts:
 *  - V, a queue's weighted average virtual runtime, curr included
 *    (avg_vruntime), is its notion of "now"; an entity is eligible when
 *    its vruntime is not past V (it is owed service, or even);
 *  - each entity asks for a slice (base_slice: 0.7 ms times 1 + log2 of
 *    the CPUs up to 8) and has a virtual deadline, vruntime + slice in
 *    its virtual time; the eligible entity with the earliest deadline
 *    runs (pick_eevdf);
 *  - the running entity keeps the CPU until its slice is used up: at a
 *    charge past its deadline it gets a new one and the CPU reschedules
 *    if others wait (update_deadline); a wake-up preempts it only if it
 *    has used up its slice or lost eligibility and the woken entity is
 *    the pick (RUN_TO_PARITY);
 *  - an entity leaving its queue keeps its lag, V minus its vruntime,
 *    within a slice or a tick either way, and comes back at V minus that
 *    lag (scaled for the weight it joins, PLACE_LAG): no credit for having
 *    slept, where CFS's woken task starts half a latency period ahead;
 *  - a change of a group entity's weight keeps V and the entity's lag and
 *    deadline in real time (reweight_eevdf).
 * Not modelled: delayed dequeue (DELAY_DEQUEUE: a sleeping entity with
 * negative lag stays queued until it is eligible again), custom slices,
 * PREEMPT_SHORT (every entity here asks for the same slice).
 *
 * V is kept exactly: each queue sums weight * vruntime over its heap
 * modulo 2^64 (cfs.c's heap_add and heap_del), and weight * (vruntime -
 * min_vruntime), which fits 63 bits, is recovered from it by the same
 * wrapping arithmetic; curr, out of the heap, is added when V is read.
 * The pick is one path down a tree of the queued entities ordered by
 * deadline, each node holding its subtree's least vruntime (a treap whose
 * priorities hash the entity's id, kept beside the heap by the same two
 * calls).
 * Virtual times are added to as they are compared, wrapping (vtime_add,
 * vtime_diff).
 */
#include <errno.h>

#include "sim/sim_int.h"

/* Sum of weight * (vruntime - min_vruntime) over q's entities, curr
 * included, and their total weight. */
static inline int64_t queue_key_sum(const struct sim_cfs_rq *q,
				    uint64_t *load)
{
	const struct sim_entity *curr = q->curr;
	uint64_t m = (uint64_t)q->min_vruntime;
	bool curr_in = curr && curr->on_rq;
	uint64_t heap_w = q->load - (curr_in ? curr->weight : 0);
	uint64_t sum = q->sum_wv - m * heap_w;
	if (curr_in)
		sum += curr->weight * ((uint64_t)curr->vruntime - m);
	*load = q->load;
	return (int64_t)sum;
}

/* floor(sum / load): the average's offset from min_vruntime.  Floored,
 * as Linux's avg_vruntime() is: a negative sum rounds down too. */
static inline int64_t avg_key(int64_t sum, uint64_t load)
{
	int64_t l = (int64_t)load;
	if (sum < 0)
		sum -= l - 1;
	return sum / l;
}

int64_t cfsbw_sim__eevdf_avg(const struct sim_cfs_rq *q)
{
	uint64_t load;
	int64_t sum = queue_key_sum(q, &load);
	return load ? vtime_add(q->min_vruntime, avg_key(sum, load))
		    : q->min_vruntime;
}

/*
 * vruntime is not past V.  Linux compares sum >= key * load
 * (vruntime_eligible) so that nothing is lost to a division; for an
 * integer key that is key <= floor(sum / load), one division for a
 * whole pick and no product that could pass 2^63.
 */
static inline bool eligible(const struct sim_cfs_rq *q, int64_t avg,
			    int64_t vruntime)
{
	return vtime_diff(vruntime, q->min_vruntime) <= avg;
}

/* The slice an entity asks for, in its virtual time. */
static inline int64_t vslice(const struct cfsbw_sim *s,
			     const struct sim_entity *se)
{
	return cfsbw_sim__cfs_calc_delta_fair(s->base_slice_ns, se);
}

/* a's deadline comes first; ties to the lower vruntime, then the id: a
 * total order, so a pick does not depend on the heap's shape. */
static inline bool deadline_before(const struct sim_entity *a,
				   const struct sim_entity *b)
{
	int64_t d = vtime_diff(a->deadline, b->deadline);
	if (d != 0)
		return d < 0;
	d = vtime_diff(a->vruntime, b->vruntime);
	if (d != 0)
		return d < 0;
	return a->id < b->id;
}

/* ---- the tree: queued entities by deadline, least vruntime below ----- */

int cfsbw_sim__eevdf_init(struct cfsbw_sim *s)
{
	s->ev_nodes = cfsbw_sim__zalloc(s, (size_t)s->next_entity_id + 1,
					sizeof(*s->ev_nodes));
	return s->ev_nodes ? 0 : -ENOMEM;
}

static inline struct sim_ev_node *node(const struct cfsbw_sim *s, uint32_t i)
{
	return &s->ev_nodes[i];
}

/* A treap's priority: a hash of the node's number, so that the tree's
 * shape, like everything else, is the same from run to run. */
static inline uint32_t prio_of(uint32_t i)
{
	uint32_t x = i * 0x9e3779b9u;
	x ^= x >> 16;
	x *= 0x85ebca6bu;
	return x ^ (x >> 13);
}

/* Node i's least vruntime, from its entity and its children's. */
static inline void pull(const struct cfsbw_sim *s, uint32_t i)
{
	struct sim_ev_node *n = node(s, i);
	int64_t m = n->se->vruntime;
	for (unsigned d = 0; d < 2; d++)
		if (n->child[d] &&
		    vtime_before(node(s, n->child[d])->min_vruntime, m))
			m = node(s, n->child[d])->min_vruntime;
	n->min_vruntime = m;
}

/* Child d of node i (0: left, 1: right) takes its place; returns it. */
static uint32_t rotate(const struct cfsbw_sim *s, uint32_t i, unsigned d)
{
	uint32_t c = node(s, i)->child[d];
	node(s, i)->child[d] = node(s, c)->child[!d];
	node(s, c)->child[!d] = i;
	pull(s, i);
	pull(s, c);
	return c;
}

static uint32_t tree_insert(const struct cfsbw_sim *s, uint32_t t, uint32_t x)
{
	if (!t)
		return x;
	struct sim_ev_node *n = node(s, t);
	unsigned d = !deadline_before(node(s, x)->se, n->se);
	n->child[d] = tree_insert(s, n->child[d], x);
	if (node(s, n->child[d])->prio > n->prio)
		return rotate(s, t, d);
	pull(s, t);
	return t;
}

static uint32_t tree_erase(const struct cfsbw_sim *s, uint32_t t, uint32_t x)
{
	SIM_BUG_ON(!t);
	struct sim_ev_node *n = node(s, t);
	if (t == x) {
		if (!n->child[0] || !n->child[1])
			return n->child[0] ? n->child[0] : n->child[1];
		/* x goes down under its higher-priority child, which
		 * takes its place */
		unsigned d = node(s, n->child[0])->prio <
			     node(s, n->child[1])->prio;
		t = rotate(s, t, d);
		node(s, t)->child[!d] = tree_erase(s, node(s, t)->child[!d], x);
	} else {
		unsigned d = !deadline_before(node(s, x)->se, n->se);
		n->child[d] = tree_erase(s, n->child[d], x);
	}
	pull(s, t);
	return t;
}

/*
 * A short queue is walked (its heap, pruned at V: cheaper than keeping a
 * tree); a long one keeps the tree, built when its heap reaches
 * TREE_FROM entities and dropped when it is down to TREE_UNTIL, so that
 * a queue near one size does not build and drop it by turns.
 */
#define TREE_FROM 24u
#define TREE_UNTIL 8u

static void node_insert(const struct cfsbw_sim *s, struct sim_cfs_rq *q,
			struct sim_entity *se)
{
	uint32_t x = se->id + 1;
	struct sim_ev_node *n = node(s, x);
	n->child[0] = n->child[1] = 0;
	n->prio = prio_of(x);
	n->min_vruntime = se->vruntime;
	n->se = se;
	q->ev_root = tree_insert(s, q->ev_root, x);
}

/* Entities in q's heap (curr is not). */
static inline unsigned heap_size(const struct sim_cfs_rq *q)
{
	return q->nr_running - (q->curr && q->curr->on_rq ? 1u : 0u);
}

void cfsbw_sim__eevdf_insert(const struct cfsbw_sim *s, struct sim_cfs_rq *q,
			     struct sim_entity *se)
{
	if (q->ev_root != SIM_EV_NO_TREE) {
		node_insert(s, q, se);
		return;
	}
	/* called before se is in the heap, and after nr_running counts it */
	if (heap_size(q) < TREE_FROM)
		return;
	q->ev_root = 0;
	for (struct sim_entity *e = cfsbw_sim__cfs_heap_first(q); e;
	     e = cfsbw_sim__cfs_heap_next(q, e))
		node_insert(s, q, e);
	node_insert(s, q, se);
}

void cfsbw_sim__eevdf_erase(const struct cfsbw_sim *s, struct sim_cfs_rq *q,
			    struct sim_entity *se)
{
	if (q->ev_root == SIM_EV_NO_TREE)
		return;
	q->ev_root = tree_erase(s, q->ev_root, se->id + 1);
	if (heap_size(q) <= TREE_UNTIL)
		q->ev_root = SIM_EV_NO_TREE;
}

/*
 * The queued entity with the earliest deadline among those not past V
 * (avg, as an offset from min_vruntime): left of a node are the earlier
 * deadlines, so if any of them is eligible (the left subtree's least
 * vruntime says) the answer is there; else the node, if eligible; else
 * to the right.  One path down: pick_eevdf's walk of Linux's tree.
 */
static struct sim_entity *tree_pick(const struct cfsbw_sim *s,
				    const struct sim_cfs_rq *q, int64_t avg)
{
	uint32_t t = q->ev_root;
	while (t) {
		const struct sim_ev_node *n = node(s, t);
		uint32_t l = n->child[0];
		if (l && eligible(q, avg, node(s, l)->min_vruntime)) {
			t = l;
			continue;
		}
		if (eligible(q, avg, n->se->vruntime))
			return n->se;
		t = n->child[1];
		if (t && !eligible(q, avg, node(s, t)->min_vruntime))
			return NULL;
	}
	return NULL;
}

struct sim_entity *cfsbw_sim__eevdf_pick(const struct cfsbw_sim *s,
					 const struct sim_cfs_rq *q,
					 bool protect)
{
	uint64_t load;
	int64_t sum = queue_key_sum(q, &load);
	int64_t avg = load ? avg_key(sum, load) : 0;
	struct sim_entity *curr = q->curr;
	if (curr && (!curr->on_rq || !eligible(q, avg, curr->vruntime)))
		curr = NULL;
	/* RUN_TO_PARITY: curr keeps the CPU until it has used its slice */
	if (protect && curr && curr->vlag == curr->deadline)
		return curr;
	struct sim_entity *best = NULL;
	if (q->ev_root != SIM_EV_NO_TREE) {
		best = tree_pick(s, q, avg);
	} else {
		/* The heap is ordered by vruntime, so a subtree whose top
		 * is past V is past it everywhere: only the eligible
		 * entities are read. */
		struct sim_entity *se = cfsbw_sim__cfs_heap_first(q);
		while (se) {
			bool ok = eligible(q, avg, se->vruntime);
			if (ok && (!best || deadline_before(se, best)))
				best = se;
			se = cfsbw_sim__cfs_heap_after(q, se, ok);
		}
	}
	if (!best || (curr && deadline_before(curr, best)))
		best = curr;
	/* the least vruntime is never past the average */
	SIM_BUG_ON(!best && (q->root || (q->curr && q->curr->on_rq)));
	return best;
}

void cfsbw_sim__eevdf_picked(struct sim_entity *se)
{
	se->vlag = se->deadline; /* its slice is protected until it ends */
}

/* Lag is kept within a slice, or a tick, of service either way. */
static int64_t lag_limit(const struct cfsbw_sim *s, const struct sim_entity *se)
{
	int64_t r = 2 * s->base_slice_ns;
	if (r < s->tick_ns)
		r = s->tick_ns;
	return cfsbw_sim__cfs_calc_delta_fair(r, se);
}

void cfsbw_sim__eevdf_save_lag(const struct cfsbw_sim *s,
			       const struct sim_cfs_rq *q,
			       struct sim_entity *se)
{
	int64_t lag = vtime_diff(cfsbw_sim__eevdf_avg(q), se->vruntime);
	int64_t limit = lag_limit(s, se);
	se->vlag = lag < -limit ? -limit : lag > limit ? limit : lag;
}

void cfsbw_sim__eevdf_place(const struct cfsbw_sim *s,
			    const struct sim_cfs_rq *q, struct sim_entity *se,
			    bool initial)
{
	int64_t v = cfsbw_sim__eevdf_avg(q), lag = 0;
	/* The lag it left with, in a queue that will weigh w more: placing
	 * it moves V by w / (load + w) of the lag, so it is scaled up to
	 * keep it (PLACE_LAG). */
	if (q->nr_running > 0 && se->vlag != 0 && q->load > 0) {
		/* in 128 bits: a light group's lag (2 s of virtual time at
		 * weight 2 and the largest slice) times a million tasks'
		 * load passes 2^63 */
		__extension__ typedef __int128 i128;
		lag = (int64_t)((i128)se->vlag * (i128)(q->load + se->weight) /
				(i128)q->load);
	}
	se->vruntime = vtime_add(v, -lag);
	/* a new task joins halfway through a slice, as the others are on
	 * average (PLACE_DEADLINE_INITIAL) */
	int64_t slice = vslice(s, se);
	se->deadline = vtime_add(se->vruntime, initial ? slice / 2 : slice);
	se->vlag = 0;
}

bool cfsbw_sim__eevdf_update_deadline(const struct cfsbw_sim *s,
				      struct sim_entity *se)
{
	if (vtime_diff(se->vruntime, se->deadline) < 0)
		return false;
	se->deadline = vtime_add(se->vruntime, vslice(s, se));
	return true;
}

/* x * from / to, truncated towards zero as Linux's div_s64, in 128 bits
 * (a lag of 2^40 at a weight of 2^18 passes 2^63). */
static inline int64_t rescale(int64_t x, uint64_t from, uint64_t to)
{
	__extension__ typedef __int128 i128;
	return (int64_t)((i128)x * (i128)from / (i128)to);
}

void cfsbw_sim__eevdf_reweight(struct sim_entity *se, int64_t avg,
			       uint64_t w)
{
	if (!se->on_rq) {
		se->vlag = rescale(se->vlag, se->weight, w);
		return;
	}
	/* the same lag and the same time to its deadline, in real time */
	int64_t lag = vtime_diff(avg, se->vruntime);
	se->vruntime = vtime_add(avg, -rescale(lag, se->weight, w));
	int64_t left = vtime_diff(se->deadline, avg);
	se->deadline = vtime_add(avg, rescale(left, se->weight, w));
}
