/*
 * override_new.c - C++ operator new and delete, every standard form, on
 * the uvm_malloc family, written in C under their mangled names so that
 * the preload library needs no C++ runtime: a C program under LD_PRELOAD
 * does not load libstdc++, libm and libgcc_s (1.2 MB of RSS, and their
 * relocations at every start).
 *
 * new follows the standard: on failure call the new_handler and retry,
 * throw std::bad_alloc when there is none.  Both come from the program's
 * libstdc++, looked up when an allocation first fails (a program that
 * calls operator new has it loaded).  The exception unwinds through these
 * frames: this file is compiled with unwind tables (-fexceptions).  The
 * nothrow forms return NULL when there is no handler; with one (which may
 * throw bad_alloc itself), they call libstdc++'s own nothrow new, whose
 * try/catch around our throwing new turns the exception into NULL.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "api.h"
#include "uvmalloc.h"

#define EXPORT __attribute__((visibility("default")))

typedef void (*new_handler)(void);

/* A libstdc++ function of the running program, or NULL when it has none. */
static void *cxx(const char *name) { return dlsym(RTLD_DEFAULT, name); }

static new_handler current_handler(void)
{
	new_handler (*get)(void) = (new_handler (*)(void))cxx("_ZSt15get_new_handlerv");

	return get ? get() : NULL;
}

static __attribute__((noreturn)) void throw_bad_alloc(void)
{
	void (*throw_it)(void) = (void (*)(void))cxx("_ZSt17__throw_bad_allocv");
	static const char msg[] = "uvmalloc: operator new: out of memory, and no C++ runtime to throw std::bad_alloc\n";

	if (throw_it)
		throw_it();
	if (write(2, msg, sizeof(msg) - 1) < 0)
		abort();
	abort();
}

/* caller: the program's call of operator new, whom uvm_vmallocinfo and vminfo name for the block. */
static void *alloc(size_t size, size_t align, const void *caller)
{
	return align ? uvm_aligned_alloc(align, size ? size : 1) : uvm_malloc_caller(size, caller);
}

/* After a failed try: the new_handler, then a try again, until one succeeds or there is no handler. */
static __attribute__((noinline)) void *retry_or_throw(size_t size, size_t align, const void *caller)
{
	for (;;) {
		new_handler handler = current_handler();
		void *p;

		if (!handler)
			throw_bad_alloc();
		handler();
		if ((p = alloc(size, align, caller)))
			return p;
	}
}

static void *new_failed(size_t size, const void *caller) { return retry_or_throw(size, 0, caller); }

/* The nothrow forms: next is the mangled name of the same form in libstdc++, t the caller's std::nothrow. */
static void *alloc_or_null(size_t size, size_t align, const void *t, const char *next, const void *caller)
{
	void *p = alloc(size, align, caller), *f;

	if (p || !current_handler() || !(f = dlsym(RTLD_NEXT, next)))
		return p;
	if (align)
		return ((void *(*)(size_t, size_t, const void *))f)(size, align, t);
	return ((void *(*)(size_t, const void *))f)(size, t);
}

/*
 * new and new[] are uvm_malloc's hits with nothing between but a jump: the
 * failure path goes in as an argument (uvm__malloc_or).  The aligned forms,
 * rarer, try first and test.
 */
EXPORT void *_Znwm(size_t n) { return uvm__malloc_or(n, new_failed); }
EXPORT void *_Znam(size_t n) { return uvm__malloc_or(n, new_failed); }

#define NEW_ALIGNED(n, a)                                           \
	do {                                                        \
		void *p = alloc(n, a, CALLER());                    \
		return __builtin_expect(p != NULL, 1) ? p : retry_or_throw(n, a, CALLER()); \
	} while (0)

EXPORT void *_ZnwmSt11align_val_t(size_t n, size_t a) { NEW_ALIGNED(n, a); }
EXPORT void *_ZnamSt11align_val_t(size_t n, size_t a) { NEW_ALIGNED(n, a); }
EXPORT void *_ZnwmRKSt9nothrow_t(size_t n, const void *t) { return alloc_or_null(n, 0, t, "_ZnwmRKSt9nothrow_t", CALLER()); }
EXPORT void *_ZnamRKSt9nothrow_t(size_t n, const void *t) { return alloc_or_null(n, 0, t, "_ZnamRKSt9nothrow_t", CALLER()); }
EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t a, const void *t)
{
	return alloc_or_null(n, a, t, "_ZnwmSt11align_val_tRKSt9nothrow_t", CALLER());
}
EXPORT void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t a, const void *t)
{
	return alloc_or_null(n, a, t, "_ZnamSt11align_val_tRKSt9nothrow_t", CALLER());
}

/*
 * delete, delete[], each with nothrow, size, alignment, and size and
 * alignment: all the same free.  In the preload library each is uvm_free
 * itself under its name (preload/meson.build); these serve the archive.
 */
EXPORT void _ZdlPv(void *p) { uvm_free(p); }
EXPORT void _ZdaPv(void *p) { uvm_free(p); }
EXPORT void _ZdlPvRKSt9nothrow_t(void *p, const void *t) { (void)t; uvm_free(p); }
EXPORT void _ZdaPvRKSt9nothrow_t(void *p, const void *t) { (void)t; uvm_free(p); }
EXPORT void _ZdlPvm(void *p, size_t n) { (void)n; uvm_free(p); }
EXPORT void _ZdaPvm(void *p, size_t n) { (void)n; uvm_free(p); }
EXPORT void _ZdlPvSt11align_val_t(void *p, size_t a) { (void)a; uvm_free(p); }
EXPORT void _ZdaPvSt11align_val_t(void *p, size_t a) { (void)a; uvm_free(p); }
EXPORT void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t a, const void *t) { (void)a, (void)t; uvm_free(p); }
EXPORT void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t a, const void *t) { (void)a, (void)t; uvm_free(p); }
EXPORT void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t a) { (void)n, (void)a; uvm_free(p); }
EXPORT void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t a) { (void)n, (void)a; uvm_free(p); }
