/*
 * policy.c - the policies' names and defaults (R1, SPEC section 6).
 */
#include <errno.h>
#include <string.h>

#include "core/bandwidth.h"

/*
 * R1: v4's defaults are the seeds' (period 500 ms, slice 10 ms: seeds 002,
 * 003, 008); upstream's are today's Linux (period 100 ms, slice 5 ms).
 * hardlimits keeps the seeds' period (seed 011 reuses the RT period code
 * with the CFS defaults of its time); it has no slice.
 * X(enum suffix, period in ms, slice in us)
 */
#define POLICY_DEFAULTS(X)                                                     \
	X(V4, 500, 10000)                                                      \
	X(UPSTREAM, 100, 5000)                                                 \
	X(HARDLIMITS, 500, 10000)

static const struct {
	int64_t period_ns, slice_ns;
} defaults[CFSBW_POLICY_COUNT] = {
#define POLICY_DEFAULT(e, period_ms, slice_us)                                 \
	[CFSBW_POLICY_##e] = {period_ms * CFSBW_NSEC_PER_MSEC,                 \
			      slice_us * CFSBW_NSEC_PER_USEC},
	POLICY_DEFAULTS(POLICY_DEFAULT)
#undef POLICY_DEFAULT
};

static const char *const names[CFSBW_POLICY_COUNT] = {
#define POLICY_NAME(e, name) [CFSBW_POLICY_##e] = name,
	CFSBW_POLICY_MAP(POLICY_NAME)
#undef POLICY_NAME
};

const char *cfsbw_policy_name(enum cfsbw_policy policy)
{
	return (unsigned)policy < CFSBW_POLICY_COUNT ? names[policy] : NULL;
}

int cfsbw_policy_parse(const char *name, enum cfsbw_policy *out)
{
	for (unsigned i = 0; i < CFSBW_POLICY_COUNT; i++) {
		if (name && strcmp(name, names[i]) == 0) {
			*out = (enum cfsbw_policy)i;
			return 0;
		}
	}
	return -EINVAL;
}

int64_t __policy_default_period_ns(enum cfsbw_policy policy)
{
	return defaults[policy].period_ns;
}

int64_t __policy_default_slice_ns(enum cfsbw_policy policy)
{
	return defaults[policy].slice_ns;
}
