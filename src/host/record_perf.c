/*
 * record_perf.c - the kernel's context-switch records of the recorded
 * threads (record_int.h), for `cfsbw record`.
 *
 * Each event is a software dummy event (it counts nothing, takes no
 * samples) with context_switch: a PERF_RECORD_SWITCH at every switch of
 * its thread in and out of a CPU, the out record saying whether the thread
 * was preempted (still runnable) or blocked; task: FORK and EXIT records;
 * comm: the name exec gives.  inherit gives every thread and process the
 * thread creates later events of their own, writing into the same rings.
 * sample_id_all appends pid, tid and time to every record; use_clockid
 * makes the time CLOCK_MONOTONIC.  exclude_kernel asks for no kernel
 * samples (there are none): perf_event_paranoid 2 requires it of an
 * unprivileged user, and it does not filter switch records.
 *
 * The kernel refuses mmap of an inherited event that follows its thread
 * over all CPUs (cpu -1), so a thread gets one event per CPU, and the
 * events of a CPU share one ring (PERF_EVENT_IOC_SET_OUTPUT).  A thread's
 * records are in time order within a ring, not across rings: the reader
 * sorts.
 */
#include "host/record_int.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define RING_PAGES 32 /* per CPU: 128 KiB, a few thousand records */

int cfsbw_host__perf_init(struct rec_perf *p)
{
	memset(p, 0, sizeof *p);
	long n = sysconf(_SC_NPROCESSORS_CONF);
	p->nr_cpus = n > 0 ? (unsigned)n : 1;
	p->rings = calloc(p->nr_cpus, sizeof *p->rings);
	if (!p->rings)
		return -ENOMEM;
	for (unsigned c = 0; c < p->nr_cpus; c++)
		p->rings[c].fd = -1;
	return 0;
}

static int open_event(pid_t tid, int cpu, bool on_exec)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.size = sizeof a;
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a.sample_id_all = 1;
	a.context_switch = 1;
	a.task = 1;
	a.comm = 1;
	a.inherit = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.disabled = on_exec;
	a.enable_on_exec = on_exec;
	a.watermark = 1;
	a.wakeup_watermark = RING_PAGES * 4096 / 4;
	long fd = syscall(SYS_perf_event_open, &a, tid, cpu, -1,
			  PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : (int)fd;
}

static int paranoid_level(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int v = -100;
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -100;
		fclose(f);
	}
	return v;
}

/* Map a ring: 1 + pages pages, fewer if locked memory runs short
 * (perf_event_mlock_kb, then RLIMIT_MEMLOCK). */
static int map_ring(struct rec_ring *r, int fd)
{
	size_t psz = (size_t)sysconf(_SC_PAGESIZE);
	for (size_t pages = RING_PAGES; pages >= 1; pages /= 2) {
		size_t len = (pages + 1) * psz;
		void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
			       fd, 0);
		if (m != MAP_FAILED) {
			r->fd = fd;
			r->base = m;
			r->size = pages * psz;
			r->map_len = len;
			return 0;
		}
		if (errno != EPERM && errno != ENOMEM)
			return -errno;
	}
	return -ENOMEM;
}

int cfsbw_host__perf_open(struct rec_perf *p, pid_t tid, bool on_exec,
			  char *err, size_t errlen)
{
	unsigned opened = 0;
	for (unsigned c = 0; c < p->nr_cpus; c++) {
		int fd = open_event(tid, (int)c, on_exec);
		if (fd == -ENODEV) /* CPU offline */
			continue;
		if (fd == -ESRCH)
			return -ESRCH;
		if (fd == -EMFILE || fd == -ENFILE) {
			snprintf(err, errlen, "perf_event_open on thread %d: %s "
				 "(one file per thread per CPU: raise ulimit -n)",
				 (int)tid, strerror(-fd));
			return -1;
		}
		if (fd < 0) {
			if (fd == -EACCES || fd == -EPERM)
				snprintf(err, errlen, "perf_event_open on "
					 "thread %d: %s: recording needs "
					 "/proc/sys/kernel/perf_event_paranoid "
					 "at 2 or lower (it is %d) and a process "
					 "of your own, or CAP_PERFMON",
					 (int)tid, strerror(-fd),
					 paranoid_level());
			else
				snprintf(err, errlen, "perf_event_open on "
					 "thread %d: %s (context-switch records "
					 "need Linux 4.3 or later)", (int)tid,
					 strerror(-fd));
			return -1;
		}
		if (p->nr_fds == p->cap_fds) {
			size_t cap = p->cap_fds ? p->cap_fds * 2 : 64;
			int *q = realloc(p->fds, cap * sizeof *q);
			if (!q) {
				close(fd);
				snprintf(err, errlen, "out of memory");
				return -1;
			}
			p->fds = q;
			p->cap_fds = cap;
		}
		p->fds[p->nr_fds++] = fd;
		struct rec_ring *r = &p->rings[c];
		int rc = r->fd < 0 ? map_ring(r, fd)
			 : ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) ? -errno
								       : 0;
		if (rc) {
			snprintf(err, errlen, "the perf ring of CPU %u: %s", c,
				 strerror(-rc));
			return -1;
		}
		opened++;
	}
	if (!opened) {
		snprintf(err, errlen, "perf_event_open on thread %d: no CPU "
			 "online", (int)tid);
		return -1;
	}
	return 0;
}

