/*
 * harness.h - the test harness: a table of tests per program, assertions
 * that print both operands with file and line (and work under NDEBUG), and a
 * closing "# N passed, N failed" line that tests/run.sh adds up.
 *
 * A test file defines its tests with TEST(name, "rule"), lists them in
 * TEST_LIST, and ends with TEST_MAIN().  A failing assertion prints the
 * rule the test checks, then returns from the test.
 */
#ifndef CFSBW_TEST_HARNESS_H
#define CFSBW_TEST_HARNESS_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct test_case {
	const char *name;
	const char *rule; /* the SPEC rule(s) checked, e.g. "R6" */
	void (*fn)(void);
};

/* Set by a failing assertion; read by the runner. */
extern int test_failed;
extern const char *test_rule;

int test_main(const struct test_case *tests, size_t count, int argc,
	      char **argv);

#define TEST(name, rule)                                                       \
	static void test_##name(void);                                         \
	static const char test_rule_##name[] = rule;                           \
	static void test_##name(void)

#define TEST_ENTRY(name) {#name, test_rule_##name, test_##name},

#define TEST_MAIN(...)                                                         \
	int main(int argc, char **argv)                                        \
	{                                                                      \
		static const struct test_case tests[] = {__VA_ARGS__};         \
		return test_main(tests, sizeof tests / sizeof tests[0], argc,  \
				 argv);                                        \
	}

#define TEST_FAIL_AT(...)                                                      \
	do {                                                                   \
		fprintf(stderr, "    %s:%d: [%s] ", __FILE__, __LINE__,        \
			test_rule);                                            \
		fprintf(stderr, __VA_ARGS__);                                  \
		fputc('\n', stderr);                                           \
		test_failed = 1;                                               \
	} while (0)

/* a op b, both converted to type, both printed with fmt when it fails. */
#define ASSERT_CMP_(type, fmt, a, op, b)                                       \
	do {                                                                   \
		type a_ = (type)(a), b_ = (type)(b);                           \
		if (!(a_ op b_)) {                                             \
			TEST_FAIL_AT("%s %s %s: " fmt " vs " fmt, #a, #op, #b, \
				     a_, b_);                                  \
			return;                                                \
		}                                                              \
	} while (0)

/* ASSERT_INT(a, ==, b), ASSERT_UINT and ASSERT_DBL print both values. */
#define ASSERT_INT(a, op, b) ASSERT_CMP_(long long, "%lld", a, op, b)
#define ASSERT_UINT(a, op, b) ASSERT_CMP_(unsigned long long, "%llu", a, op, b)
#define ASSERT_DBL(a, op, b) ASSERT_CMP_(double, "%.6g", a, op, b)

/* |a - b| <= tol, as doubles. */
#define ASSERT_NEAR(a, b, tol)                                                 \
	do {                                                                   \
		double a_ = (double)(a), b_ = (double)(b),                     \
		       t_ = (double)(tol);                                     \
		if (!(a_ - b_ <= t_ && b_ - a_ <= t_)) {                       \
			TEST_FAIL_AT("%s ~ %s (tol %g): %.6g vs %.6g", #a, #b, \
				     t_, a_, b_);                              \
			return;                                                \
		}                                                              \
	} while (0)

#define ASSERT_TRUE(c)                                                         \
	do {                                                                   \
		if (!(c)) {                                                    \
			TEST_FAIL_AT("expected true: %s", #c);                 \
			return;                                                \
		}                                                              \
	} while (0)

#define ASSERT_FALSE(c)                                                        \
	do {                                                                   \
		if (c) {                                                       \
			TEST_FAIL_AT("expected false: %s", #c);                \
			return;                                                \
		}                                                              \
	} while (0)

#define ASSERT_STR(a, b)                                                       \
	do {                                                                   \
		const char *a_ = (a), *b_ = (b);                               \
		if (!a_ || !b_ || strcmp(a_, b_) != 0) {                       \
			TEST_FAIL_AT("%s == %s: \"%s\" vs \"%s\"", #a, #b,     \
				     a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
			return;                                                \
		}                                                              \
	} while (0)

/* The text contains want: an error message names what it should. */
#define ASSERT_CONTAINS(text, want)                                            \
	do {                                                                   \
		const char *t_ = (text), *w_ = (want);                         \
		if (!t_ || !strstr(t_, w_)) {                                  \
			TEST_FAIL_AT("%s lacks \"%s\": \"%s\"", #text, w_,     \
				     t_ ? t_ : "(null)");                      \
			return;                                                \
		}                                                              \
	} while (0)

#endif
