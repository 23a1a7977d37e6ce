/*
 * cfs.c - the fair-scheduling model the seeds rely on (SPEC section 7).
 *
 * Each CPU has a queue of entities (its root group's queue); a group has one
 * entity and one queue per CPU, nested as the group tree; a task is one
 * entity on its group's queue on its CPU.  The entity with the smallest
 * virtual runtime runs; running advances an entity's virtual runtime at
 * NICE_0_LOAD / weight of real time.  As in Linux of the seeds' time, the
 * entity currently running is kept out of its queue's heap (it is
 * "curr"), and a group's weight on a CPU is its cpu.shares split in
 * proportion to its runnable load there (update_cfs_shares): a group
 * spread over many CPUs weighs little on each.  R8: a throttled queue
 * counts for nothing in that split.
 *
 * The heap is an intrusive pairing heap ordered by (vruntime, id): no
 * allocation on enqueue, a total order, so the same operations give the
 * same picks on every machine.
 */
#include "sim/sim_int.h"

/* a queue's curr when it has none, to update_min_vruntime: on no queue */
const struct sim_entity cfsbw_sim__no_entity = {.on_rq = false};

static inline struct sim_entity *entity_of(struct ph_node *n)
{
	return container_of(n, struct sim_entity, node);
}

static inline struct sim_gcpu *gcpu_of(struct sim_entity *se)
{
	return container_of(se, struct sim_gcpu, se);
}

/* Wraparound-safe comparison of virtual time, ties broken by id. */
static inline bool entity_before(const struct sim_entity *a,
				 const struct sim_entity *b)
{
	int64_t d = vtime_diff(a->vruntime, b->vruntime);
	if (d != 0)
		return d < 0;
	return a->id < b->id;
}

/* Inline: the pairing heap's one step, in every operation. */
SIM_ALWAYS_INLINE struct ph_node *ph_meld(struct ph_node *a, struct ph_node *b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	if (entity_before(entity_of(b), entity_of(a))) {
		struct ph_node *t = a;
		a = b;
		b = t;
	}
	/* b becomes a's first child */
	b->next = a->child;
	if (a->child)
		a->child->prev = b;
	b->prev = a;
	a->child = b;
	return a;
}

/* The standard two-pass pairing of a sibling list; returns the new root. */
static struct ph_node *ph_merge_pairs(struct ph_node *h)
{
	struct ph_node *stack = NULL;
	while (h) {
		struct ph_node *a = h, *b = a->next;
		h = b ? b->next : NULL;
		a->next = a->prev = NULL;
		if (b) {
			b->next = b->prev = NULL;
			a = ph_meld(a, b);
		}
		a->prev = stack; /* the stack of pairs is linked through prev */
		stack = a;
	}
	struct ph_node *res = NULL;
	while (stack) {
		struct ph_node *a = stack;
		stack = a->prev;
		a->prev = NULL;
		res = ph_meld(a, res);
	}
	return res;
}

/* The heap's root changed: cache its vruntime beside it. */
static inline void set_root(struct sim_cfs_rq *q, struct ph_node *root)
{
	q->root = root;
	q->left_vruntime = root ? entity_of(root)->vruntime : 0;
}

static void ph_insert(struct sim_cfs_rq *q, struct sim_entity *se)
{
	struct ph_node *n = &se->node;
	n->child = n->next = n->prev = NULL;
	set_root(q, ph_meld(q->root, n));
}

static void ph_remove(struct sim_cfs_rq *q, struct sim_entity *se)
{
	struct ph_node *n = &se->node;
	struct ph_node *root;
	if (n == q->root) {
		root = ph_merge_pairs(n->child);
	} else {
		/* unlink n from its siblings (prev is a sibling or the parent) */
		if (n->prev->child == n)
			n->prev->child = n->next;
		else
			n->prev->next = n->next;
		if (n->next)
			n->next->prev = n->prev;
		root = ph_meld(q->root, ph_merge_pairs(n->child));
	}
	if (root)
		root->prev = NULL;
	set_root(q, root);
	n->child = n->next = n->prev = NULL;
}

/* Into and out of the heap, keeping EEVDF's sum of weight * vruntime and
 * tree by deadline (eevdf.c) when the run uses them: CFS does not pay
 * for them. */
static inline void heap_add(const struct cfsbw_sim *s, struct sim_cfs_rq *q,
			    struct sim_entity *se)
{
	if (s->eevdf) {
		q->sum_wv += se->weight * (uint64_t)se->vruntime;
		cfsbw_sim__eevdf_insert(s, q, se);
	}
	ph_insert(q, se);
}