/* The sample_id that sample_id_all appends (PERF_SAMPLE_TID | TIME). */
struct sample_id {
	uint32_t pid, tid;
	uint64_t time;
};

static void decode(struct rec_perf *p, const struct perf_event_header *h,
		   rec_raw_fn *fn, void *ctx)
{
	const char *body = (const char *)(h + 1);
	size_t len = h->size - sizeof *h;
	struct sample_id id;
	uint32_t f[4];
	struct rec_raw r;
	if (len < sizeof id)
		return;
	memset(&r, 0, sizeof r);
	memcpy(&id, (const char *)h + h->size - sizeof id, sizeof id);
	r.time_ns = (int64_t)id.time;
	r.seq = p->seq++;
	r.pid = id.pid;
	r.tid = id.tid;
	switch (h->type) {
	case PERF_RECORD_SWITCH:
		r.kind = h->misc & PERF_RECORD_MISC_SWITCH_OUT ? REC_SWITCH_OUT
							      : REC_SWITCH_IN;
		r.preempted = !!(h->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		/* pid, ppid, tid, ptid, time */
		if (len < sizeof f + sizeof id)
			return;
		memcpy(f, body, sizeof f);
		r.kind = h->type == PERF_RECORD_FORK ? REC_FORK : REC_EXIT;
		r.pid = f[0];
		r.tid = f[2];
		r.parent_tid = f[3];
		break;
	case PERF_RECORD_COMM: {
		/* pid, tid, comm (NUL-terminated, padded) */
		if (len < 2 * sizeof f[0] + sizeof id)
			return;
		memcpy(f, body, 2 * sizeof f[0]);
		r.kind = REC_COMM;
		r.exec = !!(h->misc & PERF_RECORD_MISC_COMM_EXEC);
		r.pid = f[0];
		r.tid = f[1];
		size_t n = len - 2 * sizeof f[0] - sizeof id;
		if (n >= sizeof r.comm)
			n = sizeof r.comm - 1;
		memcpy(r.comm, body + 2 * sizeof f[0], n);
		r.comm[n] = '\0';
		break;
	}
	case PERF_RECORD_LOST: {
		uint64_t l[2]; /* id, lost */
		if (len >= sizeof l) {
			memcpy(l, body, sizeof l);
			p->lost += l[1];
		}
		return;
	}
	default:
		return;
	}
	fn(ctx, &r);
}

static void drain_ring(struct rec_perf *p, struct rec_ring *rg,
		       rec_raw_fn *fn, void *ctx)
{
	struct perf_event_mmap_page *m = rg->base;
	uint64_t head = __atomic_load_n(&m->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = m->data_tail;
	const char *data = (const char *)rg->base + m->data_offset;
	union {
		struct perf_event_header h;
		char bytes[256];
	} copy;
	while (tail + sizeof copy.h <= head) {
		size_t off = (size_t)(tail & (rg->size - 1));
		struct perf_event_header hh;
		memcpy(&hh, data + off, sizeof hh); /* 8-aligned: never wraps */
		if (hh.size < sizeof hh || tail + hh.size > head)
			break;
		size_t first = rg->size - off;
		if (hh.size <= sizeof copy.bytes) {
			/* a copy: aligned, and whole if it wraps */
			size_t n = hh.size < first ? hh.size : first;
			memcpy(copy.bytes, data + off, n);
			memcpy(copy.bytes + n, data, hh.size - n);
			decode(p, &copy.h, fn, ctx);
		}
		tail += hh.size;
	}
	__atomic_store_n(&m->data_tail, tail, __ATOMIC_RELEASE);
}

void cfsbw_host__perf_drain(struct rec_perf *p, rec_raw_fn *fn, void *ctx)
{
	for (unsigned c = 0; c < p->nr_cpus; c++)
		if (p->rings[c].fd >= 0)
			drain_ring(p, &p->rings[c], fn, ctx);
}

void cfsbw_host__perf_wait(struct rec_perf *p, int also_fd, int timeout_ms)
{
	struct pollfd pfd[65];
	nfds_t n = 0;
	if (also_fd >= 0)
		pfd[n++] = (struct pollfd){also_fd, POLLIN, 0};
	for (unsigned c = 0; c < p->nr_cpus && n < 65; c++)
		if (p->rings[c].fd >= 0)
			pfd[n++] = (struct pollfd){p->rings[c].fd, POLLIN, 0};
	poll(pfd, n, timeout_ms);
}

void cfsbw_host__perf_close(struct rec_perf *p)
{
	for (unsigned c = 0; p->rings && c < p->nr_cpus; c++)
		if (p->rings[c].fd >= 0)
			munmap(p->rings[c].base, p->rings[c].map_len);
	for (size_t i = 0; i < p->nr_fds; i++)
		close(p->fds[i]);
	free(p->rings);
	free(p->fds);
	memset(p, 0, sizeof *p);
}
