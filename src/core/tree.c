/*
 * tree.c - the tree of groups: creation, lookup by path, destruction, and
 * the memory behind them.  Nothing here runs on the accounting path.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bandwidth.h"

#define GROUP_NAME_MAX 64

static void *default_alloc(size_t size, size_t align, void *ctx)
{
	(void)ctx;
	/* aligned_alloc wants a size that is a multiple of the alignment. */
	size_t rounded = (size + align - 1) / align * align;
	void *p = aligned_alloc(align, rounded);
	if (p)
		memset(p, 0, rounded);
	return p;
}

static void default_free(void *ptr, void *ctx)
{
	(void)ctx;
	free(ptr);
}

static void *tree_alloc(struct cfsbw_tree *tree, size_t size, size_t align)
{
	return tree->allocator.alloc(size, align, tree->allocator.ctx);
}

static void tree_free(struct cfsbw_tree *tree, void *ptr)
{
	if (ptr)
		tree->allocator.free(ptr, tree->allocator.ctx);
}

void cfsbw__group_update_bw_links(struct cfsbw_group *g)
{
	for (struct cfsbw_group *d = g->first_child ? g->first_child : NULL; d;
	     d = group_next_pre(d, g)) {
		struct cfsbw_group *p = d->parent;
		d->bw_up = group_limited(p) ? p : p->bw_up;
		group_set_bw_first(d);
	}
}

static void pool_init(struct cfsbw_pool *pool, int64_t period_ns)
{
	pool->period_ns = period_ns;
	pool->quota_ns = CFSBW_RUNTIME_INF;
	pool->burst_ns = 0;
	pool->phase_ns = -1;
	pool->runtime = CFSBW_RUNTIME_INF;
	list_init(&pool->throttled);
}

/*
 * A fresh account of g on rq: nothing assigned (hard limits: the group's
 * runtime), no tasks, not throttled, but throttled with its parent if the
 * parent is (R11: a group born under a throttled parent is throttled).
 */
static void account_init(struct cfsbw_group *g, unsigned rq)
{
	struct cfsbw_account *a = group_acct(g, rq);

	a->rq = rq;
	account_reset(g, a);
	a->h_nr_running = 0;
	list_init(&a->throttled_link);
	atomic_init(&a->throttled, 0);
}

/*
 * Gives g room for cap accounts: a new array, the live accounts moved into
 * it and its pool's throttled list relinked in the same order.  On failure
 * g keeps what it had: -ENOMEM.
 */
static int group_reserve_accounts(struct cfsbw_group *g, unsigned cap)
{
	struct cfsbw_tree *tree = g->tree;
	if (cap <= g->acct_cap)
		return 0;
	struct cfsbw_account *acct =
		tree_alloc(tree, sizeof(*acct) * cap,
			   _Alignof(struct cfsbw_account));
	if (!acct)
		return -ENOMEM;
	struct list_head *head = &g->pool.throttled;
	struct list_head *first = head->next;
	for (unsigned rq = 0; rq < tree->nr_rq && g->acct; rq++) {
		struct cfsbw_account *from = &g->acct[rq], *to = &acct[rq];
		to->runtime_remaining = from->runtime_remaining;
		atomic_init(&to->throttled, atomic_load(&from->throttled));
		to->h_nr_running = from->h_nr_running;
		to->rq = rq;
		to->hl_runtime = from->hl_runtime;
		to->throttled_clock = from->throttled_clock;
		list_init(&to->throttled_link);
	}
	/* R10's order: the old list, read while the old array still exists. */
	list_init(head);
	for (struct list_head *pos = first; g->acct && pos != head;) {
		struct list_head *next = pos->next;
		struct cfsbw_account *from =
			list_entry(pos, struct cfsbw_account, throttled_link);
		list_add_tail(head, &acct[from->rq].throttled_link);
		pos = next;
	}
	tree_free(tree, g->acct);
	g->acct = acct;
	g->acct_cap = cap;
	return 0;
}

static void group_release(struct cfsbw_group *g)
{
	struct cfsbw_tree *tree = g->tree;
	tree_free(tree, g->acct);
	tree_free(tree, g->path);
	tree_free(tree, g);
}

static struct cfsbw_group *group_alloc(struct cfsbw_tree *tree,
				       struct cfsbw_group *parent,
				       const char *path)
{
	struct cfsbw_group *g =
		tree_alloc(tree, sizeof(*g), _Alignof(struct cfsbw_group));
	if (!g)
		return NULL;
	g->tree = tree;
	g->parent = parent;
	g->shares = DEFAULT_SHARES;
	pool_init(&g->pool, tree->info->default_period_ns);
	size_t len = strlen(path);
	g->path = tree_alloc(tree, len + 1, 1);
	if (!g->path || group_reserve_accounts(g, tree->nr_rq)) {
		group_release(g);
		return NULL;
	}
	memcpy(g->path, path, len + 1);
	for (unsigned rq = 0; rq < tree->nr_rq; rq++)
		account_init(g, rq);
	if (parent) {
		g->depth = parent->depth + 1;
		g->bw_up = group_first_limited(parent);
	}
	group_set_bw_first(g);
	return g;
}