static inline void heap_del(const struct cfsbw_sim *s, struct sim_cfs_rq *q,
			    struct sim_entity *se)
{
	if (s->eevdf) {
		q->sum_wv -= se->weight * (uint64_t)se->vruntime;
		cfsbw_sim__eevdf_erase(s, q, se);
	}
	ph_remove(q, se);
}

/* The parent of a node that is not the root: the first of its siblings
 * is linked to it through prev. */
static struct ph_node *ph_parent(struct ph_node *n)
{
	while (n->prev->child != n)
		n = n->prev;
	return n->prev;
}

struct sim_entity *cfsbw_sim__cfs_heap_first(const struct sim_cfs_rq *q)
{
	return q->root ? entity_of(q->root) : NULL;
}

/* Depth first: a node's first child (unless into is false: the walk
 * skips its subtree), else its next sibling, else that of the nearest
 * ancestor that has one (each sibling list is climbed once). */
struct sim_entity *cfsbw_sim__cfs_heap_after(const struct sim_cfs_rq *q,
					     struct sim_entity *se, bool into)
{
	struct ph_node *n = &se->node;
	if (into && n->child)
		return entity_of(n->child);
	while (n != q->root && !n->next)
		n = ph_parent(n);
	return n == q->root ? NULL : entity_of(n->next);
}

struct sim_entity *cfsbw_sim__cfs_heap_next(const struct sim_cfs_rq *q,
					    struct sim_entity *se)
{
	return cfsbw_sim__cfs_heap_after(q, se, true);
}

void cfsbw_sim__cfs_rq_init(struct sim_cfs_rq *q, struct sim_gcpu *owner)
{
	set_root(q, NULL);
	q->load = 0;
	q->nr_running = 0;
	q->min_vruntime = 0;
	q->curr = NULL;
	q->owner = owner;
	q->sum_wv = 0;
	q->ev_root = SIM_EV_NO_TREE;
}

void cfsbw_sim__cfs_enqueue_entity(const struct cfsbw_sim *s,
				   struct sim_cfs_rq *q, struct sim_entity *se)
{
	SIM_BUG_ON(se->on_rq);
	cfsbw_sim__cfs_settle(q);
	se->cfs_rq = q;
	cfsbw_sim__pelt_load_changing(s, q);
	q->load += se->weight;
	q->nr_running++;
	se->on_rq = true;
	if (q->curr != se)
		heap_add(s, q, se);
}

void cfsbw_sim__cfs_dequeue_entity(const struct cfsbw_sim *s,
				   struct sim_cfs_rq *q, struct sim_entity *se)
{
	SIM_BUG_ON(!se->on_rq || se->cfs_rq != q);
	if (s->eevdf) /* its lag, against a V that still counts it */
		cfsbw_sim__eevdf_save_lag(s, q, se);
	cfsbw_sim__cfs_settle(q);
	cfsbw_sim__pelt_load_changing(s, q);
	q->load -= se->weight;
	q->nr_running--;
	se->on_rq = false;
	/* curr stays curr until it is put back (put_prev_entity) */
	if (q->curr != se)
		heap_del(s, q, se);
	cfsbw_sim__cfs_update_min_vruntime(q);
}

/* se stops running: back into its queue if it is still runnable
 * (inline into the path switch, its most frequent caller). */
SIM_ALWAYS_INLINE void put_entity(const struct cfsbw_sim *s,
				  struct sim_cfs_rq *q, struct sim_entity *se)
{
	SIM_BUG_ON(q->curr != se);
	cfsbw_sim__cfs_settle(q);
	q->curr = NULL;
	if (se->on_rq)
		heap_add(s, q, se);
}

/* se starts running: out of the heap, the queue's curr. */
SIM_ALWAYS_INLINE void take_entity(const struct cfsbw_sim *s,
				   struct sim_cfs_rq *q, struct sim_entity *se)
{
	SIM_BUG_ON(q->curr || !se->on_rq || se->ran);
	heap_del(s, q, se);
	q->curr = se;
	if (s->eevdf)
		cfsbw_sim__eevdf_picked(se);
	else
		se->prev_sum_exec = se->sum_exec;
}

void cfsbw_sim__cfs_put_entity(const struct cfsbw_sim *s, struct sim_cfs_rq *q,
			       struct sim_entity *se)
{
	put_entity(s, q, se);
}

void cfsbw_sim__cfs_take_entity(const struct cfsbw_sim *s,
				struct sim_cfs_rq *q, struct sim_entity *se)
{
	take_entity(s, q, se);
}

