/*
 * test_daemon_tree.c - cfsbw daemon's control tree (SPEC section 8) through
 * its two doors: the FUSE mount, with the system calls a shell makes
 * (mkdir, rmdir, open with O_TRUNC then write, read), and the socket, with
 * `cfsbw ctl`.  Every file, every errno, the exit statuses, the state file
 * across a restart and the metrics.  Tests that need /dev/fuse say so and
 * are skipped where it is missing; the socket tests run everywhere.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "harness.h"
#include "test_daemon.h"

/* Stops the daemon, checks that it exited 0, cleans up. */
#define STOP(m)                                                                \
	do {                                                                   \
		int rc_ = dmn_stop(m);                                         \
		dmn_clean(m);                                                  \
		ASSERT_INT(rc_, ==, 0);                                        \
	} while (0)

#define ASSERT_FILE(m, group, file, want)                                      \
	do {                                                                   \
		char got_[1024];                                               \
		ASSERT_INT(dmn_read(m, group, file, got_, sizeof got_), >=, 0);\
		ASSERT_STR(got_, want);                                        \
	} while (0)

static bool has_entry(const char *dir, const char *name)
{
	DIR *d = opendir(dir);
	if (!d)
		return false;
	bool found = false;
	for (struct dirent *e; (e = readdir(d));)
		found |= !strcmp(e->d_name, name);
	closedir(d);
	return found;
}

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

TEST(mount_files_and_defaults_v4, "SPEC 8, R1")
{
	SKIP_WITHOUT_FUSE();
	struct dmn m;
	START(&m, NULL);
	ASSERT_INT(mkdir(dmn_path(&m, "/web", NULL), 0755), ==, 0);
	static const char *const files[] = {
		"cpu.cfs_quota_us", "cpu.cfs_period_us", "cpu.shares",
		"cpu.stat",         "cpu.max",           "cgroup.procs",
		"tasks",            "cpuacct.usage"};
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		ASSERT_TRUE(has_entry(dmn_path(&m, "/", NULL), files[i]));
		ASSERT_TRUE(has_entry(dmn_path(&m, "/web", NULL), files[i]));
	}
	/* 8 files in a leaf; the root also has the directory web. */
	ASSERT_INT(count_entries(dmn_path(&m, "/web", NULL)), ==, 8);
	ASSERT_INT(count_entries(dmn_path(&m, "/", NULL)), ==, 9);
	ASSERT_FALSE(has_entry(dmn_path(&m, "/web", NULL), "cpu.cfs_burst_us"));
	ASSERT_FILE(&m, "/web", "cpu.cfs_quota_us", "-1\n");
	ASSERT_FILE(&m, "/web", "cpu.cfs_period_us", "500000\n");
	ASSERT_FILE(&m, "/web", "cpu.shares", "1024\n");
	ASSERT_FILE(&m, "/web", "cpu.max", "max 500000\n");
	ASSERT_FILE(&m, "/web", "cpu.stat",
		    "nr_periods 0\nnr_throttled 0\nthrottled_time 0\n");
	ASSERT_FILE(&m, "/web", "cpuacct.usage", "0\n");
	ASSERT_FILE(&m, "/web", "cgroup.procs", "");
	ASSERT_FILE(&m, "/web", "tasks", "");
	/* cpu.stat and cpuacct.usage are 0444, the rest 0644. */
	struct stat st;
	ASSERT_INT(stat(dmn_path(&m, "/web", "cpu.stat"), &st), ==, 0);
	ASSERT_INT(st.st_mode & 0777, ==, 0444);
	ASSERT_INT(stat(dmn_path(&m, "/web", "cpu.cfs_quota_us"), &st), ==, 0);
	ASSERT_INT(st.st_mode & 0777, ==, 0644);
	STOP(&m);
}

