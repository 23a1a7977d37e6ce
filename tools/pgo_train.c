/*
 * pgo_train.c - the run gcc's profile-guided optimisation learns the core
 * and the simulator from (Makefile, "PGO"): each scenario file named on
 * the command line (scenarios/ and bench/fidelity/), on 2, 16 and 64
 * CPUs, under each of the three policies, 20 simulated seconds each.
 * What the optimiser sees is what users run, never the benchmarks' own
 * cases: bench_sim measures the result on scenarios it was not shown.
 * One of them is a full node of many CPUs (scenarios/kubernetes-node-64
 * .sim), the one run where every CPU is busy with many groups; the
 * others are small machines or nearly idle large ones.  bench_sim's
 * issue case ran no faster for it (docs/sim-history.md "Speed",
 * 2026-12-07).
 *
 * A combination a file refuses (a policy without a file it sets) is
 * skipped; a file that cannot be read or parsed at all, or a run that
 * fails, fails the build.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfsbw_sim.h"
#include "common/read_all.h"

/* One run of the file's text on cpus CPUs under policy: 0 done, 1 the
 * combination is refused (not run), -1 the run failed. */
static int train_one(const char *path, const char *text, unsigned cpus,
		     enum cfsbw_policy policy)
{
	struct cfsbw_sim_scenario sc;
	struct cfsbw_sim_error err;
	struct cfsbw_sim *s;
	int rc = 1;

	cfsbw_sim_scenario_init(&sc);
	if (cfsbw_sim_scenario_parse(&sc, text, &err)) {
		fprintf(stderr, "pgo_train: %s:%u: %s\n", path, err.line,
			err.msg);
		rc = -1;
		goto out;
	}
	sc.nr_cpus = cpus;
	sc.policy = policy;
	sc.duration_ns = 20 * CFSBW_NSEC_PER_SEC;
	if (cfsbw_sim_create(&sc, &s, &err))
		goto out; /* refused on this policy: not a failure */
	if (cfsbw_sim_run(s)) {
		fprintf(stderr, "pgo_train: %s: the run failed\n", path);
		rc = -1;
	} else {
		rc = 0;
	}
	cfsbw_sim_free(s);
out:
	cfsbw_sim_scenario_free(&sc);
	return rc;
}

int main(int argc, char **argv)
{
	static const unsigned cpus[] = {2, 16, 64};
	static const enum cfsbw_policy policies[] = {
		CFSBW_POLICY_V4, CFSBW_POLICY_UPSTREAM, CFSBW_POLICY_HARDLIMITS};
	unsigned runs = 0;

	if (argc < 2) {
		fputs("usage: pgo_train SCENARIO.sim...\n", stderr);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		size_t len;
		char *text = read_all(argv[i], CFSBW_SIM_MAX_INPUT_BYTES, &len);
		if (!text) {
			fprintf(stderr, "pgo_train: %s: %s\n", argv[i],
				strerror(errno ? errno : ENOMEM));
			return 1;
		}
		for (size_t c = 0; c < sizeof(cpus) / sizeof(cpus[0]); c++)
			for (size_t p = 0;
			     p < sizeof(policies) / sizeof(policies[0]); p++) {
				int rc = train_one(argv[i], text, cpus[c],
						   policies[p]);
				if (rc < 0) {
					free(text);
					return 1;
				}
				runs += rc == 0;
			}
		free(text);
	}
	printf("pgo_train: %u runs of %d files\n", runs, argc - 1);
	return 0;
}
