/*
 * fuzz_cli_run.c - `cfsbw run`'s command line: its flag parser and the
 * translation of the flags into the governed group's files, on any
 * arguments, without starting or tracing anything.
 *
 * The input is the argument vector, arguments separated by NUL bytes (the
 * seeds in corpus/cli_run/ are command lines written that way).  The
 * command's source is included here so that its static parsers can be
 * called as the command calls them: parse_args, parse_host_flags, then
 * configure() on a host that is created but never runs a process.
 *
 * Checks: every outcome is "go on", 0 (--help) or 2 (rejected input, with
 * a message), never a crash; an accepted --cpus X sets a quota of X times
 * the period (to the microsecond) and --quota max, or a negative --cpus,
 * no limit at all.
 */
#include "cli/cmd_run.c"

#include "fuzz.h"

static void fz_check_values(const struct run_opts *o, struct cfsbw_host *h)
{
	struct cfsbw_group *g = cfsbw_host_group(h);
	int64_t quota = cfsbw_group_quota_ns(g);
	int64_t period = cfsbw_group_period_ns(g);
	FZ_CHECK(period >= CFSBW_NSEC_PER_MSEC && period <= CFSBW_NSEC_PER_SEC,
		 "period %lld ns accepted", (long long)period);
	if (o->quota && !strcmp(o->quota, "max"))
		FZ_CHECK(quota == CFSBW_RUNTIME_INF, "--quota max: %lld",
			 (long long)quota);
	if (o->cpus) {
		double cpus = -1;
		if (strcmp(o->cpus, "max") != 0)
			FZ_CHECK(parse_cpus(o->cpus, &cpus) == 0,
				 "--cpus '%s' accepted but not a number",
				 o->cpus);
		if (cpus < 0) {
			FZ_CHECK(quota == CFSBW_RUNTIME_INF,
				 "--cpus %s: quota %lld", o->cpus,
				 (long long)quota);
		} else {
			double want_us = cpus * (double)period / 1e3;
			double got_us = (double)quota / 1e3;
			FZ_CHECK(got_us - want_us <= 0.5 + want_us * 1e-12 &&
					 want_us - got_us <= 0.5 + want_us * 1e-12,
				 "--cpus %s x period %lld ns: quota %lld ns",
				 o->cpus, (long long)period, (long long)quota);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_cmdline cl;
	if (!fz_cmdline_read(&cl, data, size, "run"))
		return 0;

	struct run_opts o;
	memset(&o, 0, sizeof o);
	int rc = parse_args(cl.argc, cl.argv, &o);
	FZ_CHECK(rc == -1 || rc == 0 || rc == 2, "parse_args: %d", rc);
	if (rc >= 0)
		goto out;
	FZ_CHECK(o.argv && (o.pid || o.argv[0]), "accepted with nothing to "
		 "run");
	if (o.group)
		goto out; /* a client of the daemon: nothing more to parse */
	FZ_CHECK(!(o.pid && o.argv[0]), "accepted --pid and a command");

	struct cfsbw_host_config cfg;
	memset(&cfg, 0, sizeof cfg);
	pid_t pids[RUN_MAX_PIDS];
	unsigned nr = 0;
	rc = parse_host_flags(&o, &cfg, pids, &nr);
	FZ_CHECK(rc == 0 || rc == 2, "parse_host_flags: %d", rc);
	if (rc)
		goto out;
	FZ_CHECK(cfg.policy == CFSBW_POLICY_V4 ||
			 cfg.policy == CFSBW_POLICY_UPSTREAM,
		 "policy %d", (int)cfg.policy);
	FZ_CHECK(!o.stat_interval ||
			 cfg.stat_interval_ns >= CFSBW_NSEC_PER_MSEC,
		 "--stat-interval %s: %lld ns", o.stat_interval,
		 (long long)cfg.stat_interval_ns);
	FZ_CHECK(!o.pid || (nr >= 1 && nr <= RUN_MAX_PIDS), "%u pids", nr);
	for (unsigned i = 0; i < nr; i++)
		FZ_CHECK(pids[i] > 0, "--pid %s: pid %d", o.pid, (int)pids[i]);
	struct cfsbw_host *h;
	int err = cfsbw_host_create(&cfg, &h);
	FZ_CHECK(err == 0, "host create: %d", err);
	rc = configure(h, &o);
	FZ_CHECK(rc == 0 || rc == 2, "configure: %d", rc);
	if (rc == 0)
		fz_check_values(&o, h);
	cfsbw_host_destroy(h);
out:
	fz_cmdline_free(&cl);
	return 0;
}