TEST(mount_files_and_defaults_upstream, "SPEC 8, R1, upstream")
{
	SKIP_WITHOUT_FUSE();
	struct dmn m;
	START(&m, "--policy", "upstream", NULL);
	ASSERT_INT(mkdir(dmn_path(&m, "/web", NULL), 0755), ==, 0);
	ASSERT_INT(count_entries(dmn_path(&m, "/web", NULL)), ==, 9);
	ASSERT_FILE(&m, "/web", "cpu.cfs_burst_us", "0\n");
	ASSERT_FILE(&m, "/web", "cpu.cfs_period_us", "100000\n");
	ASSERT_FILE(&m, "/web", "cpu.max", "max 100000\n");
	ASSERT_INT(dmn_write(&m, "/web", "cpu.cfs_quota_us", "50000\n"), ==, 0);
	ASSERT_INT(dmn_write(&m, "/web", "cpu.cfs_burst_us", "20000\n"), ==, 0);
	ASSERT_FILE(&m, "/web", "cpu.cfs_burst_us", "20000\n");
	/* R2: the burst is at most the quota. */
	ASSERT_INT(dmn_write(&m, "/web", "cpu.cfs_burst_us", "60000\n"), ==,
		   EINVAL);
	ASSERT_FILE(&m, "/web", "cpu.cfs_burst_us", "20000\n");
	STOP(&m);
}

TEST(mount_rejected_writes_change_nothing, "R2, SPEC 8")
{
	SKIP_WITHOUT_FUSE();
	struct dmn m;
	START(&m, NULL);
	ASSERT_INT(mkdir(dmn_path(&m, "/web", NULL), 0755), ==, 0);
	ASSERT_INT(dmn_write(&m, "/web", "cpu.cfs_quota_us", "50000\n"), ==, 0);
	/* echo 500 > cpu.cfs_quota_us: EINVAL in the writer, nothing changed. */
	ASSERT_INT(dmn_write(&m, "/web", "cpu.cfs_quota_us", "500\n"), ==,
		   EINVAL);
	ASSERT_FILE(&m, "/web", "cpu.cfs_quota_us", "50000\n");
	ASSERT_INT(dmn_write(&m, "/web", "cpu.cfs_quota_us", "abc\n"), ==,
		   EINVAL);
	ASSERT_INT(dmn_write(&m, "/web", "cpu.cfs_period_us", "999\n"), ==,
		   EINVAL);
	ASSERT_INT(dmn_write(&m, "/web", "cpu.cfs_period_us", "1000001\n"), ==,
		   EINVAL);
	ASSERT_INT(dmn_write(&m, "/web", "cpu.cfs_period_us",
			     "99999999999999999999999\n"),
		   ==, ERANGE);
	ASSERT_FILE(&m, "/web", "cpu.cfs_period_us", "500000\n");
	ASSERT_INT(dmn_write(&m, "/web", "cpu.shares", "1\n"), ==, EINVAL);
	ASSERT_FILE(&m, "/web", "cpu.shares", "1024\n");
	ASSERT_INT(dmn_write(&m, "/web", "cpu.max", "lots\n"), ==, EINVAL);
	ASSERT_FILE(&m, "/web", "cpu.max", "50000 500000\n");
	/* Read-only files: EINVAL, as the kernel's (root may open them). */
	ASSERT_INT(dmn_write(&m, "/web", "cpu.stat", "0\n"), ==, EINVAL);
	ASSERT_INT(dmn_write(&m, "/web", "cpuacct.usage", "0\n"), ==, EINVAL);
	ASSERT_INT(dmn_write(&m, "/web", "cgroup.procs", "abc\n"), ==, EINVAL);
	ASSERT_INT(dmn_write(&m, "/web", "tasks", "-3\n"), ==, EINVAL);
	/* The root group cannot be limited. */
	ASSERT_INT(dmn_write(&m, "/", "cpu.cfs_quota_us", "50000\n"), ==,
		   EINVAL);
	ASSERT_FILE(&m, "/", "cpu.cfs_quota_us", "-1\n");
	ASSERT_INT(dmn_stop(&m), ==, 0);
	/* The daemon's log named the file, the value and the rule. */
	char log[8192];
	slurp(m.log, log, sizeof log);
	dmn_clean(&m);
	ASSERT_TRUE(strstr(log, "/web/cpu.cfs_quota_us: '500' rejected: "
				"Invalid argument; R2:") != NULL);
}

