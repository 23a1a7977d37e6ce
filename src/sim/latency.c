/*
 * latency.c - a line's latencies: recorded as the run goes, their
 * percentiles at the end (nearest rank, exact).
 *
 * A thousand lines may record at once, a million latencies and more in a
 * run.  Each line fills 1 KB chunks, taken in turn from blocks that all
 * lines share: memory is written in the order it is handed out, whichever
 * lines record, so a run touches a few new pages at a time.  (An array
 * per line, reserved for the whole run, touched a page per line, each a
 * fault the first time it was written, about 10 us on a virtual machine,
 * and a TLB entry per line: a fifth of bench_sim's issue case.)  Blocks
 * grow to 2 MB, on huge pages where the system gives them
 * (cfsbw_sim__alloc_bulk).  A latency under 2^32 ns (4.3 s) takes 4
 * bytes; a longer one 8, in chunks of the line's own too, all above the
 * short ones.  (The long ones were an array per line, grown by doubling:
 * in bench_sim's issue case, whose overloaded request lines queue for
 * longer than that, they are a third of its million latencies, and the
 * copies and faults of growing were 2% of the run.)
 */
#include <stdlib.h>
#include <string.h>

#include "sim/sim_int.h"

/* Blocks: the first at least this large, each next twice the last, up
 * to 2 MB. */
#define LAT_BLOCK_FIRST ((size_t)16 << 10)
#define LAT_BLOCK_MAX ((size_t)2 << 20)

struct sim_lat_block {
	struct sim_lat_block *next;
	/* then chunks, from offset sizeof(struct sim_lat_chunk) */
};

/* The first block: room for two chunks a line (a line that records
 * takes one at least, and one more for its long latencies), so that a
 * machine of a thousand lines starts on a 2 MB block, a huge page, where
 * growing from 16 KB faulted in 500 small pages one by one (13 to 20 us
 * each on the development VM). */
static size_t lat_block_first(const struct cfsbw_sim *s)
{
	const size_t per_line = 2 * sizeof(struct sim_lat_chunk);
	size_t want = LAT_BLOCK_FIRST;
	while (want < LAT_BLOCK_MAX && want / per_line < s->nr_lines)
		want *= 2;
	return want;
}

/* A new chunk at the end of the list from *first to *last, from the
 * current block or a new one; NULL: out of memory. */
static struct sim_lat_chunk *lat_chunk_new(struct cfsbw_sim *s,
					   struct sim_lat_chunk **first,
					   struct sim_lat_chunk **last)
{
	const size_t size = sizeof(struct sim_lat_chunk);
	if ((size_t)(s->lat_end - s->lat_next) < size) {
		size_t want = s->lat_block_size ? 2 * s->lat_block_size
						: lat_block_first(s);
		want = want < LAT_BLOCK_MAX ? want : LAT_BLOCK_MAX;
		struct sim_lat_block *b = cfsbw_sim__alloc_bulk(s, want);
		if (!b)
			return NULL;
		b->next = s->lat_blocks;
		s->lat_blocks = b;
		s->lat_block_size = want;
		s->lat_next = (char *)b + size; /* chunks stay aligned */
		s->lat_end = (char *)b + want;
	}
	struct sim_lat_chunk *c = (struct sim_lat_chunk *)(void *)s->lat_next;
	s->lat_next += size;
	c->next = NULL;
	if (*last)
		(*last)->next = c;
	else
		*first = c;
	*last = c;
	return c;
}

void cfsbw_sim__line_record(struct cfsbw_sim *s, struct sim_line *l,
			    int64_t latency_ns)
{
	SIM_BUG_ON(latency_ns < 0);
	if ((uint64_t)latency_ns <= UINT32_MAX) {
		if (l->lat_slot == l->lat_slot_end) {
			struct sim_lat_chunk *c =
				lat_chunk_new(s, &l->lat_first, &l->lat_last);
			if (!c) {
				l->lat_lost++; /* reported, never fatal */
				return;
			}
			l->lat_slot = c->v;
			l->lat_slot_end = c->v + SIM_LAT_CHUNK_VALUES;
		}
		*l->lat_slot++ = (uint32_t)latency_ns;
		l->nr_lat++;
	} else {
		if (l->long_slot == l->long_slot_end) {
			struct sim_lat_chunk *c =
				lat_chunk_new(s, &l->long_first, &l->long_last);
			if (!c) {
				l->lat_lost++;
				return;
			}
			l->long_slot = c->lv;
			l->long_slot_end = c->lv + SIM_LAT_CHUNK_LONGS;
		}
		*l->long_slot++ = latency_ns;
		l->nr_long++;
	}
	l->lat_sum += latency_ns;
	if (latency_ns > l->lat_max)
		l->lat_max = latency_ns;
}

