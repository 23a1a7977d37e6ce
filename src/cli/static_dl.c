/*
 * static_dl.c - the statically linked command's dynamic loader: none.
 *
 * libfuse3 calls dlopen() only to load a module named by "-o modules=",
 * which cfsbw never passes.  Linked statically, that call would pull in
 * the C library's dlopen, which can only work with the very glibc the
 * binary was built against, and the linker says so at every build.  The
 * command's link wraps the four calls (Makefile, STATIC_DL) so that they
 * land here: a module load fails with a message saying why, and nothing
 * of the C library's loader is linked.  The __wrap_ names are the ones
 * the linker's --wrap option defines; a dynamic link does not wrap, and
 * then nothing calls these.
 */
#include <stddef.h>

void *__wrap_dlopen(const char *file, int mode);
void *__wrap_dlsym(void *handle, const char *name);
int __wrap_dlclose(void *handle);
char *__wrap_dlerror(void);

static char why[] = "cfsbw is linked statically: it loads no FUSE module";

void *__wrap_dlopen(const char *file, int mode)
{
	(void)file;
	(void)mode;
	return NULL;
}

void *__wrap_dlsym(void *handle, const char *name)
{
	(void)handle;
	(void)name;
	return NULL;
}

int __wrap_dlclose(void *handle)
{
	(void)handle;
	return 0;
}

char *__wrap_dlerror(void)
{
	return why;
}
