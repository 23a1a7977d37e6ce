/*
 * programs.h - what the host benchmarks share: where they find cfsbw and
 * the workload program, and how they read what `cfsbw run --stats` wrote.
 */
#ifndef CFSBW_BENCH_PROGRAMS_H
#define CFSBW_BENCH_PROGRAMS_H

#include <stddef.h>

/* The cfsbw command: $CFSBW_BIN, or build/cfsbw. */
const char *bench_cfsbw_bin(void);

/* The workload program: $CFSBW_PROGS/workload, or build/tests/progs/. */
const char *bench_workload_path(void);

/*
 * Up to size - 1 bytes from the start of the file at path into buf,
 * NUL-terminated (empty if it cannot be read); their count, or -1.
 */
long bench_read_file(const char *path, char *buf, size_t size);

/*
 * Read the --stats file at path into json (size bytes, NUL-terminated;
 * empty if there is none) and remove it.
 */
void bench_stats_take(const char *path, char *json, size_t size);

/*
 * execv(argv[0], argv) from an argv of const strings (string literals are
 * const here); at most 23 arguments.  Returns only if the exec failed.
 */
void bench_execv(const char *const argv[]);

/* The unsigned number after "key": in json, or 0 if it is not there. */
unsigned long long bench_json_u64(const char *json, const char *key);

/* Write text to the file at path (a cgroup file); 0 or -errno. */
int bench_write_file(const char *path, const char *text);

/* Read fd to its end into buf (size bytes, NUL-terminated) and close it. */
void bench_read_all(int fd, char *buf, size_t size);

#endif