void cfsbw_sim__line_clear(struct sim_line *l)
{
	l->lat_first = l->lat_last = NULL;
	l->lat_slot = l->lat_slot_end = NULL;
	l->long_first = l->long_last = NULL;
	l->long_slot = l->long_slot_end = NULL;
	l->nr_lat = l->nr_long = 0;
	l->lat_sum = l->lat_max = 0;
	l->lat_lost = 0;
}

void cfsbw_sim__lat_free(struct cfsbw_sim *s)
{
	while (s->lat_blocks) {
		struct sim_lat_block *b = s->lat_blocks;
		s->lat_blocks = b->next;
		cfsbw_sim__free(s, b);
	}
	s->lat_next = s->lat_end = NULL;
	cfsbw_sim__free(s, s->lat_scratch);
	s->lat_scratch = NULL;
	s->cap_scratch = 0;
}

/*
 * SELECT_KTH(name, T) defines name(v, n, k): put into v[k] the value that
 * sorted order puts there, the smaller ones before it and the larger
 * after (Hoare's selection, the median of three as pivot; equal values
 * split on both sides, so a line of identical latencies costs no more).
 * A range that does not shrink fast enough (more rounds than twice its
 * bits) is sorted: never quadratic.  One body for the two stores of
 * latencies (4 and 8 bytes).
 */
