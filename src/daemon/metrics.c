/*
 * metrics.c - Prometheus text exposition of every group's cpu.stat and
 * usage (cfsbw daemon --metrics HOST:PORT, served at /metrics), under the
 * names cAdvisor gives the kernel's figures, so that existing dashboards
 * and alerts work: container_cpu_cfs_periods_total,
 * container_cpu_cfs_throttled_periods_total,
 * container_cpu_cfs_throttled_seconds_total and
 * container_cpu_usage_seconds_total, each with a "group" label (the path).
 *
 * A minimal HTTP/1.0 server on the driver's thread: one request per
 * connection, answered when its header is complete, then closed.  A
 * connection that sends more than a header's worth, or stalls while the
 * answer is written, is dropped.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon/daemon_int.h"

struct metric {
	const char *name, *help;
};

#define METRIC_MAP(X)                                                          \
	X(PERIODS, "container_cpu_cfs_periods_total",                          \
	  "Number of elapsed enforcement period intervals.")                   \
	X(THROTTLED_PERIODS, "container_cpu_cfs_throttled_periods_total",      \
	  "Number of throttled period intervals.")                             \
	X(THROTTLED_SECONDS, "container_cpu_cfs_throttled_seconds_total",      \
	  "Total time duration the group has been throttled.")                 \
	X(USAGE_SECONDS, "container_cpu_usage_seconds_total",                  \
	  "Cumulative cpu time consumed by the group's processes.")

enum metric_id {
#define METRIC_ENUM(id, name, help) METRIC_##id,
	METRIC_MAP(METRIC_ENUM)
#undef METRIC_ENUM
	NR_METRICS
};

static const struct metric metrics[] = {
#define METRIC_ENTRY(id, name, help) {name, help},
	METRIC_MAP(METRIC_ENTRY)
#undef METRIC_ENTRY
};

static void print_value(struct cfsbw_daemon *d, struct cfsbw_group *g,
			enum metric_id m, struct cfsbw_daemon__buf *out)
{
	struct cfsbw_stats s;
	cfsbw_group_stats(g, &s);
	cfsbw_daemon__buf_printf(out, "%s{group=\"%s\"} ", metrics[m].name,
				 cfsbw_group_path(g));
	switch (m) {
	case METRIC_PERIODS:
		cfsbw_daemon__buf_printf(out, "%" PRIu64 "\n", s.nr_periods);
		break;
	case METRIC_THROTTLED_PERIODS:
		cfsbw_daemon__buf_printf(out, "%" PRIu64 "\n", s.nr_throttled);
		break;
	case METRIC_THROTTLED_SECONDS:
		cfsbw_daemon__buf_printf(out, "%.9f\n",
					 (double)s.throttled_time / 1e9);
		break;
	case METRIC_USAGE_SECONDS: {
		uint64_t ns = d->drv && d->drv->usage_ns
				      ? d->drv->usage_ns(d->drv_ctx, g)
				      : 0;
		cfsbw_daemon__buf_printf(out, "%.9f\n", (double)ns / 1e9);
		break;
	}
	case NR_METRICS:
		break;
	}
	for (struct cfsbw_group *c = cfsbw_group_first_child(g); c;
	     c = cfsbw_group_next_sibling(c))
		print_value(d, c, m, out);
}

/* The exposition text of every group (group paths need no escaping: the
 * core allows only [A-Za-z0-9_.-] and '/'). */
static void exposition(struct cfsbw_daemon *d, struct cfsbw_daemon__buf *out)
{
	for (unsigned m = 0; m < NR_METRICS; m++) {
		cfsbw_daemon__buf_printf(out, "# HELP %s %s\n# TYPE %s counter\n",
					 metrics[m].name, metrics[m].help,
					 metrics[m].name);
		print_value(d, cfsbw_tree_root(d->tree), (enum metric_id)m, out);
	}
}

struct cfsbw_daemon__http_conn {
	struct cfsbw_daemon__conn conn; /* first: on d->metrics_conns */
	size_t len;
	char req[2048];
};

static void conn_close(struct cfsbw_daemon__http_conn *c)
{
	cfsbw_daemon__conn_close(&c->conn.d->metrics_conns, &c->conn);
}

static void conn_reply(struct cfsbw_daemon__http_conn *c)
{
	struct cfsbw_daemon__buf body = {0};
	const char *status = "200 OK";
	if (!strncmp(c->req, "GET /metrics ", 13) ||
	    !strncmp(c->req, "GET /metrics?", 13))
		exposition(c->conn.d, &body);
	else {
		status = "404 Not Found";
		cfsbw_daemon__buf_printf(&body, "cfsbw serves /metrics\n");
	}
	struct cfsbw_daemon__buf out = {0};
	cfsbw_daemon__buf_printf(&out,
				 "HTTP/1.0 %s\r\nContent-Type: text/plain; "
				 "version=0.0.4; charset=utf-8\r\n"
				 "Content-Length: %zu\r\nConnection: close\r\n\r\n",
				 status, body.len);
	cfsbw_daemon__buf_add(&out, body.text ? body.text : "", body.len);
	/* The socket is non-blocking: an answer that does not fit the send
	 * buffer at once is cut short (a scraper then retries). */
	size_t off = 0;
	while (!out.failed && off < out.len) {
		ssize_t n = send(c->conn.fd, out.text + off, out.len - off,
				 MSG_NOSIGNAL);
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	cfsbw_daemon__buf_free(&out);
	cfsbw_daemon__buf_free(&body);
	conn_close(c);
}

static void on_conn_readable(void *ctx, int fd)
{
	struct cfsbw_daemon__http_conn *c = ctx;
	ssize_t n = cfsbw_daemon__recv(fd, c->req + c->len,
				       sizeof c->req - 1 - c->len);
	if (n < 0)
		conn_close(c);
	if (n <= 0)
		return;
	c->len += (size_t)n;
	c->req[c->len] = '\0';
	if (strstr(c->req, "\r\n\r\n") || strstr(c->req, "\n\n"))
		conn_reply(c);
	else if (c->len == sizeof c->req - 1)
		conn_close(c);
}

static void on_metrics_readable(void *ctx, int fd)
{
	struct cfsbw_daemon *d = ctx;
	cfsbw_daemon__accept(d, fd, sizeof(struct cfsbw_daemon__http_conn),
			     on_conn_readable, &d->metrics_conns);
}

int cfsbw_daemon_metrics_listen(struct cfsbw_daemon *d, const char *addr)
{
	char host[256];
	const char *colon = strrchr(addr, ':');
	char *end;
	if (!colon || (size_t)(colon - addr) >= sizeof host)
		return -EINVAL;
	long port = strtol(colon + 1, &end, 10);
	if (*end || port <= 0 || port > 65535)
		return -EINVAL;
	memcpy(host, addr, (size_t)(colon - addr));
	host[colon - addr] = '\0';
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		return -EINVAL;
	int fd = cfsbw_daemon__listen_on(d, (const struct sockaddr *)&sa,
					 sizeof sa, 16, on_metrics_readable);
	if (fd < 0)
		return fd;
	d->metrics_fd = fd;
	return 0;
}

void cfsbw_daemon__metrics_close(struct cfsbw_daemon *d)
{
	while (d->metrics_conns)
		cfsbw_daemon__conn_close(&d->metrics_conns, d->metrics_conns);
	cfsbw_daemon__unlisten(d, &d->metrics_fd);
}
