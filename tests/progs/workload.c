/*
 * workload.c - the processes the host tests and benchmarks govern.
 *
 *   workload spin SECONDS [THREADS [SLEEPERS [WAKE_MS]]]
 *                                       THREADS (default 1) busy threads in
 *                                       one process for SECONDS of wall
 *                                       time, beside SLEEPERS threads that
 *                                       sleep, or wake every WAKE_MS to
 *                                       spin 0.3 ms of CPU
 *   workload procs N SECONDS            an idle parent with N busy children
 *   workload forky LIVE CPU_MS SECONDS  keeps LIVE children alive, each
 *                                       spinning CPU_MS of CPU then exiting
 *   workload churn LIVE CPU_MS SECONDS  the same with threads: keeps LIVE
 *                                       threads alive, each spinning CPU_MS
 *   workload bursty BUSY_MS SLEEP_MS SECONDS
 *                                       bursts of BUSY_MS of CPU, then
 *                                       SLEEP_MS asleep; prints each burst's
 *                                       wall time in us, one per line
 *   workload server RATE MEAN_MS SECONDS
 *                                       a one-thread server: requests on a
 *                                       fixed Poisson schedule (RATE a
 *                                       second), each MEAN_MS of CPU on
 *                                       average (exponential), served in
 *                                       turn; prints their latencies from
 *                                       the scheduled arrival (p50, p99)
 *   workload exit CODE                  exit with CODE
 *   workload kill SIGNO                 die of signal SIGNO
 *   workload trap SIGNO SECONDS         spin; on SIGNO, print "caught N"
 *                                       and exit 3
 *   workload dropper SECONDS PLAIN      run set-user-ID: a child drops back
 *                                       to the real user and starts a
 *                                       grandchild, PLAIN spin SECONDS (a
 *                                       program without the bit): issue
 *                                       16's tree, where cfsbw can trace
 *                                       the grandchild but not the two
 *                                       above it
 *   workload measure CMD [ARG...]       run CMD, then print the CPU time of
 *                                       CMD's whole reaped tree and this
 *                                       process: "tree_cpu_us N"
 *
 * Wall time is CLOCK_MONOTONIC; CPU time is the thread's own CPU clock.
 *
 * What the machine gave: when CFSBW_SCHED_LOG names a file, each process
 * of "spin" and "procs" appends one line for its busy threads:
 *   busy N run_ns R wait_ns W held_ns H max_held_ns M
 * R and W are the threads' time on a CPU and waiting on a runqueue, as
 * /proc/thread-self/schedstat counts them when each thread ends; H is the
 * rest of their lives (a busy thread never sleeps: that is the time it was
 * held stopped by cfsbw), M the most of one thread.  The host tests assert
 * that no thread was held longer than its group was throttled
 * (tests/test_host_run.c).
 */
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * The workload runs traced by cfsbw; LeakSanitizer (make SANITIZE=...) needs
 * to ptrace the process itself at exit and cannot, so it is off here.
 */
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void)
{
	return 1;
}

static int64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static volatile sig_atomic_t caught;
static int64_t spin_until_ns;

/* The busy threads' figures, summed as each ends (see the top). */
static pthread_mutex_t busy_lock = PTHREAD_MUTEX_INITIALIZER;
static int64_t busy_threads, busy_run_ns, busy_wait_ns, busy_held_ns,
	busy_max_held_ns;

/* Called by a busy thread at its end; it began at start_ns. */
static void busy_thread_done(int64_t start_ns)
{
	long long run = 0, wait = 0;
	FILE *f = fopen("/proc/thread-self/schedstat", "r");
	if (f) {
		if (fscanf(f, "%lld %lld", &run, &wait) != 2)
			run = wait = 0;
		fclose(f);
	}
	int64_t held = now_ns(CLOCK_MONOTONIC) - start_ns - run - wait;
	pthread_mutex_lock(&busy_lock);
	busy_threads++;
	busy_run_ns += run;
	busy_wait_ns += wait;
	busy_held_ns += held > 0 ? held : 0;
	if (held > busy_max_held_ns)
		busy_max_held_ns = held;
	pthread_mutex_unlock(&busy_lock);
}