#define SELECT_KTH(name, T)                                                  \
	static int name##_cmp(const void *a, const void *b)                  \
	{                                                                    \
		T x = *(const T *)a, y = *(const T *)b;                      \
		return (x > y) - (x < y);                                    \
	}                                                                    \
	static void name##_swap(T *a, T *b)                                  \
	{                                                                    \
		T t = *a;                                                    \
		*a = *b;                                                     \
		*b = t;                                                      \
	}                                                                    \
	static void name(T *v, size_t n, size_t k)                           \
	{                                                                    \
		size_t lo = 0, hi = n - 1;                                   \
		unsigned rounds = 0, limit = 2;                              \
		for (size_t m = n; m > 1; m >>= 1)                           \
			limit += 2;                                          \
		while (hi > lo + 16) {                                       \
			if (++rounds > limit) {                              \
				qsort(v + lo, hi - lo + 1, sizeof(*v),       \
				      name##_cmp);                           \
				return;                                      \
			}                                                    \
			size_t mid = lo + (hi - lo) / 2;                     \
			if (v[mid] < v[lo])                                  \
				name##_swap(&v[mid], &v[lo]);                \
			if (v[hi] < v[lo])                                   \
				name##_swap(&v[hi], &v[lo]);                 \
			if (v[hi] < v[mid])                                  \
				name##_swap(&v[hi], &v[mid]);                \
			T pivot = v[mid];                                    \
			size_t i = lo, j = hi;                               \
			for (;;) {                                           \
				while (v[i] < pivot)                         \
					i++;                                 \
				while (pivot < v[j])                         \
					j--;                                 \
				if (i >= j)                                  \
					break;                               \
				name##_swap(&v[i], &v[j]);                   \
				i++;                                         \
				j--;                                         \
			}                                                    \
			/* [lo, j] <= pivot <= [j + 1, hi] */                \
			if (k <= j)                                          \
				hi = j;                                      \
			else                                                 \
				lo = j + 1;                                  \
		}                                                            \
		/* a few left: insertion sort */                             \
		for (size_t i = lo + 1; i <= hi; i++) {                      \
			T x = v[i];                                          \
			size_t j = i;                                        \
			while (j > lo && v[j - 1] > x) {                     \
				v[j] = v[j - 1];                             \
				j--;                                         \
			}                                                    \
			v[j] = x;                                            \
		}                                                            \
	}

SELECT_KTH(select_short, uint32_t)
SELECT_KTH(select_long, int64_t)

/* The nearest rank of percentile pct / scale among n >= 1 values, as an
 * index into them sorted. */
static size_t rank_index(size_t n, size_t pct, size_t scale)
{
	return (n * pct + scale - 1) / scale - 1;
}


/* The short latencies from index `from` on not yet placed, and the long
 * ones likewise: each selection leaves the larger values after its rank,
 * so the next, higher rank is looked for among those alone (and is
 * already in place when it is that rank).  Lowest rank first: the median
 * over all the values, then p99 over the half above it, p99.9 over the
 * hundredth above that, where highest first had each selection go over
 * nearly all of them (Hoare's selection expects about 4.5 comparisons a
 * value in all, against 7.5). */
struct lat_view {
	uint32_t *v;       /* the line's short latencies, contiguous */
	size_t nr;
	int64_t *lv;       /* its long ones */
	size_t nr_long;
	size_t from, from_long;
};

/* The value at rank k of the line's latencies sorted: the short ones
 * (all below the long ones), then the long ones.  Ranks are asked in
 * increasing order. */
static int64_t lat_at(struct lat_view *w, size_t k)
{
	if (k >= w->nr) {
		size_t j = k - w->nr;
		if (j >= w->from_long) {
			select_long(w->lv + w->from_long,
				    w->nr_long - w->from_long, j - w->from_long);
			w->from_long = j + 1;
		}
		return w->lv[j];
	}
	if (k >= w->from) {
		select_short(w->v + w->from, w->nr - w->from, k - w->from);
		w->from = k + 1;
	}
	return w->v[k];
}

/* The first n values of the list of chunks from c (`per` values to a
 * chunk, each value `size` bytes), contiguous: in place in a list of one
 * chunk, else copied end to end into s's scratch buffer from byte `at`
 * on (lat_scratch_fit made room); NULL for an empty list. */
static void *lat_values(const struct cfsbw_sim *s, size_t at,
			struct sim_lat_chunk *c, size_t n, size_t per,
			size_t size)
{
	if (!c || !c->next)
		return c ? c->v : NULL;
	char *dst = (char *)s->lat_scratch + at;
	for (char *p = dst; c && n; c = c->next) {
		size_t k = n < per ? n : per;
		memcpy(p, c->v, k * size);
		p += k * size;
		n -= k;
	}
	return dst;
}

/* Room for the copies of a line's nr short and nr_long long latencies in
 * s's scratch buffer (the size of the largest line, kept for the next):
 * the short ones first, the long ones from the returned offset; SIZE_MAX:
 * out of memory. */
static size_t lat_scratch_fit(struct cfsbw_sim *s, size_t nr, size_t nr_long)
{
	if (nr > SIZE_MAX / 16 || nr_long > SIZE_MAX / 16) /* no overflow */
		return SIZE_MAX;
	size_t long_at = (nr * sizeof(uint32_t) + 7) & ~(size_t)7;
	size_t need = long_at + nr_long * sizeof(int64_t);
	if (need > s->cap_scratch) {
		/* on huge pages too: a line of millions is megabytes, each
		 * page of which would be a fault */
		cfsbw_sim__free(s, s->lat_scratch);
		s->cap_scratch = 0;
		s->lat_scratch = cfsbw_sim__alloc_bulk(s, need);
		if (!s->lat_scratch)
			return SIZE_MAX;
		s->cap_scratch = need;
	}
	return long_at;
}

/*
 * After the run: p50, p99, p99.9 at their nearest ranks, found by
 * selection, lowest rank first, in the line's one chunk of each size or
 * in copies of its chunks end to end (in the scratch buffer).  Where that
 * buffer cannot be had, the line's percentiles are lost, counted as lost
 * latencies.
 */
void cfsbw_sim__line_finish(struct cfsbw_sim *s, struct sim_line *l)
{
	struct cfsbw_sim_latency *out = &l->summary;
	size_t n = l->nr_lat + l->nr_long;
	memset(out, 0, sizeof(*out));
	if (!n)
		return;
	struct lat_view w = {.nr = l->nr_lat, .nr_long = l->nr_long};
	bool short_copied = l->lat_first && l->lat_first->next;
	bool long_copied = l->long_first && l->long_first->next;
	size_t long_at = 0;
	if (short_copied || long_copied) {
		long_at = lat_scratch_fit(s, short_copied ? l->nr_lat : 0,
					  long_copied ? l->nr_long : 0);
		if (long_at == SIZE_MAX) {
			l->lat_lost += n;
			return;
		}
	}
	w.v = lat_values(s, 0, l->lat_first, l->nr_lat, SIM_LAT_CHUNK_VALUES,
			 sizeof(*w.v));
	w.lv = lat_values(s, long_at, l->long_first, l->nr_long,
			  SIM_LAT_CHUNK_LONGS, sizeof(*w.lv));
	out->count = n;
	out->p50_ns = lat_at(&w, rank_index(n, 50, 100));
	out->p99_ns = lat_at(&w, rank_index(n, 99, 100));
	out->p999_ns = lat_at(&w, rank_index(n, 999, 1000));
	out->max_ns = l->lat_max;
	out->mean_ns = l->lat_sum / (int64_t)n;
}

void cfsbw_sim__line_latency(const struct sim_line *l,
			     struct cfsbw_sim_latency *out)
{
	*out = l->summary;
}