TEST(mount_writes_read_back, "R2, SPEC 8")
{
	SKIP_WITHOUT_FUSE();
	struct dmn m;
	START(&m, NULL);
	ASSERT_INT(mkdir(dmn_path(&m, "/web", NULL), 0755), ==, 0);
	ASSERT_INT(dmn_write(&m, "/web", "cpu.cfs_quota_us", "50000\n"), ==, 0);
	ASSERT_FILE(&m, "/web", "cpu.max", "50000 500000\n");
	ASSERT_INT(dmn_write(&m, "/web", "cpu.max", "20000 100000\n"), ==, 0);
	ASSERT_FILE(&m, "/web", "cpu.cfs_quota_us", "20000\n");
	ASSERT_FILE(&m, "/web", "cpu.cfs_period_us", "100000\n");
	ASSERT_INT(dmn_write(&m, "/web", "cpu.cfs_quota_us", "-1\n"), ==, 0);
	ASSERT_FILE(&m, "/web", "cpu.max", "max 100000\n");
	ASSERT_INT(dmn_write(&m, "/web", "cpu.shares", "2048"), ==, 0);
	ASSERT_FILE(&m, "/web", "cpu.shares", "2048\n");
	/* Two values through one open file: each write(2) is one value. */
	int fd = open(dmn_path(&m, "/web", "cpu.cfs_quota_us"), O_WRONLY);
	ASSERT_INT(fd, >=, 0);
	ASSERT_INT(write(fd, "30000\n", 6), ==, 6);
	ASSERT_INT(write(fd, "40000\n", 6), ==, 6);
	close(fd);
	ASSERT_FILE(&m, "/web", "cpu.cfs_quota_us", "40000\n");
	STOP(&m);
}

TEST(mount_reads_in_pieces_are_one_snapshot, "SPEC 8")
{
	SKIP_WITHOUT_FUSE();
	struct dmn m;
	START(&m, NULL);
	char whole[1024], pieces[1024];
	ASSERT_INT(dmn_read(&m, "/", "cpu.stat", whole, sizeof whole), >, 0);
	int fd = open(dmn_path(&m, "/", "cpu.stat"), O_RDONLY);
	ASSERT_INT(fd, >=, 0);
	size_t len = 0;
	for (ssize_t n; (n = read(fd, pieces + len, 1)) > 0;)
		len += (size_t)n;
	pieces[len] = '\0';
	/* A read from offset 0 again takes a fresh snapshot. */
	char again[64];
	ssize_t n = pread(fd, again, 10, 0);
	close(fd);
	ASSERT_STR(pieces, whole);
	ASSERT_INT(n, ==, 10);
	ASSERT_INT(memcmp(again, whole, 10), ==, 0);
	STOP(&m);
}