/* One line for this process's busy threads, appended in one write. */
static void busy_report(void)
{
	const char *path = getenv("CFSBW_SCHED_LOG");
	if (!path || !busy_threads)
		return;
	char line[200];
	int n = snprintf(line, sizeof line,
			 "busy %lld run_ns %lld wait_ns %lld held_ns %lld "
			 "max_held_ns %lld\n",
			 (long long)busy_threads, (long long)busy_run_ns,
			 (long long)busy_wait_ns, (long long)busy_held_ns,
			 (long long)busy_max_held_ns);
	/* Not created here: one written after the test removed it (a
	 * process left running) leaves nothing behind. */
	int fd = open(path, O_WRONLY | O_APPEND);
	if (fd < 0 || n <= 0)
		return;
	if (write(fd, line, (size_t)n) != n)
		fputs("workload: CFSBW_SCHED_LOG: short write\n", stderr);
	close(fd);
}

static void spin_wall(int64_t until)
{
	while (now_ns(CLOCK_MONOTONIC) < until && !caught)
		;
}

static void spin_cpu(int64_t cpu_ns)
{
	int64_t end = now_ns(CLOCK_THREAD_CPUTIME_ID) + cpu_ns;
	while (now_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		;
}

static void *spin_thread(void *arg)
{
	(void)arg;
	int64_t start = now_ns(CLOCK_MONOTONIC);
	spin_wall(spin_until_ns);
	busy_thread_done(start);
	return NULL;
}

static int64_t sleeper_wake_ns;

static void *sleeper_thread(void *arg)
{
	(void)arg;
	for (;;) {
		int64_t left = spin_until_ns - now_ns(CLOCK_MONOTONIC);
		if (left <= 0)
			return NULL;
		if (sleeper_wake_ns && left > sleeper_wake_ns)
			left = sleeper_wake_ns;
		struct timespec ts = {left / 1000000000, left % 1000000000};
		nanosleep(&ts, NULL);
		if (sleeper_wake_ns)
			spin_cpu(300000);
	}
}

static int64_t secs(const char *s)
{
	return (int64_t)(atof(s) * 1e9);
}

static int cmd_spin(int argc, char **argv)
{
	if (argc < 1)
		return 2;
	int n = argc > 1 ? atoi(argv[1]) : 1;
	spin_until_ns = now_ns(CLOCK_MONOTONIC) + secs(argv[0]);
	int sleepers = argc > 2 ? atoi(argv[2]) : 0;
	sleeper_wake_ns = argc > 3 ? (int64_t)atoi(argv[3]) * 1000000 : 0;
	pthread_t t[64], st[64];
	if (n > 64)
		n = 64;
	if (sleepers > 64)
		sleepers = 64;
	for (int i = 0; i < sleepers; i++)
		pthread_create(&st[i], NULL, sleeper_thread, NULL);
	for (int i = 1; i < n; i++)
		pthread_create(&t[i], NULL, spin_thread, NULL);
	spin_thread(NULL);
	for (int i = 1; i < n; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < sleepers; i++)
		pthread_join(st[i], NULL);
	busy_report();
	return 0;
}

static int cmd_procs(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	int n = atoi(argv[0]);
	int64_t until = now_ns(CLOCK_MONOTONIC) + secs(argv[1]);
	for (int i = 0; i < n; i++) {
		if (fork() == 0) {
			int64_t start = now_ns(CLOCK_MONOTONIC);
			spin_wall(until);
			busy_thread_done(start);
			busy_report();
			_exit(0);
		}
	}
	while (wait(NULL) > 0)
		;
	return 0;
}

static int cmd_forky(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	int live = atoi(argv[0]);
	int64_t cpu = (int64_t)(atof(argv[1]) * 1e6);
	int64_t until = now_ns(CLOCK_MONOTONIC) + secs(argv[2]);
	int running = 0;
	long forks = 0;
	while (now_ns(CLOCK_MONOTONIC) < until) {
		while (running < live) {
			pid_t pid = fork();
			if (pid == 0) {
				spin_cpu(cpu);
				_exit(0);
			}
			if (pid > 0) {
				running++;
				forks++;
			}
		}
		if (wait(NULL) > 0)
			running--;
	}
	while (wait(NULL) > 0)
		;
	fprintf(stderr, "forky: %ld children\n", forks);
	return 0;
}

static int64_t churn_cpu_ns;

static void *churn_thread(void *arg)
{
	(void)arg;
	spin_cpu(churn_cpu_ns);
	return NULL;
}

/* Threads born and gone all the time, each joined by the main thread. */
static int cmd_churn(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	int live = atoi(argv[0]);
	if (live < 1 || live > 64)
		return 2;
	churn_cpu_ns = (int64_t)(atof(argv[1]) * 1e6);
	int64_t until = now_ns(CLOCK_MONOTONIC) + secs(argv[2]);
	pthread_t t[64];
	long threads = 0;
	for (int i = 0; i < live; i++)
		pthread_create(&t[i], NULL, churn_thread, NULL);
	for (int i = 0; now_ns(CLOCK_MONOTONIC) < until; i = (i + 1) % live) {
		pthread_join(t[i], NULL);
		pthread_create(&t[i], NULL, churn_thread, NULL);
		threads++;
	}
	for (int i = 0; i < live; i++)
		pthread_join(t[i], NULL);
	fprintf(stderr, "churn: %ld threads\n", threads);
	return 0;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int cmd_bursty(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	int64_t busy = (int64_t)(atof(argv[0]) * 1e6);
	int64_t sleep_ns = (int64_t)(atof(argv[1]) * 1e6);
	int64_t until = now_ns(CLOCK_MONOTONIC) + secs(argv[2]);
	static int64_t wall[100000];
	size_t n = 0;
	while (now_ns(CLOCK_MONOTONIC) < until && n < 100000) {
		int64_t t0 = now_ns(CLOCK_MONOTONIC);
		spin_cpu(busy);
		wall[n++] = now_ns(CLOCK_MONOTONIC) - t0;
		struct timespec ts = {(time_t)(sleep_ns / 1000000000),
				      (long)(sleep_ns % 1000000000)};
		nanosleep(&ts, NULL);
	}
	qsort(wall, n, sizeof wall[0], cmp64);
	if (n)
		printf("bursts %zu median_us %lld max_us %lld\n", n,
		       (long long)(wall[n / 2] / 1000),
		       (long long)(wall[n - 1] / 1000));
	return 0;
}

/* A uniform draw in [0, 1) from a fixed xorshift: the same schedule and
 * service times at every run, limited or not. */
static double uniform01(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return (double)(*x >> 11) / 9007199254740992.0;
}

static int cmd_server(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	double rate = atof(argv[0]), mean_ns = atof(argv[1]) * 1e6;
	if (rate <= 0 || mean_ns <= 0)
		return 2;
	int64_t start = now_ns(CLOCK_MONOTONIC), span = secs(argv[2]);
	int64_t due = start;
	uint64_t x = UINT64_C(88172645463325252);
	static int64_t lat[200000];
	size_t n = 0;
	for (;;) {
		due += (int64_t)(-log(1 - uniform01(&x)) / rate * 1e9);
		if (due - start > span || n == 200000)
			break;
		int64_t service = (int64_t)(-log(1 - uniform01(&x)) * mean_ns);
		if (now_ns(CLOCK_MONOTONIC) < due) {
			struct timespec ts = {(time_t)(due / 1000000000),
					      (long)(due % 1000000000)};
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME,
					       &ts, NULL))
				;
		}
		spin_cpu(service);
		lat[n++] = now_ns(CLOCK_MONOTONIC) - due;
	}
	qsort(lat, n, sizeof lat[0], cmp64);
	/* nearest rank, as the simulator's: the ceil(n p / 100)-th */
	if (n)
		printf("requests %zu p50_us %lld p99_us %lld max_us %lld\n", n,
		       (long long)(lat[(n * 50 + 99) / 100 - 1] / 1000),
		       (long long)(lat[(n * 99 + 99) / 100 - 1] / 1000),
		       (long long)(lat[n - 1] / 1000));
	return 0;
}

