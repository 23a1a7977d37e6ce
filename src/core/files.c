/*
 * files.c - the file interface of SPEC section 2: every group's cpu.* files
 * and the slice sysctl, read and written by name, with the kernel's formats
 * and errors (R2).  Drivers, the command line and scenario files all come
 * through here: it is the one place values are parsed and validated.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "core/bandwidth.h"

#define P_V4 (1u << CFSBW_POLICY_V4)
#define P_UPSTREAM (1u << CFSBW_POLICY_UPSTREAM)
#define P_HARDLIMITS (1u << CFSBW_POLICY_HARDLIMITS)
#define P_ALL (P_V4 | P_UPSTREAM | P_HARDLIMITS)

/* A value whose nanoseconds would not fit in int64_t is not a time (R2). */
#define MAX_US (INT64_MAX / CFSBW_NSEC_PER_USEC)

/*
 * R3: a group's bandwidth as its files show it, in microseconds: the
 * period, the quota (-1: unlimited) and the burst.  cpu.cfs_period_us,
 * cpu.cfs_quota_us (cpu.cfs_runtime_us) and cpu.cfs_burst_us each show
 * one of them; a write replaces that one and keeps the others, and the
 * whole is validated again (R2), as tg_set_bandwidth does.
 */
enum bw_value { BW_NONE = -1, BW_PERIOD, BW_QUOTA, BW_BURST, NR_BW_VALUES };

struct file_entry;
/* A file's handlers get its entry: the bandwidth files share theirs. */
typedef int file_read_fn(struct cfsbw_group *g, const struct file_entry *f,
			 char *buf, size_t size);
typedef int file_write_fn(struct cfsbw_group *g, const struct file_entry *f,
			  const char *text, int64_t now_ns);

/*
 * The files: X(id, name, policies that have it, read, write, the
 * bandwidth value it shows, rule).
 * cpu.cfs_runtime_us is hard limits' name for its per-runqueue runtime;
 * that policy also answers to cpu.cfs_quota_us so that one scenario can be
 * run under every policy.  The rule is what a valid write looks like: the
 * message for a rejected one, kept beside the code that rejects it.
 */
#define QUOTA_RULE                                                             \
	"R2: a finite quota is a whole number of microseconds from 1000 "     \
	"(1ms) to 2^44-1; a negative value means no limit"
#define FILE_MAP(X)                                                            \
	X(QUOTA, "cpu.cfs_quota_us", P_ALL, bandwidth_read, bandwidth_write,   \
	  BW_QUOTA, QUOTA_RULE)                                                \
	X(RUNTIME, "cpu.cfs_runtime_us", P_HARDLIMITS, bandwidth_read,         \
	  bandwidth_write, BW_QUOTA, QUOTA_RULE)                               \
	X(PERIOD, "cpu.cfs_period_us", P_ALL, bandwidth_read, bandwidth_write, \
	  BW_PERIOD,                                                           \
	  "R2: the period is a whole number of microseconds from 1000 (1ms) "  \
	  "to 1000000 (1s)")                                                   \
	X(BURST, "cpu.cfs_burst_us", P_UPSTREAM, bandwidth_read,               \
	  bandwidth_write, BW_BURST,                                           \
	  "R2: the burst is a whole number of microseconds, at most the "      \
	  "quota")                                                             \
	X(MAX, "cpu.max", P_ALL, max_read, max_write, BW_NONE,                 \
	  "R2: 'max' or a quota of 1000 to 2^44-1 microseconds, then "         \
	  "optionally a period of 1000 to 1000000")                            \
	X(STAT, "cpu.stat", P_ALL, stat_read, stat_write, BW_NONE,             \
	  "cpu.stat is read-only")                                             \
	X(SHARES, "cpu.shares", P_ALL, shares_read, shares_write, BW_NONE,     \
	  "cpu.shares is a whole number from 2 to 262144")

#define FILE_DECLARE(id, name, policies, rd, wr, bw, rule)                     \
	static file_read_fn rd;                                                \
	static file_write_fn wr;
FILE_MAP(FILE_DECLARE)
#undef FILE_DECLARE

static const struct file_entry {
	const char *name;
	unsigned policies;
	file_read_fn *read;
	file_write_fn *write;
	enum bw_value bw;
	const char *rule;
} files[] = {
#define FILE_ENTRY(id, name, policies, rd, wr, bw, rule)                       \
	{name, policies, rd, wr, bw, rule},
	FILE_MAP(FILE_ENTRY)
#undef FILE_ENTRY
};

static const char slice_sysctl[] = "sched_cfs_bandwidth_slice_us";

const char *cfsbw_file_rule(const char *name)
{
	if (!name)
		return NULL;
	if (strcmp(name, slice_sysctl) == 0)
		return "sched_cfs_bandwidth_slice_us is a whole number of "
		       "microseconds, at least 1";
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
		if (strcmp(files[i].name, name) == 0)
			return files[i].rule;
	return NULL;
}