TEST(mount_mkdir_rmdir_errnos, "SPEC 8")
{
	SKIP_WITHOUT_FUSE();
	struct dmn m;
	START(&m, NULL);
	ASSERT_INT(mkdir(dmn_path(&m, "/web", NULL), 0755), ==, 0);
	ASSERT_INT(mkdir(dmn_path(&m, "/web", NULL), 0755) ? errno : 0, ==,
		   EEXIST);
	ASSERT_INT(mkdir(dmn_path(&m, "/web", "cpu.stat"), 0755) ? errno : 0,
		   ==, EEXIST);
	ASSERT_INT(mkdir(dmn_path(&m, "/nope", "x"), 0755) ? errno : 0, ==,
		   ENOENT);
	ASSERT_INT(mkdir(dmn_path(&m, "/web", "a"), 0755), ==, 0);
	ASSERT_INT(mkdir(dmn_path(&m, "/web/a", "b"), 0755), ==, 0);
	/* Children keep a group: EBUSY, as the kernel's rmdir. */
	ASSERT_INT(rmdir(dmn_path(&m, "/web", NULL)) ? errno : 0, ==, EBUSY);
	ASSERT_INT(rmdir(dmn_path(&m, "/web/a", NULL)) ? errno : 0, ==, EBUSY);
	ASSERT_INT(rmdir(dmn_path(&m, "/web/a/b", NULL)), ==, 0);
	ASSERT_INT(rmdir(dmn_path(&m, "/web/a", NULL)), ==, 0);
	ASSERT_INT(rmdir(dmn_path(&m, "/web", NULL)), ==, 0);
	ASSERT_INT(rmdir(dmn_path(&m, "/web", NULL)) ? errno : 0, ==, ENOENT);
	ASSERT_INT(rmdir(dmn_path(&m, "/", "cpu.stat")) ? errno : 0, ==,
		   ENOTDIR);
	/* The daemon's files are not made or removed by hand. */
	ASSERT_INT(unlink(dmn_path(&m, "/", "cpu.stat")) ? errno : 0, ==,
		   EPERM);
	int fd = open(dmn_path(&m, "/", "notes"), O_WRONLY | O_CREAT, 0644);
	ASSERT_INT(fd < 0 ? errno : 0, ==, EPERM);
	/* A removed group is gone from the listing and the socket. */
	ASSERT_FALSE(has_entry(dmn_path(&m, "/", NULL), "web"));
	STOP(&m);
}

TEST(mount_follows_socket_changes, "SPEC 8")
{
	SKIP_WITHOUT_FUSE();
	struct dmn m;
	START(&m, NULL);
	struct ctl_result r;
	dmn_ctl(&m, &r, (const char *const[]){"mkdir", "/x", NULL});
	ASSERT_INT(r.exit_code, ==, 0);
	struct stat st;
	ASSERT_INT(stat(dmn_path(&m, "/x", NULL), &st), ==, 0);
	dmn_ctl(&m, &r, (const char *const[]){"set", "/x", "cpu.max",
					     "25000 50000", NULL});
	ASSERT_INT(r.exit_code, ==, 0);
	ASSERT_FILE(&m, "/x", "cpu.cfs_quota_us", "25000\n");
	dmn_ctl(&m, &r, (const char *const[]){"rmdir", "/x", NULL});
	ASSERT_INT(r.exit_code, ==, 0);
	ASSERT_INT(stat(dmn_path(&m, "/x", NULL), &st) ? errno : 0, ==, ENOENT);
	STOP(&m);
}

TEST(mount_procs_eperm_is_logged, "SPEC 8")
{
	SKIP_WITHOUT_FUSE();
	struct dmn m;
	START(&m, NULL);
	ASSERT_INT(mkdir(dmn_path(&m, "/web", NULL), 0755), ==, 0);
	/* The daemon itself can never be placed in a group. */
	char pid[32];
	snprintf(pid, sizeof pid, "%d\n", (int)m.pid);
	ASSERT_INT(dmn_write(&m, "/web", "cgroup.procs", pid), ==, EPERM);
	ASSERT_FILE(&m, "/web", "cgroup.procs", "");
	ASSERT_INT(dmn_stop(&m), ==, 0);
	char log[8192];
	slurp(m.log, log, sizeof log);
	dmn_clean(&m);
	char want[96];
	snprintf(want, sizeof want, "move of %d to /web refused (EPERM): ",
		 (int)m.pid);
	ASSERT_TRUE(strstr(log, want) != NULL);
}

