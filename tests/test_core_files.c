/*
 * test_core_files.c - the file interface: the kernel's validation table
 * (R2, reference/anchors-measured.md section 3) value by value, cpu.max,
 * cpu.stat's format (R12), the sysctl, names, durations.
 */
#include <errno.h>
#include <stdio.h>

#include "core_driver.h"
#include "harness.h"

struct r2_row {
	const char *setup_file, *setup_text; /* written first, or NULL */
	const char *file, *text;
	int result;
	const char *check_file, *check_text; /* read back after the write */
};

/*
 * Measured on Linux 6.18 (anchors-measured.md section 3), a new group at
 * period 100000, quota -1, burst 0: the upstream policy's defaults.
 */
static const struct r2_row r2_table[] = {
	{NULL, NULL, "cpu.cfs_quota_us", "500", -EINVAL, "cpu.cfs_quota_us", "-1\n"},
	{NULL, NULL, "cpu.cfs_quota_us", "999", -EINVAL, "cpu.cfs_quota_us", "-1\n"},
	{NULL, NULL, "cpu.cfs_quota_us", "1000", 0, "cpu.cfs_quota_us", "1000\n"},
	{NULL, NULL, "cpu.cfs_period_us", "0", -EINVAL, "cpu.cfs_period_us", "100000\n"},
	{NULL, NULL, "cpu.cfs_period_us", "999", -EINVAL, "cpu.cfs_period_us", "100000\n"},
	{NULL, NULL, "cpu.cfs_period_us", "1000", 0, "cpu.cfs_period_us", "1000\n"},
	{NULL, NULL, "cpu.cfs_period_us", "1000000", 0, "cpu.cfs_period_us", "1000000\n"},
	{NULL, NULL, "cpu.cfs_period_us", "1000001", -EINVAL, "cpu.cfs_period_us", "100000\n"},
	{NULL, NULL, "cpu.cfs_period_us", "2000000", -EINVAL, "cpu.cfs_period_us", "100000\n"},
	{"cpu.cfs_quota_us", "5000", "cpu.cfs_quota_us", "-1", 0, "cpu.cfs_quota_us", "-1\n"},
	{"cpu.cfs_quota_us", "5000", "cpu.cfs_quota_us", "-5", 0, "cpu.cfs_quota_us", "-1\n"},
	{NULL, NULL, "cpu.cfs_quota_us", "abc", -EINVAL, "cpu.cfs_quota_us", "-1\n"},
	{NULL, NULL, "cpu.cfs_quota_us", "5000x", -EINVAL, "cpu.cfs_quota_us", "-1\n"},
	{NULL, NULL, "cpu.cfs_quota_us", "", -EINVAL, "cpu.cfs_quota_us", "-1\n"},
	{NULL, NULL, "cpu.cfs_quota_us", "17592186044415", 0, "cpu.cfs_quota_us", "17592186044415\n"},
	{NULL, NULL, "cpu.cfs_quota_us", "17592186044416", -EINVAL, "cpu.cfs_quota_us", "-1\n"},
	{NULL, NULL, "cpu.cfs_quota_us", "18446744073709551615", -ERANGE, "cpu.cfs_quota_us", "-1\n"},
	{"cpu.cfs_quota_us", "100000", "cpu.cfs_burst_us", "50000", 0, "cpu.cfs_burst_us", "50000\n"},
	{"cpu.cfs_quota_us", "100000", "cpu.cfs_burst_us", "200000", -EINVAL, "cpu.cfs_burst_us", "0\n"},
	{NULL, NULL, "cpu.cfs_burst_us", "50000", 0, "cpu.cfs_burst_us", "50000\n"},
	{"cpu.cfs_quota_us", "150000", "cpu.cfs_period_us", "1000", 0, "cpu.cfs_quota_us", "150000\n"},
	{"cpu.cfs_quota_us", "150000", "cpu.cfs_period_us", "1000", 0, "cpu.cfs_period_us", "1000\n"},
	{NULL, NULL, "cpu.stat", "0", -EINVAL, "cpu.cfs_quota_us", "-1\n"},
	/* The rules the table implies, and echo's newline (R2's text). */
	{NULL, NULL, "cpu.cfs_quota_us", "20000\n", 0, "cpu.cfs_quota_us", "20000\n"},
	{NULL, NULL, "cpu.cfs_quota_us", "20000 1", -EINVAL, "cpu.cfs_quota_us", "-1\n"},
	{NULL, NULL, "cpu.cfs_quota_us", "9223372036854775808", -ERANGE, "cpu.cfs_quota_us", "-1\n"},
	{NULL, NULL, "cpu.cfs_period_us", "-1", -EINVAL, "cpu.cfs_period_us", "100000\n"},
	{NULL, NULL, "cpu.cfs_period_us", "100000x", -EINVAL, "cpu.cfs_period_us", "100000\n"},
	{NULL, NULL, "cpu.cfs_period_us", "18446744073709551616", -ERANGE, "cpu.cfs_period_us", "100000\n"},
	{NULL, NULL, "cpu.cfs_burst_us", "-1", -EINVAL, "cpu.cfs_burst_us", "0\n"},
	/* burst + quota <= max_cfs_runtime (linux-upstream.md section 2). */
	{"cpu.cfs_quota_us", "17592186044415", "cpu.cfs_burst_us", "1", -EINVAL, "cpu.cfs_burst_us", "0\n"},
	{"cpu.cfs_quota_us", "17592186044414", "cpu.cfs_burst_us", "1", 0, "cpu.cfs_burst_us", "1\n"},
};

