/*
 * evq.c - the event queue: every timer of the machine in one binary heap
 * keyed by (deadline, sequence number).  The sequence number is taken when
 * a timer is armed, so timers due at the same instant fire in the order
 * they were armed: the run is deterministic whatever the heap's shape.
 *
 * The heap is sized once for every timer the machine owns (one tick and
 * one burst timer per CPU, one per task, three per group, one balance), so
 * arming never allocates and never fails.
 */
#include <errno.h>
#include <stdlib.h>

#include "sim/sim_int.h"

static inline bool timer_before(const struct sim_timer *a,
				const struct sim_timer *b)
{
	if (a->when != b->when)
		return a->when < b->when;
	return a->seq < b->seq;
}

int __evq_init(struct sim_evq *q, uint32_t cap)
{
	q->heap = calloc(cap ? cap : 1, sizeof(*q->heap));
	if (!q->heap)
		return -ENOMEM;
	q->len = 0;
	q->cap = cap;
	q->seq = 0;
	return 0;
}

void __evq_destroy(struct sim_evq *q)
{
	free(q->heap);
	q->heap = NULL;
}

void __timer_init(struct sim_timer *t, enum sim_timer_kind kind, uint32_t id)
{
	t->when = 0;
	t->seq = 0;
	t->idx = SIM_TIMER_IDLE;
	t->kind = (uint16_t)kind;
	t->id = id;
}

static void sift_up(struct sim_evq *q, uint32_t i)
{
	struct sim_timer *t = q->heap[i];
	while (i > 0) {
		uint32_t p = (i - 1) / 2;
		if (!timer_before(t, q->heap[p]))
			break;
		q->heap[i] = q->heap[p];
		q->heap[i]->idx = i;
		i = p;
	}
	q->heap[i] = t;
	t->idx = i;
}

static void sift_down(struct sim_evq *q, uint32_t i)
{
	struct sim_timer *t = q->heap[i];
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= q->len)
			break;
		if (c + 1 < q->len && timer_before(q->heap[c + 1], q->heap[c]))
			c++;
		if (!timer_before(q->heap[c], t))
			break;
		q->heap[i] = q->heap[c];
		q->heap[i]->idx = i;
		i = c;
	}
	q->heap[i] = t;
	t->idx = i;
}

static void heap_remove(struct sim_evq *q, struct sim_timer *t)
{
	uint32_t i = t->idx;
	struct sim_timer *last = q->heap[--q->len];
	t->idx = SIM_TIMER_IDLE;
	if (last == t)
		return;
	q->heap[i] = last;
	last->idx = i;
	if (i > 0 && timer_before(last, q->heap[(i - 1) / 2]))
		sift_up(q, i);
	else
		sift_down(q, i);
}

void __timer_arm(struct sim_evq *q, struct sim_timer *t, int64_t when)
{
	if (timer_armed(t))
		heap_remove(q, t);
	SIM_BUG_ON(q->len >= q->cap);
	t->when = when;
	t->seq = q->seq++;
	q->heap[q->len] = t;
	t->idx = q->len++;
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
	struct sim_timer *t = q->heap[0];
	heap_remove(q, t);
	return t;
}