static const struct file_entry *file_find(const struct cfsbw_tree *tree,
					  const char *name)
{
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
		if (name && (files[i].policies & (1u << tree->policy)) &&
		    strcmp(files[i].name, name) == 0)
			return &files[i];
	return NULL;
}

const char *cfsbw_file_name(const struct cfsbw_tree *tree, unsigned index)
{
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
		if (files[i].policies & (1u << tree->policy))
			if (index-- == 0)
				return files[i].name;
	return NULL;
}

int cfsbw_file_write(struct cfsbw_group *g, const char *name,
		     const char *text, int64_t now_ns)
{
	const struct file_entry *f = file_find(g->tree, name);
	if (!f)
		return -ENOENT;
	return f->write(g, f, text, now_ns);
}

int cfsbw_file_read(struct cfsbw_group *g, const char *name, char *buf,
		    size_t size)
{
	const struct file_entry *f = file_find(g->tree, name);
	if (!f)
		return -ENOENT;
	return f->read(g, f, buf, size);
}

/* snprintf's result as a length, or -ENOSPC when it did not fit. */
static int fit(int n, size_t size)
{
	if (n < 0)
		return -EINVAL;
	return (size_t)n < size ? n : -ENOSPC;
}

/* g's bandwidth, in microseconds (BW_QUOTA -1: unlimited). */
static void bandwidth_us(const struct cfsbw_group *g, int64_t us[NR_BW_VALUES])
{
	us[BW_PERIOD] = g->pool.period_ns / CFSBW_NSEC_PER_USEC;
	us[BW_QUOTA] = group_limited(g) ? g->pool.quota_ns / CFSBW_NSEC_PER_USEC
					: -1;
	us[BW_BURST] = g->pool.burst_ns / CFSBW_NSEC_PER_USEC;
}

/*
 * R2: validate a whole configuration, in microseconds (BW_QUOTA < 0:
 * unlimited), as tg_set_bandwidth does, then apply it (R4).
 */
static int set_bandwidth_us(struct cfsbw_group *g,
			    const int64_t us[NR_BW_VALUES], int64_t now_ns)
{
	int64_t period_us = us[BW_PERIOD], quota_us = us[BW_QUOTA],
		burst_us = us[BW_BURST];

	if (!g->parent)
		return -EINVAL; /* the root cannot be limited */
	if (period_us < MIN_CFS_PERIOD_US || period_us > MAX_CFS_PERIOD_US)
		return -EINVAL;
	if (burst_us < 0 || burst_us > MAX_US)
		return -EINVAL;
	if (quota_us >= 0) {
		/* At least one tick of bandwidth every period (seed 002). */
		if (quota_us < MIN_CFS_QUOTA_US || quota_us > MAX_CFS_QUOTA_US)
			return -EINVAL;
		if (burst_us > quota_us ||
		    burst_us + quota_us > MAX_CFS_QUOTA_US)
			return -EINVAL;
	}
	int64_t quota_ns = quota_us < 0 ? CFSBW_RUNTIME_INF
					: quota_us * CFSBW_NSEC_PER_USEC;
	return cfsbw__group_set_bandwidth(g, period_us * CFSBW_NSEC_PER_USEC,
				     quota_ns, burst_us * CFSBW_NSEC_PER_USEC,
				     now_ns);
}

/* A u64 from the file interface as a non-negative int64_t of microseconds:
 * too large for nanoseconds is -EINVAL, as in tg_set_bandwidth. */
static int parse_us(const char *text, int64_t *out)
{
	uint64_t v;
	int err = parse_u64(text, &v);
	if (err)
		return err;
	if (v > (uint64_t)MAX_US)
		return -EINVAL;
	*out = (int64_t)v;
	return 0;
}

/* One number and a newline, as the kernel prints a cgroup file. */
static int print_s64(char *buf, size_t size, int64_t v)
{
	return fit(snprintf(buf, size, "%" PRId64 "\n", v), size);
}

/* kstrtoll: any negative value means unlimited (seed 008). */
static int parse_quota_us(const char *text, int64_t *out)
{
	int err = parse_s64(text, out);
	if (!err && *out < 0)
		*out = -1;
	return err;
}

static int bandwidth_read(struct cfsbw_group *g, const struct file_entry *f,
			  char *buf, size_t size)
{
	int64_t us[NR_BW_VALUES];
	bandwidth_us(g, us);
	return print_s64(buf, size, us[f->bw]);
}

static int bandwidth_write(struct cfsbw_group *g, const struct file_entry *f,
			   const char *text, int64_t now_ns)
{
	int64_t us[NR_BW_VALUES];
	bandwidth_us(g, us);
	int err = f->bw == BW_QUOTA ? parse_quota_us(text, &us[BW_QUOTA])
				    : parse_us(text, &us[f->bw]);
	if (err)
		return err;
	return set_bandwidth_us(g, us, now_ns);
}

