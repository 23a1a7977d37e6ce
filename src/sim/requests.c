/*
 * requests.c - a requests task's queue: the requests that arrived and are
 * waiting or in service, first come, first served.
 *
 * A task that its limit starves queues thousands of requests (the issue's
 * bench case ends with 1.3 M queued): a queue in one array that doubles
 * copies all it holds at each doubling, and every byte written lands in
 * memory not yet touched, a page fault a page.  Here a queue is a ring of
 * blocks that never move: requests arrive into the last block, are served
 * from the one after it, and a block served to its end leaves the ring.
 * A task's first block is small (most queues hold a request or two);
 * every later one is a page, taken from the machine's free blocks, which
 * come in slabs of RQ_SLAB_BLOCKS: freeing a block and taking another
 * costs no call to the allocator.
 *
 * A request is 8 bytes where it fits: the low 32 bits of its arrival
 * (a block holds the arrivals of one 2^32 ns stretch, 4.3 s: a request
 * arriving in the next starts a block) and its service time in 32 bits.
 * The exponential sampler returns at most 36.8 times its mean (-ln U with
 * U at least 2^-53), so a task whose service times could not fit (a mean
 * over 116 ms, or a fixed time over 4.3 s) takes 16 bytes a request, its
 * arrival and service time in full.  An arrival writes its slot and the
 * task alone: where the last block ends is kept in the task, so that a
 * starved task's arrivals do not read the block's header, a cache line
 * away from its last slot.
 */
#include <errno.h>

#include "sim/sim_int.h"

/* A first block's slots; every later block's (a page with its header). */
#define RQ_FIRST_SLOTS 16u
#define RQ_BLOCK_SLOTS                                                         \
	((uint16_t)((4096u - sizeof(struct sim_rq_block)) / sizeof(uint64_t)))
#define RQ_SLAB_BLOCKS 16u
/* The largest service time an exponential sample of mean m can take is
 * below RQ_EXP_MAX_FACTOR * m (53 ln 2 = 36.74). */
#define RQ_EXP_MAX_FACTOR 37u

/* A slab of blocks: freed whole with the machine. */
struct sim_rq_slab {
	struct sim_rq_slab *next;
	uint64_t unused;
};

static size_t block_bytes(uint32_t slots)
{
	return sizeof(struct sim_rq_block) + slots * sizeof(uint64_t);
}

/* A page-sized block: a free one, or one of a new slab (of one block when
 * a slab does not fit the memory there is). */
static struct sim_rq_block *block_take(struct cfsbw_sim *s)
{
	struct sim_rq_block *b = s->rq_free;
	if (b) {
		s->rq_free = b->next;
		return b;
	}
	size_t each = block_bytes(RQ_BLOCK_SLOTS);
	unsigned n = RQ_SLAB_BLOCKS;
	struct sim_rq_slab *slab =
		cfsbw_sim__alloc(s, 1, sizeof(*slab) + n * each);
	if (!slab) {
		n = 1;
		slab = cfsbw_sim__alloc(s, 1, sizeof(*slab) + each);
		if (!slab)
			return NULL;
	}
	slab->next = s->rq_slabs;
	s->rq_slabs = slab;
	char *p = (char *)(slab + 1);
	for (unsigned i = n; i-- > 0;) {
		b = (struct sim_rq_block *)(void *)(p + i * each);
		b->cap = RQ_BLOCK_SLOTS;
		b->next = s->rq_free;
		s->rq_free = b;
	}
	s->rq_free = b->next;
	return b;
}

static void block_put(struct cfsbw_sim *s, struct sim_rq_block *b)
{
	if (b->cap == RQ_BLOCK_SLOTS) {
		b->next = s->rq_free;
		s->rq_free = b;
	} else {
		cfsbw_sim__free(s, b);
	}
}

