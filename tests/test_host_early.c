/*
 * test_host_early.c - a tracee held before its creator names it is never
 * held for ever.
 *
 * A child born traced can report its first stop before the fork or clone
 * event of its creator; the host driver holds such tids (src/host/proc.c)
 * so that none of their CPU time escapes.  If the creator never names one
 * (it was killed inside clone, or it was a thread of a --pid target that
 * was not yet seized), the tid must still be let go: "never a process left
 * stopped" (SPEC section 7).  The race that makes such a tid cannot be
 * provoked on demand, so the bookkeeping is checked directly, with time
 * passed in.
 */
#include <errno.h>
#include <sys/types.h>

#include "harness.h"
#include "cfsbw_host.h"
#include "host/host_int.h"

static pid_t released[HOST_MAX_EARLY + 1];
static unsigned nr_released;

static void record_release(pid_t tid)
{
	if (nr_released < sizeof released / sizeof released[0])
		released[nr_released] = tid;
	nr_released++;
}

static struct cfsbw_host *new_host(void)
{
	struct cfsbw_host_config cfg;
	memset(&cfg, 0, sizeof cfg);
	struct cfsbw_host *h = NULL;
	if (cfsbw_host_create(&cfg, &h) < 0)
		return NULL;
	return h;
}

/* SPEC 7: a held tid goes free HOST_EARLY_MAX_NS (100 ms) after its stop. */
TEST(held_tid_released_after_100_ms, "SPEC-7")
{
	struct cfsbw_host *h = new_host();
	ASSERT_TRUE(h != NULL);
	const int64_t ms = CFSBW_NSEC_PER_MSEC;
	nr_released = 0;
	ASSERT_INT(HOST_EARLY_MAX_NS, ==, 100 * ms);

	ASSERT_TRUE(cfsbw_host__early_add(h, 1001, 0));
	ASSERT_TRUE(cfsbw_host__early_add(h, 1002, 50 * ms));
	/* Before either is due: nothing released, the first due at 100 ms. */
	ASSERT_INT(cfsbw_host__early_expire(h, 99 * ms, record_release), ==, 100 * ms);
	ASSERT_UINT(nr_released, ==, 0);
	/* At 100 ms the first goes; the second is due at 150 ms. */
	ASSERT_INT(cfsbw_host__early_expire(h, 100 * ms, record_release), ==, 150 * ms);
	ASSERT_UINT(nr_released, ==, 1);
	ASSERT_INT(released[0], ==, 1001);
	ASSERT_UINT(h->nr_early, ==, 1);
	/* The first is gone: its creator's late event finds nothing held. */
	ASSERT_FALSE(cfsbw_host__early_take(h, 1001));
	/* At 150 ms the second goes, and nothing is left to wait for. */
	ASSERT_INT(cfsbw_host__early_expire(h, 150 * ms, record_release), ==, 0);
	ASSERT_UINT(nr_released, ==, 2);
	ASSERT_INT(released[1], ==, 1002);
	ASSERT_UINT(h->nr_early, ==, 0);
	cfsbw_host_destroy(h);
}

/* A tid named in time is taken, once, and never released by the timer. */
TEST(named_tid_taken_not_released, "SPEC-7")
{
	struct cfsbw_host *h = new_host();
	ASSERT_TRUE(h != NULL);
	const int64_t ms = CFSBW_NSEC_PER_MSEC;
	nr_released = 0;

	ASSERT_TRUE(cfsbw_host__early_add(h, 2001, 0));
	ASSERT_TRUE(cfsbw_host__early_add(h, 2002, 10 * ms));
	ASSERT_TRUE(cfsbw_host__early_add(h, 2003, 20 * ms));
	ASSERT_TRUE(cfsbw_host__early_take(h, 2002));
	ASSERT_FALSE(cfsbw_host__early_take(h, 2002));
	ASSERT_UINT(h->nr_early, ==, 2);
	/* Long after: the two still held go, the taken one does not. */
	ASSERT_INT(cfsbw_host__early_expire(h, 1000 * ms, record_release), ==, 0);
	ASSERT_UINT(nr_released, ==, 2);
	ASSERT_TRUE(released[0] != 2002 && released[1] != 2002);
	ASSERT_TRUE(released[0] != released[1]);
	cfsbw_host_destroy(h);
}

/*
 * At most HOST_MAX_EARLY tids are held; the next is refused, and the caller
 * then lets it run unregistered rather than hold it without a place.
 */
TEST(hold_is_bounded, "SPEC-7")
{
	struct cfsbw_host *h = new_host();
	ASSERT_TRUE(h != NULL);
	nr_released = 0;
	for (pid_t i = 0; i < HOST_MAX_EARLY; i++)
		ASSERT_TRUE(cfsbw_host__early_add(h, 3000 + i, i));
	ASSERT_FALSE(cfsbw_host__early_add(h, 4000, 0));
	ASSERT_UINT(h->nr_early, ==, HOST_MAX_EARLY);
	/* All are due by 100 ms after the last; each is released once. */
	ASSERT_INT(cfsbw_host__early_expire(h, HOST_EARLY_MAX_NS + HOST_MAX_EARLY,
				  record_release),
		   ==, 0);
	ASSERT_UINT(nr_released, ==, HOST_MAX_EARLY);
	unsigned long long sum = 0;
	for (unsigned i = 0; i < HOST_MAX_EARLY; i++)
		sum += (unsigned long long)(released[i] - 3000);
	ASSERT_UINT(sum, ==, (unsigned long long)HOST_MAX_EARLY *
				     (HOST_MAX_EARLY - 1) / 2);
	cfsbw_host_destroy(h);
}

TEST_MAIN(TEST_ENTRY(held_tid_released_after_100_ms)
	  TEST_ENTRY(named_tid_taken_not_released)
	  TEST_ENTRY(hold_is_bounded))