TEST(validation_table, "R2")
{
	for (size_t i = 0; i < sizeof r2_table / sizeof r2_table[0]; i++) {
		const struct r2_row *r = &r2_table[i];
		struct drv d;
		drv_init(&d, 2, CFSBW_POLICY_UPSTREAM);
		struct cfsbw_group *g = drv_group(&d, "/t", 0, 0);
		if (r->setup_file)
			ASSERT_INT(drv_write(&d, g, r->setup_file, r->setup_text), ==, 0);
		int got = drv_write(&d, g, r->file, r->text);
		char buf[64] = "";
		int len = cfsbw_file_read(g, r->check_file, buf, sizeof buf);
		drv_fini(&d);
		if (got != r->result)
			fprintf(stderr, "    row %zu: %s <- \"%s\"\n", i, r->file, r->text);
		ASSERT_INT(got, ==, r->result);
		ASSERT_INT(len, >, 0);
		if (strcmp(buf, r->check_text) != 0)
			fprintf(stderr, "    row %zu: %s <- \"%s\"\n", i, r->file, r->text);
		ASSERT_STR(buf, r->check_text);
	}
}

/* R2: the root group cannot be limited. */
TEST(root_cannot_be_limited, "R2")
{
	for (int pol = 0; pol < 2; pol++) {
		struct drv d;
		drv_init(&d, 1, pol ? CFSBW_POLICY_UPSTREAM : CFSBW_POLICY_V4);
		struct cfsbw_group *root = cfsbw_tree_root(d.tree);
		ASSERT_INT(drv_write(&d, root, "cpu.cfs_quota_us", "100000"), ==, -EINVAL);
		ASSERT_INT(cfsbw_group_quota_ns(root), ==, CFSBW_RUNTIME_INF);
		char buf[32];
		ASSERT_INT(cfsbw_file_read(root, "cpu.cfs_quota_us", buf, sizeof buf), >, 0);
		ASSERT_STR(buf, "-1\n");
		drv_fini(&d);
	}
}

/* R2 in the v4 policy: the same bounds around its 500 ms default; no
 * burst file. */
TEST(validation_v4, "R2")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_V4);
	struct cfsbw_group *g = drv_group(&d, "/t", 0, 0);
	ASSERT_INT(drv_write(&d, g, "cpu.cfs_quota_us", "999"), ==, -EINVAL);
	ASSERT_INT(drv_write(&d, g, "cpu.cfs_period_us", "999"), ==, -EINVAL);
	ASSERT_INT(drv_write(&d, g, "cpu.cfs_period_us", "1000001"), ==, -EINVAL);
	ASSERT_INT(cfsbw_group_period_ns(g), ==, MS(500));
	ASSERT_INT(cfsbw_group_quota_ns(g), ==, CFSBW_RUNTIME_INF);
	ASSERT_INT(drv_write(&d, g, "cpu.cfs_burst_us", "0"), ==, -ENOENT);
	char buf[64];
	ASSERT_INT(cfsbw_file_read(g, "cpu.cfs_burst_us", buf, sizeof buf), ==, -ENOENT);
	ASSERT_INT(drv_write(&d, g, "cpu.nosuch", "1"), ==, -ENOENT);
	ASSERT_INT(drv_write(&d, g, "cpu.cfs_quota_us", "1000"), ==, 0);
	ASSERT_INT(cfsbw_group_quota_ns(g), ==, MS(1));
	drv_fini(&d);
}