TEST(ctl_errors_and_exit_statuses, "SPEC 8, R2")
{
	struct dmn m;
	START(&m, NULL);
	struct ctl_result r;
	dmn_ctl(&m, &r, (const char *const[]){"mkdir", "/web", NULL});
	ASSERT_INT(r.exit_code, ==, 0);
	/* A rejected value: 2, naming the file, the value and the rule. */
	dmn_ctl(&m, &r, (const char *const[]){"set", "/web", "cpu.cfs_quota_us",
					     "500", NULL});
	ASSERT_INT(r.exit_code, ==, 2);
	ASSERT_TRUE(strstr(r.err, "/web/cpu.cfs_quota_us: '500' rejected: "
				  "Invalid argument; R2:") != NULL);
	dmn_ctl(&m, &r, (const char *const[]){"set", "/web", "cpu.cfs_period_us",
					     "99999999999999999999999", NULL});
	ASSERT_INT(r.exit_code, ==, 2);
	ASSERT_TRUE(strstr(r.err, "Numerical result out of range") != NULL);
	dmn_ctl(&m, &r, (const char *const[]){"set", "/web", "cpu.stat", "0",
					     NULL});
	ASSERT_INT(r.exit_code, ==, 2);
	dmn_ctl(&m, &r, (const char *const[]){"get", "/web", "cpu.cfs_quota_us",
					     NULL});
	ASSERT_INT(r.exit_code, ==, 0);
	ASSERT_STR(r.out, "-1\n");
	/* Operations that fail: 1, naming the errno. */
	dmn_ctl(&m, &r, (const char *const[]){"mkdir", "/web", NULL});
	ASSERT_INT(r.exit_code, ==, 1);
	ASSERT_STR(r.err, "cfsbw ctl: mkdir /web: File exists\n");
	dmn_ctl(&m, &r, (const char *const[]){"mkdir", "/web/a", NULL});
	ASSERT_INT(r.exit_code, ==, 0);
	dmn_ctl(&m, &r, (const char *const[]){"rmdir", "/web", NULL});
	ASSERT_INT(r.exit_code, ==, 1);
	ASSERT_STR(r.err, "cfsbw ctl: rmdir /web: Device or resource busy\n");
	dmn_ctl(&m, &r, (const char *const[]){"rmdir", "/nope", NULL});
	ASSERT_INT(r.exit_code, ==, 1);
	ASSERT_STR(r.err, "cfsbw ctl: rmdir /nope: No such file or directory\n");
	dmn_ctl(&m, &r, (const char *const[]){"get", "/nope", "cpu.stat", NULL});
	ASSERT_INT(r.exit_code, ==, 1);
	dmn_ctl(&m, &r, (const char *const[]){"get", "/web", "cpu.nope", NULL});
	ASSERT_INT(r.exit_code, ==, 1);
	char pid[32];
	snprintf(pid, sizeof pid, "%d", (int)m.pid);
	dmn_ctl(&m, &r, (const char *const[]){"move", pid, "/nope", NULL});
	ASSERT_INT(r.exit_code, ==, 1);
	ASSERT_TRUE(strstr(r.err, "No such file or directory") != NULL);
	dmn_ctl(&m, &r, (const char *const[]){"move", pid, "/web", NULL});
	ASSERT_INT(r.exit_code, ==, 1);
	ASSERT_TRUE(strstr(r.err, "Operation not permitted") != NULL);
	dmn_ctl(&m, &r, (const char *const[]){"frobnicate", NULL});
	ASSERT_INT(r.exit_code, ==, 2);
	dmn_ctl(&m, &r, (const char *const[]){"ls", NULL});
	ASSERT_INT(r.exit_code, ==, 0);
	ASSERT_STR(r.out, "/\n/web\n/web/a\n");
	ASSERT_INT(dmn_stop(&m), ==, 0);
	/* No daemon: 1, naming the socket. */
	dmn_ctl(&m, &r, (const char *const[]){"ls", NULL});
	dmn_clean(&m);
	ASSERT_INT(r.exit_code, ==, 1);
	ASSERT_TRUE(strstr(r.err, "no daemon at") != NULL);
}

