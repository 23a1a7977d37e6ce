/*
 * test_core_faults.c - fault injection in the style of SQLite's
 * do_faultsim_test: through the allocator hook, fail the Nth allocation for
 * every N while a tree and its groups are built (once, then every one from
 * the Nth on), and check that each failure comes back as -ENOMEM with
 * nothing changed, that the tree still works afterwards, and that every
 * allocation is freed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core_driver.h"
#include "harness.h"

struct fault_alloc {
	long fail_at;     /* the allocation that fails (1-based), 0: none */
	bool persistent;  /* and every one after it */
	long nr_calls;    /* allocation requests */
	long nr_failed;   /* requests refused */
	long nr_live;     /* allocated and not yet freed */
	long nr_bad_align;
};

static void *fault_alloc(size_t size, size_t align, void *ctx)
{
	struct fault_alloc *fa = ctx;
	fa->nr_calls++;
	if (fa->fail_at && (fa->nr_calls == fa->fail_at ||
			    (fa->persistent && fa->nr_calls > fa->fail_at))) {
		fa->nr_failed++;
		return NULL;
	}
	if (align < sizeof(void *))
		align = sizeof(void *);
	size_t rounded = (size + align - 1) / align * align;
	void *p = aligned_alloc(align, rounded ? rounded : align);
	if (!p)
		return NULL;
	memset(p, 0, rounded);
	if ((uintptr_t)p % align)
		fa->nr_bad_align++;
	fa->nr_live++;
	return p;
}

static void fault_free(void *ptr, void *ctx)
{
	struct fault_alloc *fa = ctx;
	if (ptr) {
		fa->nr_live--;
		free(ptr);
	}
}

static const char *const fault_paths[] = {"/a", "/a/b", "/a/b/c", "/d",
					  "/d/e", "/a/f"};
#define NR_FAULT_PATHS (sizeof fault_paths / sizeof fault_paths[0])

static unsigned count_children(struct cfsbw_group *g)
{
	unsigned n = 0;
	for (struct cfsbw_group *c = cfsbw_group_first_child(g); c;
	     c = cfsbw_group_next_sibling(c))
		n++;
	return n;
}

/* The tree works: every group is where it should be, and a limited group
 * throttles and is refreshed as usual, without allocating (cfsbw.h: the
 * allocator is never called on the accounting path). */
static void check_tree_works(struct drv *d, const struct fault_alloc *fa)
{
	for (size_t i = 0; i < NR_FAULT_PATHS; i++) {
		struct cfsbw_group *g = cfsbw_group_find(d->tree, fault_paths[i]);
		if (!g) {
			ASSERT_INT(cfsbw_group_create(d->tree, fault_paths[i], &g), ==, 0);
			drv_adopt(d, g);
		}
		ASSERT_STR(cfsbw_group_path(g), fault_paths[i]);
	}
	ASSERT_UINT(count_children(cfsbw_tree_root(d->tree)), ==, 2);
	ASSERT_UINT(count_children(cfsbw_group_find(d->tree, "/a")), ==, 2);
	struct cfsbw_group *c = cfsbw_group_find(d->tree, "/a/b/c");
	ASSERT_UINT(cfsbw_group_depth(c), ==, 3);
	ASSERT_INT(drv_write(d, c, "cpu.cfs_quota_us", "10000"), ==, 0);
	ASSERT_INT(drv_write(d, cfsbw_group_find(d->tree, "/a"),
			     "cpu.cfs_quota_us", "50000"), ==, 0);
	long calls = fa->nr_calls;
	drv_enqueue(d, c, 1);
	d->now = MS(6);
	ASSERT_FALSE(drv_charge(d, c, 1, MS(6)));
	d->now = MS(12);
	ASSERT_TRUE(drv_charge(d, c, 1, MS(6))); /* -2 + 0: throttled */
	ASSERT_UINT(cfsbw_rq_nr_running(d->tree, 1), ==, 0);
	drv_advance(d, MS(500));
	ASSERT_FALSE(cfsbw_throttled(c, 1));
	ASSERT_UINT(cfsbw_rq_nr_running(d->tree, 1), ==, 1);
	drv_dequeue(d, c, 1);
	ASSERT_INT(fa->nr_calls, ==, calls);
}

/*
 * One run of the script with allocation fail_at failing: create a tree
 * (4 rqs), the groups, destroy one and create it again.  Returns through
 * *injected whether a failure was injected.
 */
static void fault_run(long fail_at, bool persistent, bool *injected)
{
	struct fault_alloc fa = {.fail_at = fail_at, .persistent = persistent};
	const struct cfsbw_allocator al = {fault_alloc, fault_free, &fa};
	struct drv d;
	int err = drv_init_alloc(&d, 4, CFSBW_POLICY_V4, &al);
	if (err) {
		ASSERT_INT(err, ==, -ENOMEM);
		ASSERT_TRUE(fa.nr_failed > 0);
		ASSERT_INT(fa.nr_live, ==, 0);
		*injected = true;
		return;
	}
	for (size_t i = 0; i < NR_FAULT_PATHS; i++) {
		struct cfsbw_group *g = NULL;
		long live = fa.nr_live;
		err = cfsbw_group_create(d.tree, fault_paths[i], &g);
		if (err == 0) {
			drv_adopt(&d, g);
			continue;
		}
		/* A parent that failed earlier gives -ENOENT. */
		if (err == -ENOENT) {
			ASSERT_TRUE(fa.nr_failed > 0);
			continue;
		}
		ASSERT_INT(err, ==, -ENOMEM);
		ASSERT_INT(fa.nr_live, ==, live); /* nothing kept */
		ASSERT_TRUE(cfsbw_group_find(d.tree, fault_paths[i]) == NULL);
	}
	struct cfsbw_group *e = cfsbw_group_find(d.tree, "/d/e");
	if (e) {
		for (size_t i = 0; i < d.ngroups; i++)
			if (d.groups[i].g == e)
				d.groups[i].g = cfsbw_tree_root(d.tree);
		ASSERT_INT(cfsbw_group_destroy(e), ==, 0);
		err = cfsbw_group_create(d.tree, "/d/e", &e);
		if (err == 0)
			drv_adopt(&d, e);
		else
			ASSERT_TRUE(err == -ENOMEM || err == -ENOENT);
	}
	*injected = fa.nr_failed > 0;
	/* Allocation works again: the tree must be whole and working. */
	fa.fail_at = 0;
	check_tree_works(&d, &fa);
	if (test_failed)
		return;
	ASSERT_INT(fa.nr_bad_align, ==, 0);
	drv_fini(&d);
	ASSERT_INT(fa.nr_live, ==, 0);
}

static void fault_all(bool persistent)
{
	for (long n = 1; n < 10000; n++) {
		bool injected = false;
		fault_run(n, persistent, &injected);
		if (test_failed) {
			fprintf(stderr, "    allocation %ld failing%s\n", n,
				persistent ? " and all after it" : "");
			return;
		}
		if (!injected)
			return; /* the script needs fewer than n allocations */
	}
	TEST_FAIL_AT("the script never ran without a failure");
}

TEST(fail_nth_allocation_once, "ENOMEM")
{
	fault_all(false);
}

TEST(fail_from_nth_allocation_on, "ENOMEM")
{
	fault_all(true);
}

TEST_MAIN(TEST_ENTRY(fail_nth_allocation_once)
	  TEST_ENTRY(fail_from_nth_allocation_on))
