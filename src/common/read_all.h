/*
 * read_all.h - a whole file in memory, for the commands and the tools that
 * read scenarios and traces (cli/sim_load.c, tools/pgo_train.c).
 */
#ifndef CFSBW_COMMON_READ_ALL_H
#define CFSBW_COMMON_READ_ALL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The whole file (or standard input, "-") as a NUL-terminated string, its
 * length in *len_out; NULL with errno set, EFBIG past max_bytes.
 */
static inline char *read_all(const char *path, size_t max_bytes,
			     size_t *len_out)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	if (!f)
		return NULL;
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	while (buf) {
		size_t n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
		if (len < cap - 1) {
			if (ferror(f)) {
				free(buf);
				buf = NULL;
			}
			break;
		}
		/* bounded: /dev/zero or a runaway pipe is refused, not read
		 * until memory runs out (issue 16) */
		if (len >= max_bytes) {
			free(buf);
			buf = NULL;
			errno = EFBIG;
			break;
		}
		char *nb = realloc(buf, cap * 2);
		if (!nb) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	int saved = errno;
	if (f != stdin)
		fclose(f);
	errno = saved;
	if (buf)
		buf[len] = '\0';
	*len_out = len;
	return buf;
}

#endif
