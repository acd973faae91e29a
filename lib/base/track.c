/*
 * track.c - what a memory checker is told (track.h): valgrind's client
 * requests or AddressSanitizer's poisoning, for -Dtrack=valgrind or
 * -Dtrack=asan only.  The entry points that use them are tracked.c's.
 */
#include "track.h"

#include <stdint.h>
#include <string.h>

#ifdef UVM_TRACK_VALGRIND
#include <valgrind/memcheck.h>

/* The library's own accesses to freed blocks and to its hidden metadata are not the program's errors. */
void track_quiet(void) { VALGRIND_DISABLE_ERROR_REPORTING; }
void track_loud(void) { VALGRIND_ENABLE_ERROR_REPORTING; }
static void hide(void *p, size_t n) { VALGRIND_MAKE_MEM_NOACCESS(p, n); }
static void show(void *p, size_t n) { VALGRIND_MAKE_MEM_DEFINED(p, n); }

void track_block_made(void *p, size_t size, size_t usable)
{
	hide(p, usable); /* the slack past size stays so */
	VALGRIND_MALLOCLIKE_BLOCK(p, size, 0, 0);
}

void track_block_gone(void *p, size_t usable)
{
	(void)usable;
	VALGRIND_FREELIKE_BLOCK(p, 0);
}

/* A block's bytes into another: their definedness goes with them, and the old one's slack reads unreported. */
void track_copy(void *to, void *from, size_t bytes, size_t have)
{
	(void)have;
	track_quiet();
	memcpy(to, from, bytes);
	track_loud();
}

/*
 * Metadata is not addressable to memcheck, so its leak scan does not find
 * our area objects' pointers to live blocks (every large block leaked would
 * read as still reachable); our own accesses to it are not reported.
 */
void track_meta(void *p, size_t size)
{
	hide(p, size);
	VALGRIND_DISABLE_ADDR_ERROR_REPORTING_IN_RANGE(p, size);
}

void track_meta_gone(void *p, size_t size) { VALGRIND_ENABLE_ADDR_ERROR_REPORTING_IN_RANGE(p, size); }

/*
 * Last of the library's destructors (the lowest priority runs last): the
 * metadata lives to the end, and memcheck warns at exit of every range
 * still excused.  Its accesses from here on (glibc's __libc_freeres at
 * exit frees through us) run inside the entry points' quiet spells.
 */
__attribute__((destructor(101))) static void meta_excused_no_more(void)
{
	VALGRIND_ENABLE_ADDR_ERROR_REPORTING_IN_RANGE(0, (uintptr_t)1 << 47);
}

#else /* UVM_TRACK_ASAN */

/*
 * Weak: the sanitizer's runtime comes with the program (-fsanitize=address);
 * a program without it runs the library untracked.  The library itself is
 * not instrumented, so its own accesses to poisoned memory are not checked.
 */
void __asan_poison_memory_region(void const volatile *addr, size_t size) __attribute__((weak));
void __asan_unpoison_memory_region(void const volatile *addr, size_t size) __attribute__((weak));

void track_quiet(void) {}
void track_loud(void) {}

static void hide(void *p, size_t n)
{
	if (__asan_poison_memory_region)
		__asan_poison_memory_region(p, n);
}

static void show(void *p, size_t n)
{
	if (__asan_unpoison_memory_region)
		__asan_unpoison_memory_region(p, n);
}

void track_block_made(void *p, size_t size, size_t usable)
{
	hide(p, usable);
	show(p, size);
}

void track_block_gone(void *p, size_t usable) { hide(p, usable); }

/* The old block made addressable whole first: the copy runs through the sanitizer's memcpy. */
void track_copy(void *to, void *from, size_t bytes, size_t have)
{
	show(from, have);
	memcpy(to, from, bytes);
}

void track_meta(void *p, size_t size) { (void)p, (void)size; }
void track_meta_gone(void *p, size_t size) { (void)p, (void)size; }

#endif

void track_unused(void *p, size_t size) { hide(p, size); }

