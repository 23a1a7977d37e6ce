/*
 * common/helpers.h - private helpers shared by every layer (core,
 * simulator, host, command), so that each is written once (issue 13):
 *
 *   container_of, an intrusive doubly linked list with typed iterators,
 *   BUG_ON for broken invariants, the wrap-safe compare of virtual times,
 *   one decimal parser with the kernel's kstrtoull/kstrtoll rules (R2),
 *   one text for an errno value, the start of a small file (/proc, a
 *   script's first line) for the layers that read files, a hash of text
 *   for the indexes of names.
 *
 * Plain C11, header only: everything here is static inline, so nothing of
 * it is exported from libcfsbw.a and no layer depends on another through
 * it.  Not installed; never included by a public header.
 */
#ifndef CFSBW_COMMON_HELPERS_H
#define CFSBW_COMMON_HELPERS_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
/* A function off the hot path: kept out of line, its code apart. */
#define cold_path __attribute__((noinline, cold))
#else
#define likely(x) (x)
#define unlikely(x) (x)
#define cold_path
#endif

/* The object of type that holds member at ptr. */
#define container_of(ptr, type, member)                                        \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/* ---- broken invariants -------------------------------------------------- */

static inline _Noreturn void bug_report(const char *file, int line,
					const char *what)
{
	fprintf(stderr, "cfsbw: broken invariant at %s:%d: %s\n", file, line,
		what);
	abort();
}

/*
 * A broken invariant stops the program, loudly, with file and line.  Only
 * for what cannot happen: a bad value or a lack of memory is an error.
 */
#define BUG_ON(cond)                                                           \
	do {                                                                   \
		if (unlikely(cond))                                            \
			bug_report(__FILE__, __LINE__, #cond);                 \
	} while (0)

/* ---- intrusive doubly linked circular list ------------------------------ */

struct list_head {
	struct list_head *prev, *next;
};

static inline void list_init(struct list_head *head)
{
	head->prev = head->next = head;
}

static inline bool list_empty(const struct list_head *head)
{
	return head->next == head;
}

static inline void list_add_tail(struct list_head *head, struct list_head *n)
{
	n->prev = head->prev;
	n->next = head;
	head->prev->next = n;
	head->prev = n;
}

/* Links n in first: before the first entry, or the head itself when the
 * list is empty (which list_add_tail's "before head" does). */
static inline void list_add_head(struct list_head *head, struct list_head *n)
{
	list_add_tail(head->next, n);
}

/* Unlinks n and leaves it an empty list of its own. */
static inline void list_del(struct list_head *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = n;
}

/* Moves n, on a list with head, to its head. */
static inline void list_move_head(struct list_head *head, struct list_head *n)
{
	if (head->next == n)
		return;
	list_del(n);
	list_add_head(head, n);
}

#define list_entry(link, type, member) container_of(link, type, member)

#define list_first_entry(head, type, member)                                   \
	list_entry((head)->next, type, member)

/* The entry at link, or NULL when link is the head (the end of the list). */
#define list_entry_or_null(link, head, type, member)                           \
	((link) == (head) ? (type *)NULL : list_entry(link, type, member))

/*
 * Each entry of type on head, linked through member, in list order.  C11
 * has no typeof: the entry type is named.  No pointer is ever made from
 * the head itself (it is not inside an entry: a sanitizer would see a
 * misaligned object).  head is evaluated more than once.  The body must
 * not unlink pos; list_for_each_entry_safe allows it (it reads the next
 * entry first).
 */
#define list_for_each_entry(pos, head, type, member)                           \
	for (type *pos = list_entry_or_null((head)->next, head, type, member); \
	     pos; pos = list_entry_or_null(pos->member.next, head, type, member))

#define list_for_each_entry_safe(pos, head, type, member)                      \
	for (type *pos = list_entry_or_null((head)->next, head, type, member), \
		  *pos##_next_ = pos ? list_entry_or_null(pos->member.next,    \
							  head, type, member)  \
				     : NULL;                                   \
	     pos; pos = pos##_next_,                                           \
		  pos##_next_ = pos ? list_entry_or_null(pos->member.next,     \
							 head, type, member)   \
				    : NULL)

/* ---- virtual time ------------------------------------------------------- */

/*
 * a - b for two virtual times (vruntime, ns) that may have wrapped: the
 * subtraction is done unsigned, so it is defined, and read as signed, so
 * that a time just past the wrap is still later (the kernel's
 * (s64)(a - b)).
 */
static inline int64_t vtime_diff(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a - (uint64_t)b);
}

/* a + d for a virtual time a, wrapping as vtime_diff() expects. */
static inline int64_t vtime_add(int64_t a, int64_t d)
{
	return (int64_t)((uint64_t)a + (uint64_t)d);
}

/* a is earlier than b. */
static inline bool vtime_before(int64_t a, int64_t b)
{
	return vtime_diff(a, b) < 0;
}

/* ---- decimal numbers, as the kernel's cgroup files take them ------------ */

static inline bool text_is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
	       c == '\v';
}

/*
 * The kernel's strstrip then kstrtoull/kstrtoll (R2): white space around
 * the value is ignored, then an optional sign and decimal digits and
 * nothing else.  On return *neg says whether a '-' came first and *v holds
 * the magnitude.  -EINVAL when malformed (or NULL), -ERANGE beyond 64 bits.
 */
