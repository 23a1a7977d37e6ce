/*
 * evq.c - the event queue: every timer of the machine, fired in the order
 * of (deadline, sequence number).  The sequence number is taken when a
 * timer is armed, so timers due at the same instant fire in the order they
 * were armed (ends of bursts first, see cfsbw_sim__timer_arm): the run is
 * deterministic whatever the queue's shape.
 *
 * Three tiers, by how far a deadline lies beyond the current bucket of
 * time (BUCKET_NS wide; the "cursor"):
 *   near   deadlines in or before the cursor's bucket: a sorted array,
 *          small (the events of about 33 us);
 *   wheel  deadlines in the next NR_BUCKETS - 1 buckets (half a second):
 *          one unordered list per bucket, O(1) to arm and to cancel;
 *   far    later deadlines: a second 4-ary heap.
 * When the near tier runs empty, the cursor moves to the next bucket that
 * holds anything (a bitmap says which), that bucket becomes the near tier,
 * and far deadlines now within half a second join the wheel.  The earliest
 * timer is always in the near tier: every deadline there is before every
 * deadline elsewhere.  Most timers are armed milliseconds ahead (ticks,
 * arrivals, wake-ups, refreshes) and pass through the wheel, touching the
 * heap only for the events of their own bucket; with one heap of every
 * timer, re-arming a timer sifted through all of its levels, a third of
 * the simulator's instructions.
 *
 * The tables are sized once for every timer the machine owns (one burst
 * timer per CPU, one per task, three per group, the tick, the balancer),
 * so arming never allocates and never fails.  Per timer, one 32-byte
 * record indexed by its number (two to a cache line) holds its deadline,
 * sequence number, tier, heap position and bucket links: arming, sifting,
 * linking and firing touch that record, never the timer itself (the run
 * finds the handler from the number, run.c).
 */
#include "sim/sim_int.h"

/* Arming a timer (a removal, then an insertion) is the queue's most
 * frequent work: its steps are inlined into it. */
#define EVQ_INLINE SIM_ALWAYS_INLINE

#define ARITY 4u
#define BUCKET_SHIFT 15u /* 32,768 ns */
#define NR_BUCKETS 16384u /* a power of two: 537 ms of buckets */
#define NO_TIMER UINT32_MAX

enum { WHERE_IDLE, WHERE_NEAR, WHERE_WHEEL, WHERE_FAR };

static inline int64_t bucket_of(int64_t when)
{
	return when >> BUCKET_SHIFT; /* deadlines are >= 0 */
}

static inline bool slot_before(const struct sim_evq *q,
			       const struct sim_evq_slot *a,
			       const struct sim_evq_slot *b)
{
	if (a->when != b->when)
		return a->when < b->when;
	return q->rec[a->num].seq < q->rec[b->num].seq;
}

/* ---- the two heaps ------------------------------------------------------ */

static inline void place(struct sim_evq *q, struct sim_evq_heap *h,
			 uint32_t i, const struct sim_evq_slot *s)
{
	h->slot[i] = *s;
	q->rec[s->num].pos = i;
}

static void sift_up(struct sim_evq *q, struct sim_evq_heap *h, uint32_t i)
{
	struct sim_evq_slot s = h->slot[i];
	while (i > 0) {
		uint32_t p = (i - 1) / ARITY;
		if (!slot_before(q, &s, &h->slot[p]))
			break;
		place(q, h, i, &h->slot[p]);
		i = p;
	}
	place(q, h, i, &s);
}

static void sift_down(struct sim_evq *q, struct sim_evq_heap *h, uint32_t i)
{
	struct sim_evq_slot s = h->slot[i];
	for (;;) {
		uint32_t c = ARITY * i + 1, best = c;
		if (c >= h->len)
			break;
		uint32_t end = c + ARITY < h->len ? c + ARITY : h->len;
		for (uint32_t k = c + 1; k < end; k++)
			if (slot_before(q, &h->slot[k], &h->slot[best]))
				best = k;
		if (!slot_before(q, &h->slot[best], &s))
			break;
		place(q, h, i, &h->slot[best]);
		i = best;
	}
	place(q, h, i, &s);
}

