/* harness.c - runs a test table; see harness.h. */
#include "harness.h"

int test_failed;
const char *test_rule = "";

/*
 * Runs every test, or only those named on the command line.  Prints one line
 * per test and the closing "# N passed, N failed" line.
 */
int test_main(const struct test_case *tests, size_t count, int argc,
	      char **argv)
{
	int passed = 0, failed = 0;

	for (size_t i = 0; i < count; i++) {
		if (argc > 1) {
			int wanted = 0;
			for (int a = 1; a < argc; a++)
				wanted |= strcmp(argv[a], tests[i].name) == 0;
			if (!wanted)
				continue;
		}
		test_failed = 0;
		test_rule = tests[i].rule;
		tests[i].fn();
		fflush(stdout);
		if (test_failed) {
			failed++;
			printf("FAIL %s [%s]\n", tests[i].name, tests[i].rule);
		} else {
			passed++;
			printf("ok   %s [%s]\n", tests[i].name, tests[i].rule);
		}
		fflush(stdout);
	}
	printf("# %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