/*
 * The pick with the running path left in place (pick_next_task_fair
 * since Linux 3.15), level by level from q.  CFS: the queue's curr if it
 * is still queued and comes before the heap's first, else the first (the
 * entity a put of curr and a pick of the first would give, the order
 * being total, without touching the heaps).  EEVDF: pick_eevdf with its
 * curr, which keeps the CPU while its slice is protected (RUN_TO_PARITY).
 */
struct sim_entity *cfsbw_sim__cfs_pick_from(const struct cfsbw_sim *s,
					    struct sim_cfs_rq *q)
{
	for (;;) {
		struct sim_entity *se;
		if (s->eevdf) {
			se = cfsbw_sim__eevdf_pick(s, q, true);
		} else {
			struct sim_entity *curr = q->curr;
			se = cfsbw_sim__cfs_first(q);
			if (curr && curr->on_rq &&
			    (!se || entity_before(curr, se)))
				se = curr;
		}
		SIM_BUG_ON(!se);
		if (!se->my_q)
			return se;
		q = se->my_q;
	}
}

/*
 * From running pse's path to se's (a task each, se picked by
 * cfs_pick_from): put and take only the entities below the first queue
 * the two paths share, then the two on it.  The group entities above
 * stay their queues' curr, their slices running on (prev_sum_exec kept),
 * as Linux's is_same_group walk leaves them.
 */
void cfsbw_sim__cfs_switch_path(const struct cfsbw_sim *s,
				struct sim_entity *pse, struct sim_entity *se)
{
	while (se->cfs_rq != pse->cfs_rq) {
		unsigned sd = se->depth, pd = pse->depth;
		if (sd <= pd) {
			put_entity(s, pse->cfs_rq, pse);
			pse = pse->parent;
		}
		if (sd >= pd) {
			take_entity(s, se->cfs_rq, se);
			se = se->parent;
		}
	}
	put_entity(s, se->cfs_rq, pse);
	take_entity(s, se->cfs_rq, se);
}

/*
 * The wall-clock share of the latency period se deserves, down its whole
 * path: period * w / load at each level (sched_slice).
 */
int64_t cfsbw_sim__cfs_sched_slice(const struct cfsbw_sim *s,
				   const struct sim_entity *se)
{
	unsigned nr = se->cfs_rq->nr_running + (se->on_rq ? 0 : 1);
	uint64_t slice = (uint64_t)(nr > s->nr_latency
					    ? (int64_t)nr * s->min_gran_ns
					    : s->latency_ns);
	for (; se; se = se->parent) {
		uint64_t load = se->cfs_rq->load + (se->on_rq ? 0 : se->weight);
		if (load)
			slice = slice * se->weight / load;
	}
	return (int64_t)slice;
}

/*
 * Where a waking entity joins a queue: it keeps its virtual runtime but
 * gets at most half a latency period of credit for having slept
 * (GENTLE_FAIR_SLEEPERS), so a long sleeper cannot monopolise the CPU.
 */
void cfsbw_sim__cfs_place_entity(const struct cfsbw_sim *s,
				 struct sim_cfs_rq *q, struct sim_entity *se)
{
	if (s->eevdf) {
		cfsbw_sim__eevdf_place(s, q, se, false);
		return;
	}
	cfsbw_sim__cfs_settle(q);
	int64_t v = q->min_vruntime - s->latency_ns / 2;
	if (vtime_before(se->vruntime, v))
		se->vruntime = v;
}

/*
 * EEVDF: se's weight becomes w, with V, its lag and its time to its
 * deadline kept in real time (eevdf.c); queued, it leaves the heap and
 * comes back at its new vruntime.
 */
void cfsbw_sim__cfs_reweight_eevdf(const struct cfsbw_sim *s,
				   struct sim_entity *se, uint64_t w)
{
	struct sim_cfs_rq *q = se->cfs_rq;
	bool queued = se->on_rq && q->curr != se;
	int64_t avg = se->on_rq ? cfsbw_sim__eevdf_avg(q) : 0;
	if (queued)
		heap_del(s, q, se);
	cfsbw_sim__eevdf_reweight(se, avg, w);
	if (se->on_rq) {
		cfsbw_sim__pelt_load_changing(s, q);
		q->load = q->load - se->weight + w;
	}
	se->weight = w;
	if (queued)
		heap_add(s, q, se);
}

/* One group's weight on one CPU: shares * local load / group load
 * (inline into the walk up the groups, its most frequent caller). */