int cfsbw_tree_set_nr_rq(struct cfsbw_tree *tree, unsigned nr_rq)
{
	if (nr_rq < tree->nr_rq || nr_rq > CFSBW_MAX_RQ)
		return -EINVAL;
	/*
	 * Room first, in every group: a group that got room before another
	 * failed keeps it unused, which nobody can see.
	 */
	for (struct cfsbw_group *g = tree->root; g;
	     g = group_next_pre(g, tree->root))
		if (group_reserve_accounts(g, nr_rq))
			return -ENOMEM;
	/* Top-down, so that each account can look at its parent's. */
	for (struct cfsbw_group *g = tree->root; g;
	     g = group_next_pre(g, tree->root))
		for (unsigned rq = tree->nr_rq; rq < nr_rq; rq++)
			account_init(g, rq);
	tree->nr_rq = nr_rq;
	return 0;
}

int cfsbw_tree_create(const struct cfsbw_tree_config *cfg,
		      struct cfsbw_tree **out)
{
	static const struct cfsbw_allocator libc = {default_alloc, default_free,
						    NULL};
	const struct cfsbw_allocator *al = cfg->allocator ? cfg->allocator : &libc;

	if (cfg->nr_rq < 1 || cfg->nr_rq > CFSBW_MAX_RQ ||
	    (unsigned)cfg->policy >= CFSBW_POLICY_COUNT)
		return -EINVAL;
	struct cfsbw_tree *tree =
		al->alloc(sizeof(*tree), _Alignof(struct cfsbw_tree), al->ctx);
	if (!tree)
		return -ENOMEM;
	tree->nr_rq = cfg->nr_rq;
	tree->policy = cfg->policy;
	tree->info = cfsbw__policy_info(cfg->policy);
	tree->steps = tree->info->steps;
	tree->slice_ns = tree->info->default_slice_ns;
	if (cfg->ops)
		tree->ops = *cfg->ops;
	tree->ctx = cfg->ctx;
	tree->allocator = *al;
	tree->name_buckets = NULL;
	tree->root = group_alloc(tree, NULL, "/");
	if (!tree->root || cfsbw__names_init(tree)) {
		if (tree->root)
			group_release(tree->root);
		al->free(tree, al->ctx);
		return -ENOMEM;
	}
	*out = tree;
	return 0;
}

void cfsbw_tree_free(struct cfsbw_tree *tree)
{
	if (!tree)
		return;
	/* Post-order: free each group after its children. */
	struct cfsbw_group *g = tree->root;
	while (g) {
		if (g->first_child) {
			g = g->first_child;
			continue;
		}
		struct cfsbw_group *parent = g->parent;
		if (parent)
			parent->first_child = g->next_sibling;
		group_release(g);
		g = parent;
	}
	cfsbw__names_free(tree);
	tree->allocator.free(tree, tree->allocator.ctx);
}

unsigned cfsbw_tree_nr_rq(const struct cfsbw_tree *tree)
{
	return tree->nr_rq;
}

enum cfsbw_policy cfsbw_tree_policy(const struct cfsbw_tree *tree)
{
	return tree->policy;
}

int64_t cfsbw_tree_slice_ns(const struct cfsbw_tree *tree)
{
	return tree->slice_ns;
}

void cfsbw_tree_align_periods(struct cfsbw_tree *tree, bool on)
{
	tree->align_periods = on;
}

struct cfsbw_group *cfsbw_tree_root(struct cfsbw_tree *tree)
{
	return tree->root;
}

