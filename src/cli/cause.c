/*
 * cause.c - why cfsbw run could not start its command, named (issue 16,
 * item 5): exec says ENOENT both for a missing command and for a script
 * whose #! interpreter is missing, so after that failure the script's
 * first line is read.  (Why --pid cannot take a process in is the host
 * driver's cfsbw_host_place_reason().)
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/helpers.h"

/* The file execvp would run for name, into out; false if none. */
static bool find_command(const char *name, char *out, size_t size)
{
	if (strchr(name, '/')) {
		snprintf(out, size, "%s", name);
		return access(out, F_OK) == 0;
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *dir = path; *dir;) {
		size_t len = strcspn(dir, ":");
		snprintf(out, size, "%.*s%s%s", (int)len, dir, len ? "/" : "",
			 name);
		if (access(out, F_OK) == 0)
			return true;
		dir += len + (dir[len] == ':');
	}
	return false;
}

bool cli_exec_cause(const char *name, char *buf, size_t size)
{
	char file[4096], line[256];
	if (!find_command(name, file, sizeof file))
		return false;
	if (read_file_head(file, line, sizeof line) < 2 || line[0] != '#' ||
	    line[1] != '!')
		return false;
	/* The interpreter: the first word after #!, as the kernel reads it. */
	char *interp = line + 2 + strspn(line + 2, " \t");
	size_t len = strcspn(interp, " \t\n");
	bool dos = len > 0 && interp[len - 1] == '\r';
	interp[len - dos] = '\0';
	struct stat st;
	if (*interp && stat(interp, &st) == 0 && !dos)
		return false;
	snprintf(buf, size,
		 "%s: bad interpreter '%s%s' on its #! line: %s", file, interp,
		 dos ? "\\r" : "",
		 dos ? "the line ends in a carriage return (a DOS line ending)"
		     : "No such file or directory");
	return true;
}