static void heap_push(struct sim_evq *q, struct sim_evq_heap *h,
		      const struct sim_evq_slot *s)
{
	SIM_BUG_ON(h->len >= q->cap);
	uint32_t i = h->len++;
	place(q, h, i, s);
	sift_up(q, h, i);
}

static void heap_remove(struct sim_evq *q, struct sim_evq_heap *h,
			uint32_t num)
{
	uint32_t i = q->rec[num].pos;
	if (--h->len == i)
		return;
	place(q, h, i, &h->slot[h->len]);
	if (i > 0 && slot_before(q, &h->slot[i], &h->slot[(i - 1) / ARITY]))
		sift_up(q, h, i);
	else
		sift_down(q, h, i);
}

/* ---- the wheel ---------------------------------------------------------- */

EVQ_INLINE void wheel_add(struct sim_evq *q, uint32_t num, int64_t bucket)
{
	uint32_t b = (uint32_t)bucket & (NR_BUCKETS - 1);
	uint32_t first = q->head[b];
	q->rec[num].next = first;
	q->rec[num].prev = NO_TIMER;
	if (first != NO_TIMER)
		q->rec[first].prev = num;
	q->head[b] = num;
	q->bitmap[b / 64] |= UINT64_C(1) << (b % 64);
	q->nr_wheel++;
}

static void wheel_remove(struct sim_evq *q, uint32_t num, int64_t when)
{
	uint32_t b = (uint32_t)bucket_of(when) & (NR_BUCKETS - 1);
	uint32_t n = q->rec[num].next, p = q->rec[num].prev;
	if (p != NO_TIMER)
		q->rec[p].next = n;
	else
		q->head[b] = n;
	if (n != NO_TIMER)
		q->rec[n].prev = p;
	if (q->head[b] == NO_TIMER)
		q->bitmap[b / 64] &= ~(UINT64_C(1) << (b % 64));
	q->nr_wheel--;
}

/* The bucket after the cursor's that holds timers (the wheel is not
 * empty), as an absolute bucket number. */
static int64_t wheel_next(const struct sim_evq *q)
{
	uint32_t start = ((uint32_t)q->cursor + 1) & (NR_BUCKETS - 1);
	for (uint32_t k = 0; k <= NR_BUCKETS / 64; k++) {
		uint32_t w = (start / 64 + k) % (NR_BUCKETS / 64);
		uint64_t bits = q->bitmap[w];
		if (k == 0)
			bits &= ~UINT64_C(0) << (start % 64);
		if (!bits)
			continue;
		uint32_t b = w * 64 + sim_ctz64(bits);
		return q->cursor + (int64_t)((b - start) & (NR_BUCKETS - 1)) + 1;
	}
	SIM_BUG_ON(1);
	return INT64_MAX;
}

/* ---- the near tier: the cursor's bucket, sorted ------------------------ */

/*
 * The near tier holds the events of one 33 us bucket, a handful: a sorted
 * array (latest first, the next to fire at the end) costs less than a
 * heap.  Firing the earliest is removing the last slot; a timer armed
 * within the bucket (at this instant, most often: it goes last) is put in
 * place by moving the later ones.
 */
static void near_insert(struct sim_evq *q, const struct sim_evq_slot *s)
{
	struct sim_evq_heap *h = &q->near;
	SIM_BUG_ON(h->len >= q->cap);
	uint32_t j = h->len++;
	while (j > 0 && slot_before(q, &h->slot[j - 1], s)) {
		place(q, h, j, &h->slot[j - 1]);
		j--;
	}
	place(q, h, j, s);
}

EVQ_INLINE void near_remove(struct sim_evq *q, uint32_t num)
{
	struct sim_evq_heap *h = &q->near;
	for (uint32_t i = q->rec[num].pos + 1; i < h->len; i++)
		place(q, h, i - 1, &h->slot[i]);
	h->len--;
}

/* Sort the near slots latest first (a Shell sort: a bucket can hold
 * thousands of timers due at one instant, the period timers of thousands
 * of groups, where inserting one by one would be quadratic). */
