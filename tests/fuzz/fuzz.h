/*
 * fuzz.h - what the libFuzzer harnesses of tests/fuzz/ share: reading a
 * fuzzer's input as a stream of small decisions, and stopping loudly when
 * an invariant breaks.
 *
 * A harness is built with clang -fsanitize=fuzzer,address,undefined
 * (make fuzz); libFuzzer calls LLVMFuzzerTestOneInput with each input.  A
 * broken invariant calls abort(), which libFuzzer reports as a crash and
 * saves as a reproducer: rerun it with `build/fuzz/fuzz_NAME FILE`.
 */
#ifndef CFSBW_TESTS_FUZZ_H
#define CFSBW_TESTS_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input, consumed front to back; reads past its end give zeros. */
struct fz_input {
	const uint8_t *p;
	size_t n;
};

static inline unsigned fz_u8(struct fz_input *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

/* nbytes (at most 8) little-endian bytes as an unsigned number. */
static inline uint64_t fz_bytes(struct fz_input *in, unsigned nbytes)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < nbytes; i++)
		v |= (uint64_t)fz_u8(in) << (8 * i);
	return v;
}

/* A number in 0..n-1 (n >= 1). */
static inline unsigned fz_below(struct fz_input *in, unsigned n)
{
	return n <= 256 ? fz_u8(in) % n : (unsigned)(fz_bytes(in, 4) % n);
}

/* An invariant: on failure, say which and where, then abort for libFuzzer. */
#define FZ_CHECK(cond, ...)                                                    \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: invariant broken: %s: ",       \
				__FILE__, __LINE__, #cond);                    \
			fprintf(stderr, __VA_ARGS__);                          \
			fputc('\n', stderr);                                   \
			abort();                                               \
		}                                                              \
	} while (0)

/* A command line's bounds: longer inputs are not command lines. */
#define FZ_MAX_ARGS 32
#define FZ_MAX_CMDLINE_BYTES 4096

/* A command line: argv[0] is the command's name, argv[argc] is NULL. */
struct fz_cmdline {
	int argc;
	char *argv[FZ_MAX_ARGS + 2];
	char *text; /* the malloc'ed copy the arguments point into */
};

/*
 * The input as a command line: name, then each NUL-separated piece of the
 * input, at most FZ_MAX_ARGS of them.  False for an input longer than
 * FZ_MAX_CMDLINE_BYTES (nothing to free); else free with fz_cmdline_free.
 */
static inline bool fz_cmdline_read(struct fz_cmdline *c, const uint8_t *data,
				   size_t size, const char *name)
{
	if (size > FZ_MAX_CMDLINE_BYTES)
		return false;
	c->text = malloc(size + 1);
	FZ_CHECK(c->text, "out of memory");
	memcpy(c->text, data, size);
	c->text[size] = '\0';
	c->argc = 0;
	c->argv[c->argc++] = (char *)(uintptr_t)name;
	for (size_t i = 0; i < size && c->argc < FZ_MAX_ARGS + 1;) {
		c->argv[c->argc++] = c->text + i;
		i += strlen(c->text + i) + 1;
	}
	c->argv[c->argc] = NULL;
	return true;
}

static inline void fz_cmdline_free(struct fz_cmdline *c)
{
	free(c->text);
}

#endif
