/*
 * programs.c - where the host benchmarks find their programs, and how
 * they read cfsbw's --stats report.
 */
#include "programs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *bench_cfsbw_bin(void)
{
	const char *b = getenv("CFSBW_BIN");
	return b ? b : "build/cfsbw";
}

const char *bench_workload_path(void)
{
	static char p[4096];
	const char *d = getenv("CFSBW_PROGS");
	snprintf(p, sizeof p, "%s/workload", d ? d : "build/tests/progs");
	return p;
}

long bench_read_file(const char *path, char *buf, size_t size)
{
	buf[0] = '\0';
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	return (long)n;
}

void bench_stats_take(const char *path, char *json, size_t size)
{
	bench_read_file(path, json, size);
	unlink(path);
}

void bench_execv(const char *const argv[])
{
	char *cargv[24];
	size_t n = 0;
	while (n < 23 && argv[n])
		n++;
	memcpy(cargv, argv, n * sizeof argv[0]);
	cargv[n] = NULL;
	execv(cargv[0], cargv);
}

unsigned long long bench_json_u64(const char *json, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\": ", key);
	const char *p = strstr(json, pat);
	return p ? strtoull(p + strlen(pat), NULL, 10) : 0;
}

int bench_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ssize_t n = write(fd, text, strlen(text));
	int err = n < 0 ? -errno : 0;
	close(fd);
	return err;
}

void bench_read_all(int fd, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t k;
	while (len + 1 < size && (k = read(fd, buf + len, size - 1 - len)) > 0)
		len += (size_t)k;
	buf[len] = '\0';
	close(fd);
}
