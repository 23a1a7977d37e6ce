/*
 * evq.c - the event queue: every timer of the machine in one 4-ary heap
 * keyed by (deadline, sequence number).  The sequence number is taken when
 * a timer is armed, so timers due at the same instant fire in the order
 * they were armed (ends of bursts first, see __timer_arm): the run is
 * deterministic whatever the heap's shape.
 *
 * The heap is sized once for every timer the machine owns (one burst timer
 * per CPU, one per task, three per group, the tick, the balancer), so
 * arming never allocates and never fails.  Keys live in the heap's slots
 * (no pointer chasing while sifting); re-arming an armed timer moves it in
 * place.
 */
#include "sim/sim_int.h"

#define ARITY 4u

static inline bool slot_before(const struct sim_evq_slot *a,
			       const struct sim_evq_slot *b)
{
	if (a->when != b->when)
		return a->when < b->when;
	return a->seq < b->seq;
}

void __evq_init(struct sim_evq *q, struct sim_evq_slot *heap, uint32_t cap)
{
	q->heap = heap;
	q->len = 0;
	q->cap = cap;
	q->seq = 0;
}

void __timer_init(struct sim_timer *t, enum sim_timer_kind kind, uint32_t id)
{
	t->when = 0;
	t->seq = 0;
	t->idx = SIM_TIMER_IDLE;
	t->kind = (uint16_t)kind;
	t->id = id;
}

static inline void place(struct sim_evq *q, uint32_t i,
			 const struct sim_evq_slot *s)
{
	q->heap[i] = *s;
	s->t->idx = i;
}

static void sift_up(struct sim_evq *q, uint32_t i)
{
	struct sim_evq_slot s = q->heap[i];
	while (i > 0) {
		uint32_t p = (i - 1) / ARITY;
		if (!slot_before(&s, &q->heap[p]))
			break;
		place(q, i, &q->heap[p]);
		i = p;
	}
	place(q, i, &s);
}

static void sift_down(struct sim_evq *q, uint32_t i)
{
	struct sim_evq_slot s = q->heap[i];
	for (;;) {
		uint32_t c = ARITY * i + 1, best = c;
		if (c >= q->len)
			break;
		uint32_t end = c + ARITY < q->len ? c + ARITY : q->len;
		for (uint32_t k = c + 1; k < end; k++)
			if (slot_before(&q->heap[k], &q->heap[best]))
				best = k;
		if (!slot_before(&q->heap[best], &s))
			break;
		place(q, i, &q->heap[best]);
		i = best;
	}
	place(q, i, &s);
}

/* Restore the heap around slot i after its key changed either way. */
static void fix(struct sim_evq *q, uint32_t i)
{
	if (i > 0 && slot_before(&q->heap[i], &q->heap[(i - 1) / ARITY]))
		sift_up(q, i);
	else
		sift_down(q, i);
}

static void heap_remove(struct sim_evq *q, struct sim_timer *t)
{
	uint32_t i = t->idx;
	t->idx = SIM_TIMER_IDLE;
	if (--q->len == i)
		return;
	place(q, i, &q->heap[q->len]);
	fix(q, i);
}

/*
 * At one instant, the ends of bursts of CPU come first: a task whose
 * burst is done by then has done its work, and must not be preempted or
 * left waiting with nothing left to run because a wake-up or a tick that
 * fell on the same nanosecond happened to be armed earlier.
 */
#define SEQ_LATER (UINT64_C(1) << 63)

void __timer_arm(struct sim_evq *q, struct sim_timer *t, int64_t when)
{
	uint64_t seq = q->seq++ | (t->kind == SIM_T_BURST ? 0 : SEQ_LATER);
	struct sim_evq_slot s = {.when = when, .seq = seq, .t = t};
	t->when = when;
	t->seq = s.seq;
	if (timer_armed(t)) {
		place(q, t->idx, &s);
		fix(q, t->idx);
		return;
	}
	SIM_BUG_ON(q->len >= q->cap);
	place(q, q->len++, &s);
	sift_up(q, t->idx);
}

void __timer_cancel(struct sim_evq *q, struct sim_timer *t)
{
	if (timer_armed(t))
		heap_remove(q, t);
}

struct sim_timer *__evq_pop(struct sim_evq *q)
{
	if (!q->len)
		return NULL;
	struct sim_timer *t = q->heap[0].t;
	heap_remove(q, t);
	return t;
}
