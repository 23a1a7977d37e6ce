/*
 * fuzz_cli_sim.c - `cfsbw sim`'s command line: its flag parser (with
 * --set's "[GROUP:]FILE=VALUE"), the overrides it applies to a scenario
 * and the --max-memory size, on any arguments, without reading a file or
 * running a simulation.
 *
 * The input is the argument vector, arguments separated by NUL bytes.  The
 * command's sources are included (the command and the files it links
 * with) so that its static parsers are called as the command calls them.  Checks: every outcome is "go on", 0 (--help) or
 * 2 (rejected, with a message), never a crash; what is accepted is within
 * the documented ranges (CPUs 1..4096, HZ 100..10000, a duration above 0,
 * a memory budget above 0).
 */
#include "cli/cmd_sim.c"
#include "cli/sim_load.c"

#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_cmdline cl;
	if (!fz_cmdline_read(&cl, data, size, "sim"))
		return 0;

	struct sim_cmdline c;
	int rc = parse_args(cl.argc, cl.argv, &c);
	FZ_CHECK(rc == -1 || rc == 0 || rc == 2, "parse_args: %d", rc);
	if (rc == -1) {
		FZ_CHECK(c.o.file, "accepted without a scenario");
		FZ_CHECK(c.o.nr_sets <= CLI_MAX_SETS, "%zu --set", c.o.nr_sets);
		for (size_t i = 0; i < c.o.nr_sets; i++)
			FZ_CHECK(c.o.sets[i].file[0], "--set %zu with no file",
				 i);
		size_t limit = 1;
		if (c.o.max_memory && parse_size(c.o.max_memory, &limit))
			FZ_CHECK(limit > 0, "--max-memory %s: 0 bytes",
				 c.o.max_memory);
		struct cfsbw_sim_scenario sc;
		cfsbw_sim_scenario_init(&sc);
		rc = apply_overrides(&c.o, &sc);
		FZ_CHECK(rc == 0 || rc == 2, "apply_overrides: %d", rc);
		if (rc == 0) {
			FZ_CHECK(sc.nr_cpus >= 1 &&
					 sc.nr_cpus <= CFSBW_SIM_MAX_CPUS,
				 "%u CPUs", sc.nr_cpus);
			FZ_CHECK(sc.hz >= CFSBW_SIM_MIN_HZ &&
					 sc.hz <= CFSBW_SIM_MAX_HZ,
				 "HZ %u", sc.hz);
			FZ_CHECK(sc.duration_ns > 0, "duration %lld",
				 (long long)sc.duration_ns);
			FZ_CHECK(sc.policy < CFSBW_POLICY_COUNT, "policy %d",
				 (int)sc.policy);
		}
		cfsbw_sim_scenario_free(&sc);
	}
	fz_cmdline_free(&cl);
	return 0;
}
