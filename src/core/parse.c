/*
 * parse.c - durations with their units ("1.5ms").  Integers as the
 * kernel's cgroup files take them (R2) are common/helpers.h's parse_u64
 * and parse_s64.
 */
#include <errno.h>
#include <string.h>

#include "core/bandwidth.h"

static const struct {
	const char *suffix;
	int64_t ns;
} units[] = {
	{"ns", 1},
	{"us", CFSBW_NSEC_PER_USEC},
	{"ms", CFSBW_NSEC_PER_MSEC},
	{"s", CFSBW_NSEC_PER_SEC},
};

int cfsbw_parse_duration(const char *text, int64_t default_unit_ns,
			 int64_t *out_ns)
{
	if (!text || default_unit_ns <= 0)
		return -EINVAL;
	const char *p = text;
	uint64_t whole = 0, frac = 0, frac_scale = 1;
	bool digits = false;

	for (; *p >= '0' && *p <= '9'; p++, digits = true) {
		if (whole > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, digits = true) {
			if (frac_scale >= UINT64_C(1000000000000000000))
				return -EINVAL; /* finer than any unit allows */
			frac = frac * 10 + (uint64_t)(*p - '0');
			frac_scale *= 10;
		}
	}
	if (!digits)
		return -EINVAL;

	int64_t unit = default_unit_ns;
	if (*p) {
		unit = 0;
		for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
			if (strcmp(p, units[i].suffix) == 0)
				unit = units[i].ns;
		if (!unit)
			return -EINVAL;
	}
	uint64_t u = (uint64_t)unit;
	if (whole > (uint64_t)INT64_MAX / u)
		return -ERANGE;
	/*
	 * The fraction must come to whole nanoseconds.  frac < frac_scale, and
	 * both the units and frac_scale are powers of ten, so one divides the
	 * other and nothing overflows.
	 */
	uint64_t frac_ns;
	if (u % frac_scale == 0)
		frac_ns = frac * (u / frac_scale);
	else if (frac_scale % u == 0 && frac % (frac_scale / u) == 0)
		frac_ns = frac / (frac_scale / u);
	else
		return -EINVAL;
	uint64_t ns = whole * u + frac_ns;
	if (ns > (uint64_t)INT64_MAX)
		return -ERANGE;
	*out_ns = (int64_t)ns;
	return 0;
}