static bool name_char_ok(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

/*
 * Walks path down from the root.  Returns 0 with *found the group (or NULL
 * and *parent the deepest existing group when only the last component is
 * missing), or -EINVAL for a malformed path, -ENOENT for a missing
 * intermediate group.
 */
static int path_walk(struct cfsbw_tree *tree, const char *path,
		     struct cfsbw_group **found, struct cfsbw_group **parent,
		     const char **last)
{
	if (!path || path[0] != '/')
		return -EINVAL;
	struct cfsbw_group *g = tree->root;
	const char *p = path + 1;
	*found = g;
	*parent = NULL;
	*last = NULL;
	if (*p == '\0')
		return 0;
	for (;;) {
		size_t len = 0;
		while (p[len] && p[len] != '/') {
			if (!name_char_ok(p[len]))
				return -EINVAL;
			len++;
		}
		if (len == 0 || len > GROUP_NAME_MAX ||
		    (len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		struct cfsbw_group *c = cfsbw__names_find(tree, g, p, len);
		bool is_last = p[len] == '\0';
		if (!c) {
			if (!is_last)
				return -ENOENT;
			*found = NULL;
			*parent = g;
			*last = p;
			return 0;
		}
		if (is_last) {
			*found = c;
			*parent = g;
			*last = p;
			return 0;
		}
		g = c;
		p += len + 1;
	}
}

int cfsbw_group_create(struct cfsbw_tree *tree, const char *path,
		       struct cfsbw_group **out)
{
	struct cfsbw_group *found, *parent;
	const char *last;
	int err = path_walk(tree, path, &found, &parent, &last);
	if (err)
		return err;
	if (found)
		return -EEXIST;
	struct cfsbw_group *g = group_alloc(tree, parent, path);
	if (!g)
		return -ENOMEM;
	g->prev_sibling = parent->last_child;
	if (parent->last_child)
		parent->last_child->next_sibling = g;
	else
		parent->first_child = g;
	parent->last_child = g;
	cfsbw__names_add(tree, g);
	if (out)
		*out = g;
	return 0;
}

struct cfsbw_group *cfsbw_group_find(struct cfsbw_tree *tree, const char *path)
{
	struct cfsbw_group *found, *parent;
	const char *last;
	if (path_walk(tree, path, &found, &parent, &last))
		return NULL;
	return found;
}

int cfsbw_group_destroy(struct cfsbw_group *g)
{
	struct cfsbw_group *parent = g->parent;
	if (!parent || g->first_child)
		return -EBUSY;
	for (unsigned rq = 0; rq < g->tree->nr_rq; rq++)
		if (group_acct(g, rq)->h_nr_running)
			return -EBUSY;

	/* Its throttled accounts leave the hierarchy's counts (R11). */
	for (unsigned rq = 0; rq < g->tree->nr_rq; rq++)
		if (account_is_throttled(group_acct(g, rq)))
			cfsbw__hierarchy_unthrottle(g, rq, 0);

	if (g->prev_sibling)
		g->prev_sibling->next_sibling = g->next_sibling;
	else
		parent->first_child = g->next_sibling;
	if (g->next_sibling)
		g->next_sibling->prev_sibling = g->prev_sibling;
	else
		parent->last_child = g->prev_sibling;
	cfsbw__names_del(g->tree, g);
	group_release(g);
	return 0;
}

const char *cfsbw_group_path(const struct cfsbw_group *g)
{
	return g->path;
}

struct cfsbw_tree *cfsbw_group_tree(const struct cfsbw_group *g)
{
	return g->tree;
}

struct cfsbw_group *cfsbw_group_parent(const struct cfsbw_group *g)
{
	return g->parent;
}

struct cfsbw_group *cfsbw_group_first_child(const struct cfsbw_group *g)
{
	return g->first_child;
}

struct cfsbw_group *cfsbw_group_next_sibling(const struct cfsbw_group *g)
{
	return g->next_sibling;
}

unsigned cfsbw_group_depth(const struct cfsbw_group *g)
{
	return g->depth;
}

void cfsbw_group_set_driver_data(struct cfsbw_group *g, void *data)
{
	g->driver_data = data;
}

void *cfsbw_group_driver_data(const struct cfsbw_group *g)
{
	return g->driver_data;
}

void cfsbw_group_set_period_phase(struct cfsbw_group *g, int64_t phase_ns)
{
	g->pool.phase_ns = phase_ns < 0 ? -1 : phase_ns;
}

int64_t cfsbw_group_period_phase_ns(const struct cfsbw_group *g)
{
	return g->pool.phase_ns;
}

int64_t cfsbw_group_period_ns(const struct cfsbw_group *g)
{
	return g->pool.period_ns;
}

int64_t cfsbw_group_quota_ns(const struct cfsbw_group *g)
{
	return g->pool.quota_ns;
}

int64_t cfsbw_group_burst_ns(const struct cfsbw_group *g)
{
	return g->pool.burst_ns;
}

unsigned cfsbw_group_shares(const struct cfsbw_group *g)
{
	return g->shares;
}

int64_t cfsbw_group_pool_runtime_ns(struct cfsbw_group *g)
{
	spin_lock(&g->pool.lock);
	int64_t runtime = g->pool.runtime;
	spin_unlock(&g->pool.lock);
	return runtime;
}

void cfsbw_group_stats(struct cfsbw_group *g, struct cfsbw_stats *out)
{
	spin_lock(&g->pool.lock);
	*out = g->pool.stats;
	spin_unlock(&g->pool.lock);
}