int cfsbw_sim__rq_init(struct cfsbw_sim *s, struct sim_task *t)
{
	struct sim_rq_block *b =
		cfsbw_sim__alloc(s, 1, block_bytes(RQ_FIRST_SLOTS));
	if (!b)
		return -ENOMEM;
	b->next = b;
	b->cap = RQ_FIRST_SLOTS;
	b->used = 0;
	b->hi = 0;
	t->rq_last = b;
	t->rq_head = t->rq_len = 0;
	t->rq_tail = 0;
	t->rq_room = RQ_FIRST_SLOTS;
	t->rq_hi = 0;
	uint64_t most = (uint64_t)t->work_ns;
	if (t->service_exp)
		most = most > UINT32_MAX / RQ_EXP_MAX_FACTOR
			       ? (uint64_t)UINT32_MAX + 1
			       : most * RQ_EXP_MAX_FACTOR;
	t->rq_wide = most > UINT32_MAX;
	return 0;
}

void cfsbw_sim__rq_free(struct cfsbw_sim *s, struct sim_task *t)
{
	struct sim_rq_block *last = t->rq_last;
	if (!last)
		return;
	struct sim_rq_block *b = last->next;
	while (b != last) {
		struct sim_rq_block *next = b->next;
		block_put(s, b);
		b = next;
	}
	block_put(s, last);
	t->rq_last = NULL;
}

void cfsbw_sim__rq_free_blocks(struct cfsbw_sim *s)
{
	while (s->rq_slabs) {
		struct sim_rq_slab *slab = s->rq_slabs;
		s->rq_slabs = slab->next;
		cfsbw_sim__free(s, slab);
	}
	s->rq_free = NULL;
}

bool cfsbw_sim__rq_push(struct cfsbw_sim *s, struct sim_task *t,
			int64_t arrival_ns, int64_t service_ns)
{
	struct sim_rq_block *last = t->rq_last;
	uint16_t need = t->rq_wide ? 2 : 1;
	uint32_t hi = (uint32_t)((uint64_t)arrival_ns >> 32);
	if (t->rq_room < need ||
	    (!t->rq_wide && t->rq_tail > 0 && hi != t->rq_hi)) {
		if (t->rq_len == UINT32_MAX)
			return false;
		struct sim_rq_block *b = block_take(s);
		if (!b)
			return false;
		last->used = t->rq_tail;
		b->next = last->next;
		last->next = b;
		t->rq_last = last = b;
		t->rq_tail = 0;
		t->rq_room = b->cap;
	}
	if (t->rq_wide) {
		last->slot[t->rq_tail] = (uint64_t)arrival_ns;
		last->slot[t->rq_tail + 1] = (uint64_t)service_ns;
	} else {
		SIM_BUG_ON((uint64_t)service_ns > UINT32_MAX);
		if (t->rq_tail == 0)
			last->hi = t->rq_hi = hi;
		last->slot[t->rq_tail] = ((uint64_t)arrival_ns & UINT32_MAX) |
					 (uint64_t)service_ns << 32;
	}
	t->rq_tail = (uint16_t)(t->rq_tail + need);
	t->rq_room = (uint16_t)(t->rq_room - need);
	t->rq_len++;
	return true;
}

/*
 * An empty queue starts again at the start of its block; a block served
 * to its end, with requests after it, leaves the ring (the last block is
 * never empty unless the queue is: a block joins for a request that
 * arrives into it at once).
 */
void cfsbw_sim__rq_pop(struct cfsbw_sim *s, struct sim_task *t)
{
	SIM_BUG_ON(t->rq_len == 0);
	struct sim_rq_block *last = t->rq_last;
	if (--t->rq_len == 0) {
		t->rq_head = 0;
		t->rq_tail = 0;
		t->rq_room = last->cap;
		return;
	}
	struct sim_rq_block *first = last->next;
	t->rq_head += t->rq_wide ? 2 : 1;
	if (first != last && t->rq_head == first->used) {
		last->next = first->next;
		block_put(s, first);
		t->rq_head = 0;
	}
}