/* cpu.max, the cgroup-v2 form (section 2): "max"/QUOTA, optional PERIOD. */
TEST(cpu_max, "R2")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_UPSTREAM);
	struct cfsbw_group *g = drv_group(&d, "/t", 0, 0);
	char buf[64];
	ASSERT_INT(cfsbw_file_read(g, "cpu.max", buf, sizeof buf), >, 0);
	ASSERT_STR(buf, "max 100000\n");
	ASSERT_INT(drv_write(&d, g, "cpu.max", "50000"), ==, 0);
	ASSERT_INT(cfsbw_file_read(g, "cpu.max", buf, sizeof buf), >, 0);
	ASSERT_STR(buf, "50000 100000\n");
	ASSERT_INT(drv_write(&d, g, "cpu.max", "30000 200000\n"), ==, 0);
	ASSERT_INT(cfsbw_group_quota_ns(g), ==, MS(30));
	ASSERT_INT(cfsbw_group_period_ns(g), ==, MS(200));
	ASSERT_INT(drv_write(&d, g, "cpu.max", "max 300000"), ==, 0);
	ASSERT_INT(cfsbw_file_read(g, "cpu.max", buf, sizeof buf), >, 0);
	ASSERT_STR(buf, "max 300000\n");
	ASSERT_INT(drv_write(&d, g, "cpu.max", "-1"), ==, -EINVAL);
	ASSERT_INT(drv_write(&d, g, "cpu.max", "50000 999"), ==, -EINVAL);
	ASSERT_INT(drv_write(&d, g, "cpu.max", "999"), ==, -EINVAL);
	ASSERT_INT(drv_write(&d, g, "cpu.max", "maxx"), ==, -EINVAL);
	ASSERT_INT(cfsbw_file_read(g, "cpu.max", buf, sizeof buf), >, 0);
	ASSERT_STR(buf, "max 300000\n");
	ASSERT_INT(drv_write(&d, g, "cpu.max", "max"), ==, 0);
	ASSERT_INT(cfsbw_group_period_ns(g), ==, MS(300));
	/* The burst is kept: a quota below it is refused. */
	ASSERT_INT(drv_write(&d, g, "cpu.max", "100000"), ==, 0);
	ASSERT_INT(drv_write(&d, g, "cpu.cfs_burst_us", "60000"), ==, 0);
	ASSERT_INT(drv_write(&d, g, "cpu.max", "50000"), ==, -EINVAL);
	ASSERT_INT(cfsbw_group_quota_ns(g), ==, MS(100));
	drv_fini(&d);
}

TEST(cpu_shares, "R2")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_V4);
	struct cfsbw_group *g = drv_group(&d, "/t", 0, 0);
	char buf[32];
	ASSERT_INT(cfsbw_file_read(g, "cpu.shares", buf, sizeof buf), >, 0);
	ASSERT_STR(buf, "1024\n");
	ASSERT_INT(drv_write(&d, g, "cpu.shares", "2"), ==, 0);
	ASSERT_UINT(cfsbw_group_shares(g), ==, 2);
	ASSERT_INT(drv_write(&d, g, "cpu.shares", "262144\n"), ==, 0);
	ASSERT_UINT(cfsbw_group_shares(g), ==, 262144);
	ASSERT_INT(drv_write(&d, g, "cpu.shares", "x"), ==, -EINVAL);
	ASSERT_INT(drv_write(&d, g, "cpu.shares", "1"), ==, -EINVAL);
	ASSERT_INT(drv_write(&d, g, "cpu.shares", "262145"), ==, -EINVAL);
	ASSERT_UINT(cfsbw_group_shares(g), ==, 262144);
	drv_fini(&d);
}

