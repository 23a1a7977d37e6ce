/*
 * fidelity_tasks.h - the processes that run a scenario's workloads on the
 * kernel for bench_fidelity (fidelity_tasks.c), and the latencies they
 * record, in memory shared with the benchmark.
 */
#ifndef CFSBW_BENCH_FIDELITY_TASKS_H
#define CFSBW_BENCH_FIDELITY_TASKS_H

#include <stdbool.h>
#include <stdint.h>

#include "cfsbw_sim.h"

#define FK_MAX_LATENCIES 65536 /* per task line; later ones are dropped */

/* Latencies of one task line (all its tasks), in shared memory. */
struct fk_latencies {
	uint64_t count; /* recorded, atomically; may exceed the array */
	int64_t ns[FK_MAX_LATENCIES];
};

/*
 * Run task t's workload until killed, as the simulator defines it
 * (src/sim/workload.c): busy spins; duty spins run_ns of its own CPU
 * time, then sleeps sleep_ns; requests serves Poisson arrivals in order.
 * A duty cycle's latency (its start to the end of its run) and a
 * request's (arrival to completion) go to lat.  The task is the index-th
 * of the scenario's tasks (lines in order, count tasks a line) and draws
 * from the streams the simulator gives that task for seed (rng.c): the
 * phase, or the arrivals and service times, that `cfsbw sim --seed SEED`
 * draws for it.
 */
_Noreturn void fk_task_main(const struct cfsbw_sim_task_spec *t,
			    uint64_t seed, uint64_t index,
			    struct fk_latencies *lat);

/* Sleep until CLOCK_MONOTONIC time t (ns). */
void fk_sleep_until(int64_t t);

/* A number below n drawn for seed from the simulator's streams (rng.c),
 * from one no simulated task or group draws from: the benchmark's own. */
uint64_t fk_draw_below(uint64_t seed, uint64_t n);

#endif