static void near_sort(struct sim_evq *q)
{
	struct sim_evq_heap *h = &q->near;
	static const uint32_t gaps[] = {701, 301, 132, 57, 23, 10, 4, 1};
	size_t g = sizeof(gaps) / sizeof(gaps[0]) - 1; /* small: insertion */
	if (h->len > 16)
		g = 0;
	for (; g < sizeof(gaps) / sizeof(gaps[0]); g++) {
		uint32_t gap = gaps[g];
		for (uint32_t i = gap; i < h->len; i++) {
			struct sim_evq_slot s = h->slot[i];
			uint32_t j = i;
			while (j >= gap && slot_before(q, &h->slot[j - gap], &s)) {
				h->slot[j] = h->slot[j - gap];
				j -= gap;
			}
			h->slot[j] = s;
		}
	}
	for (uint32_t i = 0; i < h->len; i++)
		q->rec[h->slot[i].num].pos = i;
}

/* ---- timers ------------------------------------------------------------- */

EVQ_INLINE void insert(struct sim_evq *q, uint32_t num)
{
	struct sim_evq_rec *r = &q->rec[num];
	struct sim_evq_slot s = {.when = r->when, .num = num};
	int64_t b = bucket_of(r->when);
	if (b <= q->cursor) {
		r->where = WHERE_NEAR;
		near_insert(q, &s);
	} else if (b < q->cursor + (int64_t)NR_BUCKETS) {
		r->where = WHERE_WHEEL;
		wheel_add(q, num, b);
	} else {
		r->where = WHERE_FAR;
		heap_push(q, &q->far, &s);
	}
}

EVQ_INLINE void remove_timer(struct sim_evq *q, uint32_t num)
{
	struct sim_evq_rec *r = &q->rec[num];
	switch (r->where) {
	case WHERE_NEAR:
		near_remove(q, num);
		break;
	case WHERE_WHEEL:
		wheel_remove(q, num, r->when);
		break;
	case WHERE_FAR:
		heap_remove(q, &q->far, num);
		break;
	default:
		return;
	}
	r->where = WHERE_IDLE;
}

/*
 * The near tier ran empty: move the cursor to the next bucket with timers
 * (in the wheel, or the far heap's earliest), make that bucket the near
 * tier, and bring far timers now within the wheel's reach into it.
 */
static void advance(struct sim_evq *q)
{
	int64_t next = INT64_MAX;
	if (q->nr_wheel)
		next = wheel_next(q);
	if (q->far.len && bucket_of(q->far.slot[0].when) < next)
		next = bucket_of(q->far.slot[0].when);
	q->cursor = next;
	uint32_t b = (uint32_t)next & (NR_BUCKETS - 1);
	if (q->bitmap[b / 64] & (UINT64_C(1) << (b % 64))) {
		/* every timer of this bucket is due in it: sort them */
		for (uint32_t num = q->head[b]; num != NO_TIMER;
		     num = q->rec[num].next) {
			struct sim_evq_slot s = {.when = q->rec[num].when,
						 .num = num};
			q->rec[num].where = WHERE_NEAR;
			q->near.slot[q->near.len++] = s;
			q->nr_wheel--;
		}
		q->head[b] = NO_TIMER;
		q->bitmap[b / 64] &= ~(UINT64_C(1) << (b % 64));
		if (q->near.len > 1)
			near_sort(q);
		else
			q->rec[q->near.slot[0].num].pos = 0;
	}
	while (q->far.len &&
	       bucket_of(q->far.slot[0].when) < next + (int64_t)NR_BUCKETS) {
		uint32_t num = q->far.slot[0].num;
		heap_remove(q, &q->far, num);
		insert(q, num);
	}
}

/* The near tier is empty: advance to the next bucket with timers. */
uint32_t cfsbw_sim__evq_advance(struct sim_evq *q)
{
	while (!q->near.len) {
		if (!q->nr_wheel && !q->far.len)
			return SIM_EVQ_NONE;
		advance(q);
	}
	return q->near.slot[q->near.len - 1].num;
}