/* R12: cpu.stat prints three lines in v4, five in upstream, in ns. */
TEST(cpu_stat_format, "R12")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_V4);
	struct cfsbw_group *g = drv_group(&d, "/t", 0, 0);
	char buf[256];
	ASSERT_INT(cfsbw_file_read(g, "cpu.stat", buf, sizeof buf), ==,
		   (int)strlen("nr_periods 0\nnr_throttled 0\nthrottled_time 0\n"));
	ASSERT_STR(buf, "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n");
	ASSERT_INT(cfsbw_file_read(g, "cpu.stat", buf, 10), ==, -ENOSPC);
	/* Room for the text and its NUL, not one byte less. */
	ASSERT_INT(cfsbw_file_read(g, "cpu.cfs_quota_us", buf, 4), ==, 3);
	ASSERT_STR(buf, "-1\n");
	ASSERT_INT(cfsbw_file_read(g, "cpu.cfs_quota_us", buf, 3), ==, -ENOSPC);
	ASSERT_INT(cfsbw_file_read(g, "cpu.nosuch", buf, sizeof buf), ==, -ENOENT);
	drv_fini(&d);
	drv_init(&d, 1, CFSBW_POLICY_UPSTREAM);
	g = drv_group(&d, "/t", 0, 0);
	ASSERT_INT(cfsbw_file_read(g, "cpu.stat", buf, sizeof buf), >, 0);
	ASSERT_STR(buf, "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n"
			"nr_bursts 0\nburst_time 0\n");
	drv_fini(&d);
}

/* Section 2: the sysctl; R1's default read back. */
TEST(sysctl_slice, "R2")
{
	struct drv d;
	drv_init(&d, 1, CFSBW_POLICY_V4);
	const char *n = "sched_cfs_bandwidth_slice_us";
	ASSERT_INT(cfsbw_sysctl_write(d.tree, n, "1"), ==, 0);
	ASSERT_INT(cfsbw_tree_slice_ns(d.tree), ==, US(1));
	ASSERT_INT(cfsbw_sysctl_write(d.tree, n, "0"), ==, -EINVAL);
	ASSERT_INT(cfsbw_sysctl_write(d.tree, n, "-5"), ==, -EINVAL);
	ASSERT_INT(cfsbw_sysctl_write(d.tree, n, "5ms"), ==, -EINVAL);
	/* proc_dointvec_minmax: an int. */
	ASSERT_INT(cfsbw_sysctl_write(d.tree, n, "2147483648"), ==, -EINVAL);
	ASSERT_INT(cfsbw_sysctl_write(d.tree, n, "2147483647"), ==, 0);
	ASSERT_INT(cfsbw_tree_slice_ns(d.tree), ==, US(2147483647));
	ASSERT_INT(cfsbw_sysctl_write(d.tree, n, "1\n"), ==, 0);
	ASSERT_INT(cfsbw_tree_slice_ns(d.tree), ==, US(1));
	ASSERT_INT(cfsbw_sysctl_write(d.tree, "nosuch", "1"), ==, -ENOENT);
	char buf[32];
	ASSERT_INT(cfsbw_sysctl_read(d.tree, n, buf, sizeof buf), >, 0);
	ASSERT_STR(buf, "1\n");
	drv_fini(&d);
}