static void on_signal(int sig)
{
	caught = sig;
}

static int cmd_trap(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	signal(atoi(argv[0]), on_signal);
	/* Tell a test that waits for it that the handler is in place. */
	const char *ready = getenv("WORKLOAD_TRAP_READY");
	if (ready) {
		FILE *f = fopen(ready, "w");
		if (f)
			fclose(f);
	}
	spin_wall(now_ns(CLOCK_MONOTONIC) + secs(argv[1]));
	if (caught) {
		printf("caught %d\n", (int)caught);
		return 3;
	}
	return 0;
}

static int cmd_dropper(int argc, char **argv)
{
	if (argc < 2 || geteuid() == getuid())
		return 2;
	pid_t c = fork();
	if (c == 0) {
		if (setuid(getuid()) < 0)
			_exit(1);
		pid_t g = fork();
		if (g == 0) {
			execl(argv[1], "workload", "spin", argv[0], (char *)NULL);
			_exit(127);
		}
		while (wait(NULL) > 0)
			;
		_exit(0);
	}
	while (wait(NULL) > 0)
		;
	return 0;
}

static int64_t tv_us(struct timeval tv)
{
	return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

/* The kernel's count of a command tree's CPU time, apart from cfsbw's. */
static int cmd_measure(char **argv)
{
	if (!argv[0])
		return 2;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		execvp(argv[0], argv);
		_exit(127);
	}
	int status;
	struct rusage ru, self;
	if (wait4(pid, &status, 0, &ru) < 0)
		return 1;
	getrusage(RUSAGE_SELF, &self);
	printf("tree_cpu_us %lld\n",
	       (long long)(tv_us(ru.ru_utime) + tv_us(ru.ru_stime) +
			   tv_us(self.ru_utime) + tv_us(self.ru_stime)));
	fflush(stdout);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs("usage: workload spin|procs|forky|churn|bursty|server|exit|kill|trap ...\n",
		      stderr);
		return 2;
	}
	const char *c = argv[1];
	argc -= 2;
	argv += 2;
	if (!strcmp(c, "spin"))
		return cmd_spin(argc, argv);
	if (!strcmp(c, "procs"))
		return cmd_procs(argc, argv);
	if (!strcmp(c, "forky"))
		return cmd_forky(argc, argv);
	if (!strcmp(c, "churn"))
		return cmd_churn(argc, argv);
	if (!strcmp(c, "bursty"))
		return cmd_bursty(argc, argv);
	if (!strcmp(c, "server"))
		return cmd_server(argc, argv);
	if (!strcmp(c, "exit") && argc > 0)
		return atoi(argv[0]);
	if (!strcmp(c, "kill") && argc > 0) {
		signal(atoi(argv[0]), SIG_DFL);
		raise(atoi(argv[0]));
		return 1;
	}
	if (!strcmp(c, "trap"))
		return cmd_trap(argc, argv);
	if (!strcmp(c, "measure"))
		return cmd_measure(argv);
	if (!strcmp(c, "dropper"))
		return cmd_dropper(argc, argv);
	fprintf(stderr, "workload: unknown mode '%s'\n", c);
	return 2;
}
