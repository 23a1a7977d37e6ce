/*
 * rng.c - the simulator's randomness: streams of xoshiro256** seeded
 * through splitmix64 (each task has two of its own, keyed by the seed and
 * its place among the machine's tasks), and exponential samples computed
 * with integers only.
 *
 * Why no libm: log() may round differently from one C library (or one
 * compiler's contraction of multiply-adds) to another, and one differently
 * rounded inter-arrival time changes every event after it.  -ln(U) is
 * computed here in fixed point (30 fractional bits) from the integer's
 * base-2 logarithm: a table built at seeding time by the exact bit-by-bit
 * algorithm, interpolated with integers.  The same seed gives the same
 * samples on every machine.
 */
#include "sim/sim_int.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}


static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t cfsbw_sim__stream_next(struct sim_stream *st)
{
	uint64_t *s = st->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

#define LOG_FRAC_BITS 30

/*
 * log2(v) for 1 <= v < 2^63, in fixed point with LOG_FRAC_BITS fraction
 * bits: the integer part is the top bit's position; each fraction bit comes
 * from squaring the mantissa (kept in [1, 2) as Q31, so a square fits in 64
 * bits) and seeing whether it reached 2.
 */
static uint64_t log2_fixed(uint64_t v)
{
	unsigned k = 0;
	while ((v >> k) > 1)
		k++;
	uint64_t m = k <= 31 ? v << (31 - k) : v >> (k - 31);
	uint64_t frac = 0;
	for (int i = 1; i <= LOG_FRAC_BITS; i++) {
		m = (m * m) >> 31;
		if (m >= (UINT64_C(2) << 31)) {
			m >>= 1;
			frac |= UINT64_C(1) << (LOG_FRAC_BITS - i);
		}
	}
	return ((uint64_t)k << LOG_FRAC_BITS) | frac;
}

/* ln 2 with 28 fraction bits: 0.693147180559945 * 2^28, rounded. */
#define LN2_Q28 UINT64_C(186065280)

/*
 * log2 of x >= 1 in Q30: the top bit's position, plus log2 of the mantissa
 * in [1, 2) from the table (1024 intervals, linear in between: the error of
 * the interpolation is below 2e-7, far under a nanosecond of a sample).
 */
static uint64_t log2_fast(const struct sim_rng *r, uint64_t x)
{
	unsigned k = 63;
#if defined(__GNUC__) || defined(__clang__)
	k = 63u - (unsigned)__builtin_clzll(x);
#else
	while (!(x >> k))
		k--;
#endif
	uint64_t m = k <= 52 ? x << (52 - k) : x >> (k - 52); /* Q52 */
	unsigned idx = (unsigned)(m >> 42) & (SIM_RNG_LOG_TABLE - 1);
	uint64_t frac = (m >> 10) & UINT64_C(0xffffffff);
	uint64_t lo = r->log2_table[idx], hi = r->log2_table[idx + 1];
	return ((uint64_t)k << LOG_FRAC_BITS) + lo + (((hi - lo) * frac) >> 32);
}

void cfsbw_sim__stream_seed(struct sim_stream *st, uint64_t key)
{
	for (int i = 0; i < 4; i++)
		st->s[i] = splitmix64(&key);
}

/*
 * The key of stream `which` of a seed: the seed mixed with the number.
 * Keys that merely stepped by splitmix64's increment would give streams
 * sharing three of their four words with the next one's.
 */
uint64_t cfsbw_sim__stream_key(uint64_t seed, uint64_t which)
{
	uint64_t x = which;
	x = seed ^ splitmix64(&x);
	return splitmix64(&x);
}

void cfsbw_sim__task_streams(struct sim_stream st[2], uint64_t seed,
			     uint64_t index)
{
	for (uint64_t k = 0; k < 2; k++)
		cfsbw_sim__stream_seed(&st[k],
				       cfsbw_sim__stream_key(seed, 2 * index + k));
}

void cfsbw_sim__rng_init(struct sim_rng *r)
{
	/* log2(1 + i / 1024) in Q30, from the exact bit-by-bit algorithm */
	for (unsigned i = 0; i <= SIM_RNG_LOG_TABLE; i++)
		r->log2_table[i] = (uint32_t)(log2_fixed(SIM_RNG_LOG_TABLE + i) -
					       ((uint64_t)10 << LOG_FRAC_BITS));
}

int64_t cfsbw_sim__rng_exp(const struct sim_rng *r, struct sim_stream *st,
			   int64_t mean_ns)
{
	if (mean_ns <= 0)
		return 0;
	/* U = (x + 1) / 2^53 in (0, 1]; -ln U = (53 - log2(x + 1)) ln 2. */
	uint64_t x = (cfsbw_sim__stream_next(st) >> 11) + 1;
	uint64_t e2 = ((uint64_t)53 << LOG_FRAC_BITS) - log2_fast(r, x);
	/* e2 < 2^36 and LN2_Q28 < 2^28: the product fits in 64 bits. */
	uint64_t e = (e2 * LN2_Q28) >> 28; /* -ln U, Q30 */
	/* Means are capped at 2^42 ns (over an hour): mean * e < 2^78. */
	uint64_t mean = (uint64_t)mean_ns;
	if (mean > (UINT64_C(1) << 42))
		mean = UINT64_C(1) << 42;
	/* mean * e >> 30, rounded to the nearest nanosecond, not truncated:
	 * a mean of 1 ns (10^9 arrivals a second) truncated would average
	 * 0.58 ns */
#if defined(__SIZEOF_INT128__)
	__extension__ typedef unsigned __int128 u128;
	uint64_t v = (uint64_t)(((u128)mean * e + (UINT64_C(1) << 29)) >> 30);
#else
	/* without 128 bits: the mean split at bit 20, the same sum */
	uint64_t hi = mean >> 20, lo = mean & ((UINT64_C(1) << 20) - 1);
	uint64_t he = hi * e; /* < 2^58 */
	uint64_t v = (he >> 10) +
		     ((((he & 1023) << 20) + lo * e + (UINT64_C(1) << 29)) >> 30);
#endif
	return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}