/* The per-policy file tables and the policy names. */
TEST(names, "R2")
{
	ASSERT_STR(cfsbw_policy_name(CFSBW_POLICY_V4), "v4");
	ASSERT_STR(cfsbw_policy_name(CFSBW_POLICY_UPSTREAM), "upstream");
	ASSERT_STR(cfsbw_policy_name(CFSBW_POLICY_HARDLIMITS), "hardlimits");
	ASSERT_TRUE(cfsbw_policy_name(CFSBW_POLICY_COUNT) == NULL);
	enum cfsbw_policy p = CFSBW_POLICY_V4;
	ASSERT_INT(cfsbw_policy_parse("upstream", &p), ==, 0);
	ASSERT_INT(p, ==, CFSBW_POLICY_UPSTREAM);
	ASSERT_INT(cfsbw_policy_parse("v5", &p), ==, -EINVAL);
	ASSERT_INT(p, ==, CFSBW_POLICY_UPSTREAM);

	for (int pol = 0; pol < 2; pol++) {
		struct drv d;
		drv_init(&d, 1, pol ? CFSBW_POLICY_UPSTREAM : CFSBW_POLICY_V4);
		bool quota = false, period = false, stat = false, burst = false;
		const char *name;
		for (unsigned i = 0; (name = cfsbw_file_name(d.tree, i)); i++) {
			quota |= strcmp(name, "cpu.cfs_quota_us") == 0;
			period |= strcmp(name, "cpu.cfs_period_us") == 0;
			stat |= strcmp(name, "cpu.stat") == 0;
			burst |= strcmp(name, "cpu.cfs_burst_us") == 0;
			ASSERT_TRUE(i < 64);
		}
		ASSERT_TRUE(quota && period && stat);
		ASSERT_TRUE(burst == (pol == 1));
		/* Every file and the sysctl say what a valid write is. */
		for (unsigned i = 0; (name = cfsbw_file_name(d.tree, i)); i++)
			ASSERT_TRUE(cfsbw_file_rule(name) != NULL);
		drv_fini(&d);
	}
	ASSERT_TRUE(strstr(cfsbw_file_rule("cpu.cfs_period_us"),
			   "1000 (1ms) to 1000000 (1s)") != NULL);
	ASSERT_TRUE(strstr(cfsbw_file_rule("cpu.cfs_quota_us"), "2^44-1") !=
		    NULL);
	ASSERT_TRUE(strstr(cfsbw_file_rule("sched_cfs_bandwidth_slice_us"),
			   "at least 1") != NULL);
	ASSERT_TRUE(cfsbw_file_rule("cpu.nope") == NULL);
	ASSERT_TRUE(cfsbw_file_rule(NULL) == NULL);
}

TEST(parse_duration, "R2")
{
	static const struct {
		const char *text;
		int64_t unit, ns;
		int result;
	} rows[] = {
		{"1.5ms", CFSBW_NSEC_PER_USEC, 1500000, 0},
		{"250us", CFSBW_NSEC_PER_USEC, 250000, 0},
		{"2s", CFSBW_NSEC_PER_USEC, 2000000000, 0},
		{"7ns", CFSBW_NSEC_PER_USEC, 7, 0},
		{"10", CFSBW_NSEC_PER_USEC, 10000, 0},
		{"10", CFSBW_NSEC_PER_MSEC, 10000000, 0},
		{"1.5", CFSBW_NSEC_PER_USEC, 1500, 0},
		{"0", CFSBW_NSEC_PER_USEC, 0, 0},
		{"1.000000001s", CFSBW_NSEC_PER_USEC, 1000000001, 0},
		{"9223372036854775807ns", CFSBW_NSEC_PER_USEC, INT64_MAX, 0},
		{"0.5ns", CFSBW_NSEC_PER_USEC, 0, -EINVAL},
		{"1.0000000001s", CFSBW_NSEC_PER_USEC, 0, -EINVAL},
		{"", CFSBW_NSEC_PER_USEC, 0, -EINVAL},
		{"ms", CFSBW_NSEC_PER_USEC, 0, -EINVAL},
		{"-1ms", CFSBW_NSEC_PER_USEC, 0, -EINVAL},
		{"5 ms", CFSBW_NSEC_PER_USEC, 0, -EINVAL},
		{"5min", CFSBW_NSEC_PER_USEC, 0, -EINVAL},
		{"9223372036854775808ns", CFSBW_NSEC_PER_USEC, 0, -ERANGE},
		{"10000000000s", CFSBW_NSEC_PER_USEC, 0, -ERANGE},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		int64_t ns = -42;
		int r = cfsbw_parse_duration(rows[i].text, rows[i].unit, &ns);
		if (r != rows[i].result || (r == 0 && ns != rows[i].ns))
			fprintf(stderr, "    \"%s\"\n", rows[i].text);
		ASSERT_INT(r, ==, rows[i].result);
		if (r == 0)
			ASSERT_INT(ns, ==, rows[i].ns);
	}
}

TEST_MAIN(TEST_ENTRY(validation_table) TEST_ENTRY(root_cannot_be_limited)
	  TEST_ENTRY(validation_v4) TEST_ENTRY(cpu_max) TEST_ENTRY(cpu_shares)
	  TEST_ENTRY(cpu_stat_format) TEST_ENTRY(sysctl_slice)
	  TEST_ENTRY(names) TEST_ENTRY(parse_duration))