static inline int parse_decimal(const char *text, bool *neg, uint64_t *v)
{
	if (!text)
		return -EINVAL;
	const char *s = text, *e = text + strlen(text);
	while (s < e && text_is_space(*s))
		s++;
	while (e > s && text_is_space(e[-1]))
		e--;
	*neg = false;
	if (s < e && (*s == '+' || *s == '-')) {
		*neg = *s == '-';
		s++;
	}
	if (s == e)
		return -EINVAL;
	uint64_t n = 0;
	for (; s < e; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		uint64_t d = (uint64_t)(*s - '0');
		if (n > (UINT64_MAX - d) / 10)
			return -ERANGE;
		n = n * 10 + d;
	}
	*v = n;
	return 0;
}

/* kstrtoull: 0, -EINVAL (a minus sign too) or -ERANGE. */
static inline int parse_u64(const char *text, uint64_t *out)
{
	bool neg;
	uint64_t v;
	int err = parse_decimal(text, &neg, &v);
	if (!err && neg)
		err = -EINVAL; /* kstrtoull takes no sign but '+' */
	if (!err)
		*out = v;
	return err;
}

/* kstrtoll: 0, -EINVAL or -ERANGE. */
static inline int parse_s64(const char *text, int64_t *out)
{
	bool neg;
	uint64_t v;
	int err = parse_decimal(text, &neg, &v);
	if (err)
		return err;
	if (neg) {
		if (v > (uint64_t)INT64_MAX + 1)
			return -ERANGE;
		*out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
	} else {
		if (v > (uint64_t)INT64_MAX)
			return -ERANGE;
		*out = (int64_t)v;
	}
	return 0;
}

/* ---- hashing text -------------------------------------------------------- */

/* FNV-1a over n bytes of text: for the indexes of group names and paths. */
static inline uint32_t text_hash(const char *text, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)text[i];
		h *= 16777619u;
	}
	return h;
}

/* ---- growable arrays ---------------------------------------------------- */

/*
 * items, an array of *cap elements of size bytes of which n are used, with
 * room for one more: when full it is reallocated to twice *cap (first_cap
 * the first time) and *cap updated.  NULL when out of memory, and then
 * items and *cap are unchanged.
 */
static inline void *array_room(void *items, size_t n, size_t *cap,
			       size_t size, size_t first_cap)
{
	if (n < *cap)
		return items;
	size_t nc = *cap ? 2 * *cap : first_cap;
	if (nc < *cap || nc > SIZE_MAX / size)
		return NULL;
	void *p = realloc(items, nc * size);
	if (p)
		*cap = nc;
	return p;
}

/* ---- errno values as text ----------------------------------------------- */

/* The errno values cfsbw returns or passes on, X(name, message). */
#define ERRNO_TEXTS(X)                                                         \
	X(EPERM, "Operation not permitted")                                    \
	X(ENOENT, "No such file or directory")                                 \
	X(ESRCH, "No such process")                                            \
	X(EINTR, "Interrupted system call")                                    \
	X(EIO, "Input/output error")                                           \
	X(E2BIG, "Argument list too long")                                     \
	X(ECHILD, "No child processes")                                        \
	X(EAGAIN, "Resource temporarily unavailable")                          \
	X(ENOMEM, "Cannot allocate memory")                                    \
	X(EACCES, "Permission denied")                                         \
	X(EBUSY, "Device or resource busy")                                    \
	X(EEXIST, "File exists")                                               \
	X(ENOTDIR, "Not a directory")                                          \
	X(EISDIR, "Is a directory")                                            \
	X(EINVAL, "Invalid argument")                                          \
	X(ENOSPC, "No space left on device")                                   \
	X(EPIPE, "Broken pipe")                                                \
	X(EDOM, "Numerical argument out of domain")                            \
	X(ERANGE, "Numerical result out of range")                             \
	X(ENOSYS, "Function not implemented")                                  \
	X(EOVERFLOW, "Value too large for defined data type")

/*
 * "EINVAL (Invalid argument)" for EINVAL or -EINVAL: the name a reader
 * finds in the SPEC and the kernel, and what it means.  A value not in the
 * table gives "error".
 */
static inline const char *errno_text(int err)
{
	switch (err < 0 ? -err : err) {
#define ERRNO_TEXT_CASE(name, msg)                                             \
	case name:                                                             \
		return #name " (" msg ")";
		ERRNO_TEXTS(ERRNO_TEXT_CASE)
#undef ERRNO_TEXT_CASE
	default:
		return "error";
	}
}

/* ---- the start of a small file ------------------------------------------ */

/*
 * Up to size - 1 bytes from the start of the file at path (a /proc file,
 * a script's "#!" line) into buf, NUL-terminated.  Returns their count, or
 * -1 (buf "") when the file cannot be opened or read.  Opened close-on-exec
 * ("e", glibc): a driver forks.  Not for the core, which reads no file.
 */
static inline long read_file_head(const char *path, char *buf, size_t size)
{
	buf[0] = '\0';
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, size - 1, f);
	bool failed = ferror(f);
	fclose(f);
	buf[failed ? 0 : n] = '\0';
	return failed ? -1 : (long)n;
}

#endif /* CFSBW_COMMON_HELPERS_H */