TEST(state_survives_a_restart, "SPEC 8, issue 15")
{
	struct dmn m;
	dmn_paths(&m);
	const char *const extra[] = {"--state", m.state, "--policy", "upstream",
				     NULL};
	ASSERT_INT(dmn_start(&m, extra), ==, 0);
	struct ctl_result r;
	dmn_ctl(&m, &r, (const char *const[]){"mkdir", "/tenant", NULL});
	dmn_ctl(&m, &r, (const char *const[]){"mkdir", "/tenant/web", NULL});
	dmn_ctl(&m, &r, (const char *const[]){"set", "/tenant", "cpu.max",
					     "100000 100000", NULL});
	dmn_ctl(&m, &r, (const char *const[]){"set", "/tenant/web",
					     "cpu.cfs_quota_us", "75000", NULL});
	dmn_ctl(&m, &r, (const char *const[]){"set", "/tenant/web",
					     "cpu.cfs_burst_us", "5000", NULL});
	ASSERT_INT(r.exit_code, ==, 0);
	dmn_ctl(&m, &r, (const char *const[]){"set", "/tenant/web", "cpu.shares",
					     "512", NULL});
	ASSERT_INT(dmn_stop(&m), ==, 0);
	char tmp[200], state[4096];
	snprintf(tmp, sizeof tmp, "%s.tmp", m.state);
	ASSERT_INT(access(tmp, F_OK), !=, 0); /* renamed, none left */
	slurp(m.state, state, sizeof state);
	ASSERT_TRUE(strstr(state, "mkdir /tenant\n") != NULL);
	ASSERT_TRUE(strstr(state, "set /tenant/web cpu.cfs_quota_us 75000\n") !=
		    NULL);
	ASSERT_INT(dmn_start(&m, extra), ==, 0);
	dmn_ctl(&m, &r, (const char *const[]){"ls", NULL});
	ASSERT_STR(r.out, "/\n/tenant\n/tenant/web\n");
	dmn_ctl(&m, &r, (const char *const[]){"get", "/tenant", "cpu.max", NULL});
	ASSERT_STR(r.out, "100000 100000\n");
	dmn_ctl(&m, &r, (const char *const[]){"get", "/tenant/web", "cpu.max",
					     NULL});
	ASSERT_STR(r.out, "75000 100000\n");
	dmn_ctl(&m, &r, (const char *const[]){"get", "/tenant/web",
					     "cpu.cfs_burst_us", NULL});
	ASSERT_STR(r.out, "5000\n");
	dmn_ctl(&m, &r, (const char *const[]){"get", "/tenant/web", "cpu.shares",
					     NULL});
	ASSERT_STR(r.out, "512\n");
	STOP(&m);
}

/* A free TCP port on 127.0.0.1 (bound, read back, released). */
static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t len = sizeof sa;
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return ntohs(sa.sin_port);
}

