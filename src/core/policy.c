/*
 * policy.c - the policies' names (R1, SPEC section 6) and the table that
 * gives each one its steps (policy_v4.c, policy_upstream.c,
 * policy_hardlimits.c).  A new policy is a new file, a line in
 * CFSBW_POLICY_MAP (cfsbw.h) and a line here.
 */
#include <errno.h>
#include <string.h>

#include "core/bandwidth.h"

static const char *const names[CFSBW_POLICY_COUNT] = {
#define POLICY_NAME(e, name) [CFSBW_POLICY_##e] = name,
	CFSBW_POLICY_MAP(POLICY_NAME)
#undef POLICY_NAME
};

static const struct cfsbw_policy_steps *const steps[CFSBW_POLICY_COUNT] = {
	[CFSBW_POLICY_V4] = &cfsbw__policy_v4,
	[CFSBW_POLICY_UPSTREAM] = &cfsbw__policy_upstream,
	[CFSBW_POLICY_HARDLIMITS] = &cfsbw__policy_hardlimits,
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

const struct cfsbw_policy_steps *cfsbw__policy_steps(enum cfsbw_policy p)
{
	BUG_ON((unsigned)p >= CFSBW_POLICY_COUNT || !steps[p]);
	return steps[p];
}
