/*
 * parse.c - numbers as the kernel's cgroup files take them, and durations.
 *
 * The kernel strips white space around a written value (strstrip), then
 * kstrtoll/kstrtoull take an optional sign and decimal digits and nothing
 * else; a value beyond 64 bits is -ERANGE, anything else malformed is
 * -EINVAL (R2).
 */
#include <errno.h>
#include <string.h>

#include "core/bandwidth.h"

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
	       c == '\v';
}

/*
 * The digits of text after stripping: *start and *end bound them, *neg
 * says whether a '-' came first.  Returns -EINVAL when there are none.
 */
static int strip_sign(const char *text, const char **start, const char **end,
		      bool *neg)
{
	if (!text)
		return -EINVAL;
	const char *s = text, *e = text + strlen(text);
	while (s < e && is_space(*s))
		s++;
	while (e > s && is_space(e[-1]))
		e--;
	*neg = false;
	if (s < e && (*s == '+' || *s == '-')) {
		*neg = *s == '-';
		s++;
	}
	if (s == e)
		return -EINVAL;
	for (const char *p = s; p < e; p++)
		if (*p < '0' || *p > '9')
			return -EINVAL;
	*start = s;
	*end = e;
	return 0;
}

static int digits_u64(const char *s, const char *e, uint64_t *out)
{
	uint64_t v = 0;
	for (; s < e; s++) {
		uint64_t d = (uint64_t)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int __parse_u64(const char *text, uint64_t *out)
{
	const char *s, *e;
	bool neg;
	int err = strip_sign(text, &s, &e, &neg);
	if (err)
		return err;
	if (neg) /* kstrtoull takes no minus sign */
		return -EINVAL;
	return digits_u64(s, e, out);
}

int __parse_s64(const char *text, int64_t *out)
{
	const char *s, *e;
	bool neg;
	uint64_t v;
	int err = strip_sign(text, &s, &e, &neg);
	if (!err)
		err = digits_u64(s, e, &v);
	if (err)
		return err;
	if (neg) {
		if (v > (uint64_t)INT64_MAX + 1)
			return -ERANGE;
		*out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
	} else {
		if (v > (uint64_t)INT64_MAX)
			return -ERANGE;
		*out = (int64_t)v;
	}
	return 0;
}

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
