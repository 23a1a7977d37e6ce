/*
 * names.c - the tree's index of groups by parent and name, so that a path
 * is found in as many steps as it has components, whatever the number of
 * siblings on the way.  Scanning siblings made a tree of 20,000 groups
 * under one parent take 10 s to build (each creation looked at every
 * sibling before it) and every lookup of the daemon's files cost a scan.
 *
 * Chained hashing: the chain link lives in the group, so adding a group
 * never allocates and cannot fail.  The table doubles when groups come to
 * outnumber its buckets; when memory for a larger table is refused the
 * old one stays, its chains longer, every answer the same.
 */
#include <string.h>

#include "core/bandwidth.h"

#define NAMES_MIN_BUCKETS 64u

/* The name's hash mixed with the parent's address: siblings are told
 * apart by name, cousins of one name by parent. */
static uint32_t name_hash(const struct cfsbw_group *parent, const char *name,
			  size_t len)
{
	uint32_t h = text_hash(name, len);
	uintptr_t p = (uintptr_t)parent;
	h ^= (uint32_t)(p >> 4) ^ (uint32_t)(p >> 36);
	return h * 2654435761u;
}

static struct cfsbw_group **table_alloc(struct cfsbw_tree *tree, size_t n)
{
	struct cfsbw_group **b = tree->allocator.alloc(
		n * sizeof(*b), _Alignof(struct cfsbw_group *),
		tree->allocator.ctx);
	if (b)
		memset(b, 0, n * sizeof(*b));
	return b;
}

int cfsbw__names_init(struct cfsbw_tree *tree)
{
	tree->name_buckets = table_alloc(tree, NAMES_MIN_BUCKETS);
	if (!tree->name_buckets)
		return -1;
	tree->nr_name_buckets = NAMES_MIN_BUCKETS;
	tree->nr_named = 0;
	return 0;
}

void cfsbw__names_free(struct cfsbw_tree *tree)
{
	if (tree->name_buckets)
		tree->allocator.free(tree->name_buckets, tree->allocator.ctx);
	tree->name_buckets = NULL;
}

static void link_into(struct cfsbw_group **buckets, size_t n,
		      struct cfsbw_group *g)
{
	struct cfsbw_group **head = &buckets[g->name_hash & (n - 1)];
	g->name_next = *head;
	*head = g;
}

/* Double the table if it can be had; else keep the old one. */
static void grow(struct cfsbw_tree *tree)
{
	size_t n = tree->nr_name_buckets * 2;
	struct cfsbw_group **nb = table_alloc(tree, n);
	if (!nb)
		return;
	for (size_t i = 0; i < tree->nr_name_buckets; i++) {
		struct cfsbw_group *g = tree->name_buckets[i];
		while (g) {
			struct cfsbw_group *next = g->name_next;
			link_into(nb, n, g);
			g = next;
		}
	}
	tree->allocator.free(tree->name_buckets, tree->allocator.ctx);
	tree->name_buckets = nb;
	tree->nr_name_buckets = n;
}

void cfsbw__names_add(struct cfsbw_tree *tree, struct cfsbw_group *g)
{
	const char *name = strrchr(g->path, '/') + 1;
	g->name_off = (uint32_t)(name - g->path);
	g->name_len = (uint32_t)strlen(name);
	g->name_hash = name_hash(g->parent, name, g->name_len);
	if (tree->nr_named >= tree->nr_name_buckets)
		grow(tree);
	link_into(tree->name_buckets, tree->nr_name_buckets, g);
	tree->nr_named++;
}

void cfsbw__names_del(struct cfsbw_tree *tree, struct cfsbw_group *g)
{
	struct cfsbw_group **link =
		&tree->name_buckets[g->name_hash &
				    (tree->nr_name_buckets - 1)];
	while (*link != g)
		link = &(*link)->name_next;
	*link = g->name_next;
	tree->nr_named--;
}

struct cfsbw_group *cfsbw__names_find(const struct cfsbw_tree *tree,
				      const struct cfsbw_group *parent,
				      const char *name, size_t len)
{
	uint32_t h = name_hash(parent, name, len);
	for (struct cfsbw_group *g =
		     tree->name_buckets[h & (tree->nr_name_buckets - 1)];
	     g; g = g->name_next)
		if (g->name_hash == h && g->parent == parent &&
		    g->name_len == len &&
		    memcmp(g->path + g->name_off, name, len) == 0)
			return g;
	return NULL;
}
