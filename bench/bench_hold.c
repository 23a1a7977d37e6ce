/*
 * bench_hold.c - what being held off the CPU costs a task on this
 * machine, in CPU time: the price of a throttled period that neither
 * cfsbw's simulator nor its replays model (docs/sim.md, "Replaying real
 * workloads"; bench/README.md, "Replaying a recorded build").
 *
 *   bench_hold [--rounds N]
 *
 * A chunk of work (a million reads and writes at random places in a
 * working set of 1, 8 or 32 MB, or a million multiply-adds with no memory
 * to speak of) runs back to back, then after gaps off the CPU of 1, 10
 * and 100 ms (a sleep: the thread leaves the CPU as a throttled one does).
 * Each round times one chunk of each kind on the thread's CPU clock, the
 * gaps in turn, so that the machine's drift falls on all of them alike;
 * the table gives, per working set and gap, the median over the rounds of
 * a chunk's CPU time and what the gap added to it (against back to back).
 * A chunk's data is what the gap lets other work on the machine (other
 * tasks, other guests) evict from the caches; on a quiet machine with
 * its own caches, the gaps add little.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_ROUNDS 200
#define CHUNK_OPS 1000000L

static double thread_cpu_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void sleep_ms(long ms)
{
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&t, &t) != 0)
		;
}

static volatile uint64_t sink;

/* CHUNK_OPS reads and writes at random places of set[0..words), or (no
 * set) as many multiply-adds: the chunk's CPU time, ms. */
static double chunk(uint32_t *set, size_t words)
{
	uint64_t x = 0x9e3779b97f4a7c15u, s = 0;
	double t0 = thread_cpu_ms();
	for (long i = 0; i < CHUNK_OPS; i++) {
		x = x * 6364136223846793005u + 1442695040888963407u;
		if (set)
			s += set[(x >> 24) & (words - 1)]++;
		else
			s += x >> 7;
	}
	sink = s;
	return thread_cpu_ms() - t0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	int rounds = 15;
	if (argc == 3 && !strcmp(argv[1], "--rounds")) {
		char *end;
		long v = strtol(argv[2], &end, 10);
		if (*end || v < 1 || v > MAX_ROUNDS) {
			fprintf(stderr, "bench_hold: --rounds %s: 1..%d\n",
				argv[2], MAX_ROUNDS);
			return 2;
		}
		rounds = (int)v;
	} else if (argc != 1) {
		fprintf(stderr, "usage: bench_hold [--rounds N]\n");
		return 2;
	}
	static const size_t mb[] = {0, 1, 8, 32}; /* 0: no memory */
	static const long gap_ms[] = {0, 1, 10, 100};
	enum { NSETS = 4, NGAPS = 4 };
	static double t[NSETS][NGAPS][MAX_ROUNDS];
	uint32_t *set[NSETS] = {NULL};
	for (int w = 1; w < NSETS; w++) {
		size_t words = mb[w] << 18;
		set[w] = malloc(words * sizeof *set[w]);
		if (!set[w]) {
			fprintf(stderr, "bench_hold: out of memory\n");
			return 1;
		}
		for (size_t i = 0; i < words; i++) /* touched: no faults later */
			set[w][i] = (uint32_t)i;
		chunk(set[w], words);
	}
	for (int r = 0; r < rounds; r++)
		for (int g = 0; g < NGAPS; g++)
			for (int w = 0; w < NSETS; w++) {
				/* back to back: a chunk just ahead warms it */
				if (gap_ms[g] == 0)
					chunk(set[w], mb[w] << 18);
				else
					sleep_ms(gap_ms[g]);
				t[w][g][r] = chunk(set[w], mb[w] << 18);
			}
	time_t now = time(NULL);
	char date[32];
	strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", gmtime(&now));
	printf("hold: what a gap off the CPU adds to the next %ld operations' "
	       "CPU time, %s, median of %d rounds\n",
	       CHUNK_OPS, date, rounds);
	printf("%-16s %12s", "working set", "back to back");
	for (int g = 1; g < NGAPS; g++)
		printf("   after %3ld ms   ", gap_ms[g]);
	printf("\n");
	for (int w = 0; w < NSETS; w++) {
		double base = median(t[w][0], rounds);
		char name[32];
		if (mb[w])
			snprintf(name, sizeof name, "%zu MB", mb[w]);
		else
			snprintf(name, sizeof name, "none (ALU)");
		printf("%-16s %9.2f ms", name, base);
		for (int g = 1; g < NGAPS; g++) {
			double m = median(t[w][g], rounds);
			printf("   %+6.2f ms %+4.0f%%", m - base,
			       100 * (m - base) / base);
		}
		printf("\n");
	}
	for (int w = 1; w < NSETS; w++)
		free(set[w]);
	return 0;
}
