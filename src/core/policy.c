/*
 * policy.c - the policies side by side (SPEC section 6): their names,
 * their facts (R1's defaults, burst, R12's throttled clock) and their
 * steps (policy_v4.c, policy_upstream.c, policy_hardlimits.c).  A new
 * policy is a new file, a line in CFSBW_POLICY_MAP (cfsbw.h) and a line
 * in POLICY_LIST.
 */
#include <errno.h>
#include <string.h>

#include "core/bandwidth.h"

static const char *const names[CFSBW_POLICY_COUNT] = {
#define POLICY_NAME(e, name) [CFSBW_POLICY_##e] = name,
	CFSBW_POLICY_MAP(POLICY_NAME)
#undef POLICY_NAME
};

/*
 * X(id, steps, default period ms, default slice ms (R1), has a burst,
 * throttled clock needs tasks (R12)).  Hard limits (seed 011) keeps the
 * CFS period of its time; it has no slice, and the slice sysctl is kept
 * only so that one scenario runs under every policy.
 */
#define POLICY_LIST(X)                                                         \
	X(V4, cfsbw__policy_v4, 500, 10, false, false)                         \
	X(UPSTREAM, cfsbw__policy_upstream, 100, 5, true, true)                \
	X(HARDLIMITS, cfsbw__policy_hardlimits, 500, 10, false, false)

static const struct cfsbw_policy_info policies[CFSBW_POLICY_COUNT] = {
#define POLICY_INFO(e, policy_steps, period_ms, slice_ms, burst, clock)        \
	[CFSBW_POLICY_##e] = {                                                 \
		.default_period_ns = (period_ms) * CFSBW_NSEC_PER_MSEC,        \
		.default_slice_ns = (slice_ms) * CFSBW_NSEC_PER_MSEC,          \
		.has_burst = (burst),                                          \
		.throttled_clock_needs_tasks = (clock),                        \
		.steps = &(policy_steps),                                      \
	},
	POLICY_LIST(POLICY_INFO)
#undef POLICY_INFO
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

const struct cfsbw_policy_info *cfsbw__policy_info(enum cfsbw_policy p)
{
	BUG_ON((unsigned)p >= CFSBW_POLICY_COUNT || !policies[p].steps);
	return &policies[p];
}
