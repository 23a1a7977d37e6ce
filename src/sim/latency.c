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
 * bytes; a longer one 8, in a list of the line's own, all above the short
 * ones.
 */
#include <stdlib.h>
#include <string.h>

#include "sim/sim_int.h"

/* Blocks: the first this large, each next twice the last, up to 2 MB. */
#define LAT_BLOCK_FIRST ((size_t)16 << 10)
#define LAT_BLOCK_MAX ((size_t)2 << 20)

struct sim_lat_block {
	struct sim_lat_block *next;
	/* then chunks, from offset sizeof(struct sim_lat_chunk) */
};

/* A new chunk for l, from the current block or a new one; false: out of
 * memory. */
static bool lat_chunk_new(struct cfsbw_sim *s, struct sim_line *l)
{
	const size_t size = sizeof(struct sim_lat_chunk);
	if ((size_t)(s->lat_end - s->lat_next) < size) {
		size_t want = s->lat_block_size ? 2 * s->lat_block_size
						: LAT_BLOCK_FIRST;
		want = want < LAT_BLOCK_MAX ? want : LAT_BLOCK_MAX;
		struct sim_lat_block *b = cfsbw_sim__alloc_bulk(s, want);
		if (!b)
			return false;
		b->next = s->lat_blocks;
		s->lat_blocks = b;
		s->lat_block_size = want;
		s->lat_next = (char *)b + size; /* chunks stay aligned */
		s->lat_end = (char *)b + want;
	}
	struct sim_lat_chunk *c = (struct sim_lat_chunk *)(void *)s->lat_next;
	s->lat_next += size;
	c->next = NULL;
	if (l->lat_last)
		l->lat_last->next = c;
	else
		l->lat_first = c;
	l->lat_last = c;
	l->lat_slot = c->v;
	l->lat_slot_end = c->v + SIM_LAT_CHUNK_VALUES;
	return true;
}

void cfsbw_sim__line_record(struct cfsbw_sim *s, struct sim_line *l,
			    int64_t latency_ns)
{
	SIM_BUG_ON(latency_ns < 0);
	if ((uint64_t)latency_ns <= UINT32_MAX) {
		if (l->lat_slot == l->lat_slot_end && !lat_chunk_new(s, l)) {
			l->lat_lost++; /* reported, never fatal */
			return;
		}
		*l->lat_slot++ = (uint32_t)latency_ns;
		l->nr_lat++;
	} else {
		if (l->nr_long == l->cap_long) {
			size_t cap = l->cap_long ? 2 * l->cap_long : 16;
			int64_t *p = cfsbw_sim__grow(s, l->lat_long, l->nr_long,
						     cap, sizeof(*p));
			if (!p) {
				l->lat_lost++;
				return;
			}
			l->lat_long = p;
			l->cap_long = cap;
		}
		l->lat_long[l->nr_long++] = latency_ns;
	}
	l->lat_sum += latency_ns;
	if (latency_ns > l->lat_max)
		l->lat_max = latency_ns;
}

void cfsbw_sim__line_clear(struct sim_line *l)
{
	l->lat_first = l->lat_last = NULL;
	l->lat_slot = l->lat_slot_end = NULL;
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
	for (size_t i = 0; i < s->nr_lines; i++)
		cfsbw_sim__free(s, s->lines[i].lat_long);
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


/* The short latencies below index `below` not yet placed, and the long
 * ones likewise: each selection leaves the smaller values before its
 * rank, so the next, lower rank is looked for among those alone (and is
 * already in place when it is that rank). */
struct lat_view {
	uint32_t *v;       /* the line's short latencies, contiguous */
	size_t nr;
	int64_t *lv;       /* its long ones */
	size_t below, below_long;
};

/* The value at rank k of the line's latencies sorted: the short ones
 * (all below the long ones), then the long ones. */
static int64_t lat_at(struct lat_view *w, size_t k)
{
	if (k >= w->nr) {
		size_t j = k - w->nr;
		if (j < w->below_long) {
			select_long(w->lv, w->below_long, j);
			w->below_long = j;
		}
		return w->lv[j];
	}
	if (k < w->below) {
		select_short(w->v, w->below, k);
		w->below = k;
	}
	return w->v[k];
}

/*
 * After the run: p50, p99, p99.9 at their nearest ranks, found by
 * selection, highest rank first, in the line's one chunk or in a copy of
 * its chunks end to end (a buffer the size of the largest line, kept for
 * the next).  Where that buffer cannot be had, the line's percentiles are
 * lost, counted as lost latencies.
 */
void cfsbw_sim__line_finish(struct cfsbw_sim *s, struct sim_line *l)
{
	struct cfsbw_sim_latency *out = &l->summary;
	size_t n = l->nr_lat + l->nr_long;
	memset(out, 0, sizeof(*out));
	if (!n)
		return;
	struct lat_view w = {.nr = l->nr_lat, .lv = l->lat_long,
			     .below = l->nr_lat, .below_long = l->nr_long};
	if (l->lat_first && !l->lat_first->next) {
		w.v = l->lat_first->v;
	} else if (l->nr_lat) {
		if (l->nr_lat > s->cap_scratch) {
			/* on huge pages too: a line of millions is megabytes,
			 * each page of which would be a fault */
			cfsbw_sim__free(s, s->lat_scratch);
			s->cap_scratch = 0;
			uint32_t *p = l->nr_lat > SIZE_MAX / sizeof(*p)
					      ? NULL
					      : cfsbw_sim__alloc_bulk(
							s, l->nr_lat * sizeof(*p));
			s->lat_scratch = p;
			if (!p) {
				l->lat_lost += n;
				return;
			}
			s->cap_scratch = l->nr_lat;
		}
		w.v = s->lat_scratch;
		size_t at = 0;
		for (const struct sim_lat_chunk *c = l->lat_first; c;
		     c = c->next) {
			size_t k = l->nr_lat - at < SIM_LAT_CHUNK_VALUES
					   ? l->nr_lat - at
					   : SIM_LAT_CHUNK_VALUES;
			memcpy(w.v + at, c->v, k * sizeof(*w.v));
			at += k;
		}
	}
	out->count = n;
	out->p999_ns = lat_at(&w, rank_index(n, 999, 1000));
	out->p99_ns = lat_at(&w, rank_index(n, 99, 100));
	out->p50_ns = lat_at(&w, rank_index(n, 50, 100));
	out->max_ns = l->lat_max;
	out->mean_ns = l->lat_sum / (int64_t)n;
}

void cfsbw_sim__line_latency(const struct sim_line *l,
			     struct cfsbw_sim_latency *out)
{
	*out = l->summary;
}