SIM_ALWAYS_INLINE void reweight_group(const struct cfsbw_sim *s,
				      struct sim_group *g, unsigned cpu)
{
	struct sim_gcpu *gc = &g->pc[cpu];
	/* R8: a throttled queue takes no share of the group's weight. */
	uint64_t load = gc->throttled ? 0 : gc->q.load;
	g->tg_load = g->tg_load - gc->contrib + load;
	gc->contrib = load;
	uint64_t w = g->tg_load ? (uint64_t)g->shares * load / g->tg_load
				: g->shares;
	if (w < MIN_SHARES_WEIGHT)
		w = MIN_SHARES_WEIGHT;
	if (w > g->shares)
		w = g->shares;
	struct sim_entity *se = &gc->se;
	if (s->eevdf && w != se->weight) {
		cfsbw_sim__cfs_reweight_eevdf(s, se, w);
		return;
	}
	if (se->on_rq) {
		cfsbw_sim__pelt_load_changing(s, se->cfs_rq);
		se->cfs_rq->load = se->cfs_rq->load - se->weight + w;
	}
	se->weight = w;
}

void cfsbw_sim__cfs_reweight_group(const struct cfsbw_sim *s,
				   struct sim_group *g, unsigned cpu)
{
	reweight_group(s, g, cpu);
}

void cfsbw_sim__cfs_reweight_path(struct cfsbw_sim *s, struct sim_group *g,
				  unsigned cpu)
{
	for (; g && g->parent; g = g->parent)
		reweight_group(s, g, cpu);
}

/*
 * Enqueue se and, while their queues were empty, the group entities above
 * it; stop below a throttled group (R7: its entity stays off its parent's
 * queue, the tasks wait under it).  The caller placed se itself.
 */
void cfsbw_sim__cfs_enqueue_path(struct cfsbw_sim *s, struct sim_entity *se,
				 unsigned cpu)
{
	struct sim_group *bottom = se->cfs_rq->owner->group;
	bool first = true;
	for (; se; se = se->parent) {
		if (se->on_rq)
			break;
		struct sim_cfs_rq *q = se->cfs_rq;
		/* group entities come back as if waking (ENQUEUE_WAKEUP) */
		if (!first)
			cfsbw_sim__cfs_place_entity(s, q, se);
		first = false;
		cfsbw_sim__cfs_enqueue_entity(s, q, se);
		if (se->parent && gcpu_of(se->parent)->throttled)
			break;
	}
	cfsbw_sim__cfs_reweight_path(s, bottom, cpu);
}

/*
 * Dequeue se and every group entity above it whose queue it leaves empty;
 * an entity already off its queue (throttled) ends the walk.
 */
void cfsbw_sim__cfs_dequeue_path(struct cfsbw_sim *s, struct sim_entity *se,
				 unsigned cpu)
{
	struct sim_group *bottom = se->cfs_rq->owner->group;
	for (;;) {
		struct sim_cfs_rq *q = se->cfs_rq;
		cfsbw_sim__cfs_dequeue_entity(s, q, se);
		if (q->nr_running > 0)
			break;
		se = se->parent;
		if (!se || !se->on_rq)
			break;
	}
	cfsbw_sim__cfs_reweight_path(s, bottom, cpu);
}

/*
 * At a tick: has curr used its slice of the latency period, or run well
 * past the leftmost entity (check_preempt_tick)?
 */
bool cfsbw_sim__cfs_check_preempt_tick(const struct cfsbw_sim *s,
				       struct sim_cfs_rq *q,
				       struct sim_entity *curr)
{
	int64_t ideal = cfsbw_sim__cfs_sched_slice(s, curr);
	int64_t ran = curr->sum_exec - curr->prev_sum_exec;
	if (ran > ideal)
		return true;
	if (ran < s->min_gran_ns)
		return false;
	if (!q->root)
		return false;
	int64_t d = vtime_diff(curr->vruntime, q->left_vruntime);
	return d > ideal;
}

/*
 * At a wake-up: does the woken entity se (on the same queue as curr) lead
 * curr by more than the wake-up granularity, scaled to se's weight?
 */
bool cfsbw_sim__cfs_wakeup_preempt(const struct cfsbw_sim *s,
				   struct sim_entity *curr,
				   struct sim_entity *se)
{
	int64_t vdiff = vtime_diff(curr->vruntime, se->vruntime);
	if (vdiff <= 0)
		return false;
	return vdiff > cfsbw_sim__cfs_calc_delta_fair(s->wakeup_gran_ns, se);
}
