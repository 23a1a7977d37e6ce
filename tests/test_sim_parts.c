/*
 * test_sim_parts.c - the simulator's parts on their own, checked against
 * the plain way of computing the same thing: a line's latency percentiles
 * (found by selection) against a full sort.
 */
#include "harness.h"
#include "cfsbw_sim.h"
#include "sim/sim_int.h"

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* The nearest-rank percentile pct / scale of n sorted values. */
static int64_t rank(const int64_t *sorted, size_t n, size_t pct, size_t scale)
{
	return sorted[(n * pct + scale - 1) / scale - 1];
}

#define LAT_MAX 5000u

/*
 * Lines of 1 to 5000 latencies, drawn from few values (many equal), from
 * many, already sorted and in reverse: p50, p99, p99.9, the maximum and
 * the mean are those of the sorted values, exactly.
 */
TEST(latency_percentiles_are_the_sorted_ranks, "section-7")
{
	static int64_t lat[LAT_MAX], sorted[LAT_MAX];
	struct sim_rng rng;
	cfsbw_sim__rng_seed(&rng, 3);
	unsigned checked = 0;
	for (size_t n = 1; n <= LAT_MAX; n = n < 40 ? n + 1 : n * 5 / 4) {
		for (unsigned shape = 0; shape < 4; shape++) {
			for (size_t i = 0; i < n; i++) {
				uint64_t r = cfsbw_sim__rng_next(&rng);
				lat[i] = shape == 0 ? (int64_t)(r % 3) * 1000000
							/* many equal */
					 : shape == 1
						 ? (int64_t)(r >> 20) /* spread */
					 : shape == 2 ? (int64_t)i * 7 /* sorted */
						      : (int64_t)(n - i) * 7;
			}
			memcpy(sorted, lat, n * sizeof(*lat));
			qsort(sorted, n, sizeof(*sorted), cmp_i64);
			struct sim_line l;
			memset(&l, 0, sizeof l);
			l.lat = lat;
			l.nr_lat = l.cap_lat = n;
			cfsbw_sim__line_finish(NULL, &l);
			struct cfsbw_sim_latency got;
			cfsbw_sim__line_latency(&l, &got);
			int64_t sum = 0;
			for (size_t i = 0; i < n; i++)
				sum += sorted[i];
			ASSERT_UINT(got.count, ==, n);
			ASSERT_INT(got.p50_ns, ==, rank(sorted, n, 50, 100));
			ASSERT_INT(got.p99_ns, ==, rank(sorted, n, 99, 100));
			ASSERT_INT(got.p999_ns, ==, rank(sorted, n, 999, 1000));
			ASSERT_INT(got.max_ns, ==, sorted[n - 1]);
			ASSERT_INT(got.mean_ns, ==, sum / (int64_t)n);
			checked++;
		}
	}
	ASSERT_UINT(checked, >, 200);
}

TEST_MAIN(TEST_ENTRY(latency_percentiles_are_the_sorted_ranks))