static int max_read(struct cfsbw_group *g, const struct file_entry *f,
		    char *buf, size_t size)
{
	int64_t us[NR_BW_VALUES];
	(void)f;
	bandwidth_us(g, us);
	int n = group_limited(g)
			? snprintf(buf, size, "%" PRId64 " %" PRId64 "\n",
				   us[BW_QUOTA], us[BW_PERIOD])
			: snprintf(buf, size, "max %" PRId64 "\n",
				   us[BW_PERIOD]);
	return fit(n, size);
}

/* Copies the next white-space separated token of *p into tok. */
static int next_token(const char **p, char *tok, size_t size)
{
	const char *s = *p;
	while (*s == ' ' || *s == '\t' || *s == '\n')
		s++;
	size_t len = 0;
	while (s[len] && s[len] != ' ' && s[len] != '\t' && s[len] != '\n')
		len++;
	if (len >= size)
		return -EINVAL;
	memcpy(tok, s, len);
	tok[len] = '\0';
	*p = s + len;
	return (int)len;
}

/* cgroup v2: "$MAX [$PERIOD]"; $MAX is "max" or a number, never negative. */
static int max_write(struct cfsbw_group *g, const struct file_entry *f,
		     const char *text, int64_t now_ns)
{
	char quota_tok[24], period_tok[24], rest[2];
	const char *p = text ? text : "";
	int64_t us[NR_BW_VALUES];
	int err;

	(void)f;
	bandwidth_us(g, us);
	us[BW_QUOTA] = -1;

	if (next_token(&p, quota_tok, sizeof quota_tok) <= 0)
		return -EINVAL;
	int has_period = next_token(&p, period_tok, sizeof period_tok);
	if (has_period < 0 || next_token(&p, rest, sizeof rest) != 0)
		return -EINVAL;
	if (strcmp(quota_tok, "max") != 0) {
		if (quota_tok[0] == '-' || quota_tok[0] == '+')
			return -EINVAL;
		if ((err = parse_us(quota_tok, &us[BW_QUOTA])))
			return err;
	}
	if (has_period > 0) {
		if (period_tok[0] == '-' || period_tok[0] == '+')
			return -EINVAL;
		if ((err = parse_us(period_tok, &us[BW_PERIOD])))
			return err;
	}
	return set_bandwidth_us(g, us, now_ns);
}

/* R12: cpu.stat prints from CFSBW_STAT_MAP, one "name value" a line. */
static int stat_read(struct cfsbw_group *g, const struct file_entry *f,
		     char *buf, size_t size)
{
	struct cfsbw_stats st;
	bool bursts = g->tree->info->has_burst;
	size_t used = 0;

	(void)f;
	cfsbw_group_stats(g, &st);
	if (size)
		buf[0] = '\0';
#define STAT_LINE(name, upstream_only)                                         \
	if (!(upstream_only) || bursts) {                                       \
		int n = fit(snprintf(buf + used, size - used,                  \
				     #name " %" PRIu64 "\n", st.name),         \
			    size - used);                                      \
		if (n < 0)                                                     \
			return n;                                              \
		used += (size_t)n;                                             \
	}
	CFSBW_STAT_MAP(STAT_LINE)
#undef STAT_LINE
	return (int)used;
}

/* Read-only: the kernel's root-user write fails with EINVAL. */
static int stat_write(struct cfsbw_group *g, const struct file_entry *f,
		      const char *text, int64_t now_ns)
{
	(void)g;
	(void)f;
	(void)text;
	(void)now_ns;
	return -EINVAL;
}

static int shares_read(struct cfsbw_group *g, const struct file_entry *f,
		       char *buf, size_t size)
{
	(void)f;
	return fit(snprintf(buf, size, "%u\n", g->shares), size);
}

static int shares_write(struct cfsbw_group *g, const struct file_entry *f,
			const char *text, int64_t now_ns)
{
	uint64_t v;
	(void)f;
	(void)now_ns;
	int err = parse_u64(text, &v);
	if (err)
		return err;
	if (!g->parent || v < MIN_SHARES || v > MAX_SHARES)
		return -EINVAL;
	g->shares = (unsigned)v;
	return 0;
}

int cfsbw_sysctl_write(struct cfsbw_tree *tree, const char *name,
		       const char *text)
{
	int64_t v;
	if (!name || strcmp(name, slice_sysctl) != 0)
		return -ENOENT;
	/* proc_dointvec_minmax: an int, at least 1; overflow is EINVAL. */
	int err = parse_s64(text, &v);
	if (err || v < 1 || v > INT_MAX)
		return -EINVAL;
	tree->slice_ns = v * CFSBW_NSEC_PER_USEC;
	return 0;
}

int cfsbw_sysctl_read(const struct cfsbw_tree *tree, const char *name,
		      char *buf, size_t size)
{
	if (!name || strcmp(name, slice_sysctl) != 0)
		return -ENOENT;
	return fit(snprintf(buf, size, "%" PRId64 "\n",
			    tree->slice_ns / CFSBW_NSEC_PER_USEC),
		   size);
}