static int http_get(int port, const char *path, char *buf, size_t size)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	char req[256];
	int n = snprintf(req, sizeof req, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n",
			 path);
	if (write(fd, req, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	size_t len = 0;
	for (ssize_t k; (k = read(fd, buf + len, size - 1 - len)) > 0;)
		len += (size_t)k;
	buf[len] = '\0';
	close(fd);
	return (int)len;
}

TEST(metrics_exposition, "issue 15: metrics")
{
	int port = free_port();
	ASSERT_INT(port, >, 0);
	char addr[64];
	snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
	struct dmn m;
	dmn_paths(&m);
	const char *const extra[] = {"--metrics", addr, NULL};
	ASSERT_INT(dmn_start(&m, extra), ==, 0);
	struct ctl_result r;
	dmn_ctl(&m, &r, (const char *const[]){"mkdir", "/web", NULL});
	static char page[65536];
	ASSERT_INT(http_get(port, "/metrics", page, sizeof page), >, 0);
	ASSERT_TRUE(strncmp(page, "HTTP/1.0 200 OK\r\n", 17) == 0);
	static const char *const want[] = {
		"# TYPE container_cpu_cfs_periods_total counter\n",
		"container_cpu_cfs_periods_total{group=\"/web\"} 0\n",
		"container_cpu_cfs_throttled_periods_total{group=\"/web\"} 0\n",
		"container_cpu_cfs_throttled_seconds_total{group=\"/web\"} 0.0000",
		"container_cpu_usage_seconds_total{group=\"/\"} ",
		"container_cpu_usage_seconds_total{group=\"/web\"} 0.000000000\n",
	};
	for (size_t i = 0; i < sizeof want / sizeof *want; i++)
		if (!strstr(page, want[i])) {
			TEST_FAIL_AT("no '%s' in /metrics:\n%s", want[i], page);
			STOP(&m);
			return;
		}
	/* promtool (installed by .ci/run) checks the format as Prometheus
	 * would; where it is missing the checks above stand alone. */
	if (access("/usr/bin/promtool", X_OK) != 0)
		printf("    promtool is missing: the format is checked above only\n");
	else {
		char body[256];
		snprintf(body, sizeof body, "%s/metrics.txt", m.dir);
		FILE *f = fopen(body, "w");
		ASSERT_TRUE(f != NULL);
		fputs(strstr(page, "\r\n\r\n") + 4, f);
		fclose(f);
		char cmd[400];
		snprintf(cmd, sizeof cmd, "promtool check metrics < %s >/dev/null 2>&1",
			 body);
		int rc = system(cmd);
		unlink(body);
		ASSERT_INT(rc, ==, 0);
	}
	ASSERT_INT(http_get(port, "/other", page, sizeof page), >, 0);
	ASSERT_TRUE(strncmp(page, "HTTP/1.0 404", 12) == 0);
	STOP(&m);
}

TEST(top_prints_a_table_per_group, "issue 15: top")
{
	struct dmn m;
	START(&m, NULL);
	struct ctl_result r;
	dmn_ctl(&m, &r, (const char *const[]){"mkdir", "/web", NULL});
	dmn_ctl(&m, &r, (const char *const[]){"set", "/web", "cpu.max",
					     "25000 100000", NULL});
	char out[200];
	snprintf(out, sizeof out, "%s/top.out", m.dir);
	const char *argv[] = {host_bin(), "top", "--socket", m.sock, "-n", "2",
			      "-d", "0.2", NULL};
	int status;
	waitpid(dmn_spawn(argv, out, NULL), &status, 0);
	char text[4096];
	slurp(out, text, sizeof text);
	unlink(out);
	STOP(&m);
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_INT(WEXITSTATUS(status), ==, 0);
	/* Two tables; the second has rates: 0.00 CPU of a 0.25 limit. */
	const char *second = strstr(text + 1, "cfsbw top: 2 groups");
	ASSERT_TRUE(second != NULL);
	ASSERT_TRUE(strstr(second, "GROUP") != NULL);
	ASSERT_TRUE(strstr(second, "\n/web ") != NULL);
	ASSERT_TRUE(strstr(second, "0.00     0.25") != NULL);
	ASSERT_TRUE(strstr(second, "0.00      max") != NULL);
}

TEST_MAIN(TEST_ENTRY(mount_files_and_defaults_v4)
	  TEST_ENTRY(mount_files_and_defaults_upstream)
	  TEST_ENTRY(mount_rejected_writes_change_nothing)
	  TEST_ENTRY(mount_writes_read_back)
	  TEST_ENTRY(mount_reads_in_pieces_are_one_snapshot)
	  TEST_ENTRY(mount_mkdir_rmdir_errnos)
	  TEST_ENTRY(mount_follows_socket_changes)
	  TEST_ENTRY(mount_procs_eperm_is_logged)
	  TEST_ENTRY(ctl_errors_and_exit_statuses)
	  TEST_ENTRY(state_survives_a_restart)
	  TEST_ENTRY(metrics_exposition)
	  TEST_ENTRY(top_prints_a_table_per_group))
