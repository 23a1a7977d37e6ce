/*
 * requests.c - a requests task's queue: the requests that arrived and are
 * waiting or in service, first come, first served.
 *
 * A task that its limit starves queues thousands of requests (the issue's
 * bench case ends with 1.3 M queued, 20 MB): a queue in one array that
 * doubles copies all it holds at each doubling, and every copy lands in
 * memory not yet touched.  Here a queue is a ring of blocks that never
 * move: requests arrive into the last block, are served from the one
 * after it, and a block served to its end leaves the ring.  A task's first
 * block is small (most queues hold a request or two); every later one is
 * a page, taken from the machine's free blocks, which come in slabs of
 * RQ_SLAB_BLOCKS: freeing a block and taking another costs no call to
 * the allocator.
 */
#include <errno.h>

#include "sim/sim_int.h"

/* A first block's requests; every later block's (a page with its
 * header). */
#define RQ_FIRST_CAP 16u
#define RQ_BLOCK_CAP 255u
#define RQ_SLAB_BLOCKS 16u

/* A slab of blocks: freed whole with the machine. */
struct sim_rq_slab {
	struct sim_rq_slab *next;
	uint64_t unused;
};

static size_t block_bytes(uint32_t cap)
{
	return sizeof(struct sim_rq_block) + cap * sizeof(struct sim_request);
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
	size_t each = block_bytes(RQ_BLOCK_CAP);
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
	for (unsigned i = 1; i < n; i++) {
		b = (struct sim_rq_block *)(void *)(p + i * each);
		b->cap = RQ_BLOCK_CAP;
		b->next = s->rq_free;
		s->rq_free = b;
	}
	b = (struct sim_rq_block *)(void *)p;
	b->cap = RQ_BLOCK_CAP;
	return b;
}

static void block_put(struct cfsbw_sim *s, struct sim_rq_block *b)
{
	if (b->cap == RQ_BLOCK_CAP) {
		b->next = s->rq_free;
		s->rq_free = b;
	} else {
		cfsbw_sim__free(s, b);
	}
}

int cfsbw_sim__rq_init(struct cfsbw_sim *s, struct sim_task *t)
{
	struct sim_rq_block *b = cfsbw_sim__alloc(s, 1, block_bytes(RQ_FIRST_CAP));
	if (!b)
		return -ENOMEM;
	b->next = b;
	b->cap = RQ_FIRST_CAP;
	t->rq_last = b;
	t->rq_head = t->rq_tail = t->rq_len = 0;
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
	if (t->rq_tail == last->cap) {
		if (t->rq_len == UINT32_MAX)
			return false;
		struct sim_rq_block *b = block_take(s);
		if (!b)
			return false;
		b->next = last->next;
		last->next = b;
		t->rq_last = last = b;
		t->rq_tail = 0;
	}
	struct sim_request *r = &last->req[t->rq_tail++];
	r->arrival_ns = arrival_ns;
	r->service_ns = service_ns;
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
	if (--t->rq_len == 0) {
		t->rq_head = t->rq_tail = 0;
		return;
	}
	struct sim_rq_block *first = t->rq_last->next;
	if (++t->rq_head == first->cap) {
		t->rq_last->next = first->next;
		block_put(s, first);
		t->rq_head = 0;
	}
}