struct sim_timer *cfsbw_sim__evq_peek(struct sim_evq *q)
{
	uint32_t num = cfsbw_sim__evq_peek_num(q);
	return num == SIM_EVQ_NONE ? NULL : q->timer[num];
}

/* One block: the two heaps (each starting 48 bytes into a line, so that
 * the children 4i+1..4i+4 of slot i fill one 64-byte line), then the
 * tables per timer and per bucket. */
#define HEAP_OFFSET 48u

static size_t align64(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

size_t cfsbw_sim__evq_size(uint32_t cap)
{
	size_t heap = align64(HEAP_OFFSET + (size_t)cap * sizeof(struct sim_evq_slot));
	return 2 * heap + align64((size_t)cap * sizeof(struct sim_evq_rec)) +
	       align64((size_t)cap * sizeof(struct sim_timer *)) +
	       align64(NR_BUCKETS * sizeof(uint32_t)) +
	       NR_BUCKETS / 64 * sizeof(uint64_t);
}

static void *take(char **p, size_t bytes)
{
	void *r = *p;
	*p += align64(bytes);
	return r;
}

void cfsbw_sim__evq_init(struct sim_evq *q, void *mem, uint32_t cap)
{
	char *p = mem;
	size_t heap = HEAP_OFFSET + (size_t)cap * sizeof(struct sim_evq_slot);
	q->near.slot = (struct sim_evq_slot *)(void *)((char *)take(&p, heap) +
						       HEAP_OFFSET);
	q->far.slot = (struct sim_evq_slot *)(void *)((char *)take(&p, heap) +
						      HEAP_OFFSET);
	q->rec = take(&p, (size_t)cap * sizeof(struct sim_evq_rec));
	q->timer = take(&p, (size_t)cap * sizeof(struct sim_timer *));
	q->head = take(&p, NR_BUCKETS * sizeof(uint32_t));
	q->bitmap = take(&p, NR_BUCKETS / 64 * sizeof(uint64_t));
	for (uint32_t b = 0; b < NR_BUCKETS; b++)
		q->head[b] = NO_TIMER;
	for (uint32_t w = 0; w < NR_BUCKETS / 64; w++)
		q->bitmap[w] = 0;
	q->near.len = q->far.len = 0;
	q->nr_wheel = 0;
	q->cursor = 0;
	q->cap = cap;
	q->nr = 0;
	q->next_seq = 0;
}

void cfsbw_sim__timer_init(struct sim_timer *t, enum sim_timer_kind kind)
{
	t->num = NO_TIMER;
	t->kind = (uint16_t)kind;
}

void cfsbw_sim__evq_add(struct sim_evq *q, struct sim_timer *t)
{
	SIM_BUG_ON(q->nr >= q->cap);
	t->num = q->nr++;
	q->timer[t->num] = t;
	struct sim_evq_rec *r = &q->rec[t->num];
	r->when = 0;
	r->seq = 0;
	r->where = WHERE_IDLE;
	r->burst = t->kind == SIM_T_BURST;
}

/*
 * At one instant, the ends of bursts of CPU come first: a task whose
 * burst is done by then has done its work, and must not be preempted or
 * left waiting with nothing left to run because a wake-up or a tick that
 * fell on the same nanosecond happened to be armed earlier.
 */
#define SEQ_LATER (UINT64_C(1) << 63)

void cfsbw_sim__timer_arm(struct sim_evq *q, struct sim_timer *t, int64_t when)
{
	SIM_BUG_ON(when < 0);
	uint32_t num = t->num;
	struct sim_evq_rec *r = &q->rec[num];
	uint64_t seq = q->next_seq++ | (r->burst ? 0 : SEQ_LATER);
	remove_timer(q, num);
	r->when = when;
	r->seq = seq;
	insert(q, num);
}

void cfsbw_sim__evq_cancel_num(struct sim_evq *q, uint32_t num)
{
	remove_timer(q, num);
}

void cfsbw_sim__timer_cancel(struct sim_evq *q, struct sim_timer *t)
{
	remove_timer(q, t->num);
}
