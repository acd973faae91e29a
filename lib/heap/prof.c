/*
 * prof.c - the heap profile (prof.h): the sampling decision, the unwinder,
 * the stack table that readers walk and the table of sampled blocks that
 * frees look up.  Samples are rare (one per rate bytes), so both tables sit
 * under one lock; the owner's path only ever counts down.
 */
#include "prof.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unwind.h>

#include "area.h"
#include "lock.h"
#include "options.h"
#include "os.h"
#include "trace.h"
#include "uvmalloc-descriptor.h"

volatile size_t uvm__prof_rate;

/* A sampled block: its address, the stack it counts in, and what it added there. */
struct prof_block {
	uintptr_t addr; /* 0: an empty slot */
	uint32_t stack;
	double bytes, count;
};

static uvm_lock_t lock = UVM_LOCK_INIT;
/*
 * Held across every unwind, and by fork: the unwinders keep locks of their
 * own (libunwind's cache, libgcc's object list) that a fork in the middle
 * of another thread's unwind would leave held in the child for good, and
 * the child's first sample would wait on one forever (tests/mt under load
 * hung so: a child in unw_backtrace).  Unwinds are serialised by it; they
 * are one per sample.
 */
static uvm_lock_t unwind_lock = UVM_LOCK_INIT;
static volatile uint64_t seq;         /* odd while the stack table changes */
static struct prof_stack *stacks;     /* PROF_STACKS entries, reserved at the first sample */
static volatile uint64_t nr_stacks;
static uint32_t *stack_index;         /* open addressing: stack number + 1, 0 = empty */
#define INDEX_SLOTS (2 * PROF_STACKS)
static struct prof_block *blocks;     /* open addressing by address, linear probing */
static size_t block_slots, nr_blocks;
static __thread bool unwinding __attribute__((tls_model("initial-exec")));

/* ----------------------------------------------------------- sampling */

/*
 * The two functions of libm the sampling needs, here so that a program we
 * are preloaded into maps no libm it did not ask for.  Their error, below
 * 1e-9, is far inside the sampling's own noise.
 */

/* ln(u) for u in (0, 1]: u = m * 2^e with m in [1, 2), ln m = 2 atanh((m - 1) / (m + 1)). */
static double ln(double u)
{
	uint64_t bits;
	double m, s, s2, sum = 0;
	int e;

	memcpy(&bits, &u, sizeof(bits));
	e = (int)((bits >> 52) & 0x7ff) - 1023;
	bits = (bits & ~(0x7ffull << 52)) | (1023ull << 52);
	memcpy(&m, &bits, sizeof(m));
	s = (m - 1) / (m + 1), s2 = s * s; /* |s| < 1/3 */
	for (int k = 21; k >= 1; k -= 2)
		sum = sum * s2 + 1.0 / k;
	return e * 0.69314718055994530942 + 2 * s * sum;
}

/* 1 - exp(-x) for x in [0, 1), by its alternating series (no cancellation for small x). */
static double one_minus_exp_neg(double x)
{
	double term = x, sum = 0;

	for (int k = 1; k < 24; k++) {
		sum += term;
		term *= -x / (k + 1);
	}
	return sum;
}

/* A uniform draw in (0, 1] from the heap's own xorshift64*: no lock, no syscall. */
static double uniform(struct heap *h)
{
	uint64_t x = h->prof_rng ? h->prof_rng : ((uintptr_t)h * 0x9e3779b97f4a7c15ull) | 1;

	x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
	h->prof_rng = x;
	return (double)((x * 0x2545f4914f6cdd1dull) >> 11 | 1) * 0x1p-53;
}

/*
 * The countdown runs gap bytes, rate - 1 at most at a time: an allocation
 * of rate bytes or more then always runs it out, so the hits need no test
 * of their own for the sizes always sampled (a load, a compare and a jump
 * an area's hit: vmap.h's VA_LIVE_PARK has the pair's figures).  The rest
 * of the gap waits in prof_beyond: a countdown that ran out short of the
 * gap goes on with it, e^-1 / (1 - e^-1) = 0.58 calls more a sample.
 */
static void count_down(struct heap *h, long gap, size_t rate)
{
	long most = rate ? (long)rate - 1 : gap;

	h->prof_left = gap < most ? gap : most;
	h->prof_beyond = gap - h->prof_left;
}

static void reseed(struct heap *h, size_t rate)
{
	double gap = rate ? -ln(uniform(h)) * (double)rate : PROF_RECHECK;

	h->prof_rate = rate;
	count_down(h, gap < 0x1p62 ? (long)gap : (long)1 << 62, rate);
}

bool prof_take(struct heap *h, size_t size)
{
	size_t rate = uvm__prof_rate;
	bool current = rate == h->prof_rate;
	long left = h->prof_left + h->prof_beyond; /* of the gap */
	bool take = rate && !unwinding && (current ? left < 0 || size >= rate : size >= rate);

	if (left >= 0 && current) {
		count_down(h, left, rate);
		return take;
	}
	reseed(h, rate);
	/*
	 * The countdown runs out every PROF_RECHECK bytes even with sampling
	 * off: the one slow path of a thread whose mallocs all hit its slabs'
	 * hands, where it looks at the idle threads' decay.
	 */
	pcp_decay_maybe();
	return take;
}

/* The probability that an allocation of size bytes was sampled at rate. */
static double sampled_share(size_t size, size_t rate)
{
	return size >= rate ? 1.0 : one_minus_exp_neg((double)size / (double)rate);
}

/* ----------------------------------------------------------- unwinding */

/*
 * This library's code: the executable segments of the shared object that
 * holds it and of every module named libuvmalloc* (the preload library's
 * malloc and operator new).  Leading frames there are ours.
 */
#define OWN_RANGES 8
static struct {
	uintptr_t lo[OWN_RANGES], hi[OWN_RANGES];
	unsigned n;
} own;

static int find_own(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *name = info->dlpi_name ? info->dlpi_name : "", *base = strrchr(name, '/') ? strrchr(name, '/') + 1 : name;
	uintptr_t self = (uintptr_t)arg;
	bool holds = false;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		holds |= ph->p_type == PT_LOAD && self >= lo && self < lo + ph->p_memsz;
	}
	/* Linked into the program itself (a static link): its frames are the program's too, so none is skipped. */
	if (!name[0] || (!holds && strncmp(base, "libuvmalloc", 11)))
		return 0;
	for (int i = 0; i < info->dlpi_phnum && own.n < OWN_RANGES; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			own.lo[own.n] = info->dlpi_addr + ph->p_vaddr;
			own.hi[own.n++] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		}
	}
	return 0;
}

/*
 * The unwinder, found at the first sample rather than linked, so that a C
 * program we are preloaded into maps neither library unless it profiles:
 * libunwind's unw_backtrace where libunwind8 is installed (it caches each
 * frame's rule: 0.35 us per sample here against 3 us), else libgcc's
 * _Unwind_Backtrace, which parses the CFI of every frame every time
 * (UVM_PROF_UNWIND=libgcc chooses it where libunwind is installed).  Both
 * read DWARF CFI, so programs without frame pointers unwind, and neither
 * allocates on its way (jemalloc and tcmalloc call them from malloc too).
 * A static program has no dlopen: its samples have no stack.
 */
typedef _Unwind_Reason_Code (*backtrace_fn)(_Unwind_Trace_Fn, void *);
static backtrace_fn backtrace_of;
static _Unwind_Ptr (*get_ip)(struct _Unwind_Context *);
static int (*unw_backtrace_of)(void **frames, int size);
static _Atomic int unwinder_state; /* 0 unknown, 1 being found, 2 found (or known absent) */

static void unwinder_find(void)
{
	void *unw = option(OPT_PROF_UNWIND) == UNWIND_AUTO ? dlopen("libunwind.so.8", RTLD_NOW | RTLD_LOCAL) : NULL;
	void *lib = unw ? NULL : dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);

	if (unw)
		unw_backtrace_of = (int (*)(void **, int))dlsym(unw, "unw_backtrace");
	if (unw && !unw_backtrace_of)
		lib = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);

	get_ip = lib ? (_Unwind_Ptr(*)(struct _Unwind_Context *))dlsym(lib, "_Unwind_GetIP") : NULL;
	if (get_ip)
		backtrace_of = (backtrace_fn)dlsym(lib, "_Unwind_Backtrace");
	dl_iterate_phdr(find_own, (void *)(uintptr_t)prof_record);
}

/*
 * Whether the unwinder is known; false while another thread is still
 * finding it: a sample then goes without a stack rather than wait, since
 * that thread's dlopen may wait for a loader lock held by a thread that is
 * sampling in a constructor.
 */
static bool unwinder_known(void)
{
	int expect = 0;

	if (atomic_load_explicit(&unwinder_state, memory_order_acquire) == 2)
		return true;
	if (!atomic_compare_exchange_strong(&unwinder_state, &expect, 1))
		return false;
	unwinder_find();
	atomic_store_explicit(&unwinder_state, 2, memory_order_release);
	return true;
}

static bool is_own(uintptr_t ip)
{
	for (unsigned i = 0; i < own.n; i++)
		if (ip >= own.lo[i] && ip < own.hi[i])
			return true;
	return false;
}

struct unwind_state {
	uint64_t *frames;
	unsigned n;
};

static _Unwind_Reason_Code unwind_one(struct _Unwind_Context *ctx, void *arg)
{
	struct unwind_state *st = arg;
	uintptr_t ip = get_ip(ctx);

	if (!ip)
		return _URC_END_OF_STACK;
	if (!st->n && is_own(ip))
		return _URC_NO_REASON;
	st->frames[st->n++] = ip;
	return st->n == PROF_DEPTH ? _URC_END_OF_STACK : _URC_NO_REASON;
}

static unsigned unwind(uint64_t *frames)
{
	struct unwind_state st = { frames, 0 };

	if (!unwinder_known())
		return 0;
	if (unw_backtrace_of) {
		void *ips[PROF_DEPTH + 16]; /* room for our own frames, left out */
		int n = unw_backtrace_of(ips, PROF_DEPTH + 16), i = 0;

		while (i < n && is_own((uintptr_t)ips[i]))
			i++;
		for (; i < n && st.n < PROF_DEPTH; i++)
			frames[st.n++] = (uintptr_t)ips[i];
		return st.n;
	}
	if (backtrace_of)
		backtrace_of(unwind_one, &st);
	return st.n;
}

static uint64_t stack_hash(const uint64_t *frames, unsigned n)
{
	uint64_t h = 0xcbf29ce484222325ull ^ n;

	for (unsigned i = 0; i < n; i++)
		h = (h ^ frames[i]) * 0x100000001b3ull, h ^= h >> 29;
	return h;
}

/* ------------------------------------------------------------- tables */

/* Reserve the stack table and its index at the first sample (lock held): false if the kernel refuses. */
static bool tables_ready(void)
{
	void *s, *x;

	if (stacks)
		return true;
	s = mmap(NULL, PROF_STACKS * sizeof(*stacks), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	x = mmap(NULL, INDEX_SLOTS * sizeof(*stack_index), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (s == MAP_FAILED || x == MAP_FAILED) {
		if (s != MAP_FAILED)
			munmap(s, PROF_STACKS * sizeof(*stacks));
		if (x != MAP_FAILED)
			munmap(x, INDEX_SLOTS * sizeof(*stack_index));
		return false;
	}
	stack_index = x;
	__atomic_store_n(&stacks, (struct prof_stack *)s, __ATOMIC_RELEASE);
	return true;
}

/* The stack's entry, made when new (the last entry, frameless, once the table is full). */
static uint32_t stack_get(const uint64_t *frames, unsigned n, uint64_t hash)
{
	for (size_t i = hash;; i++) {
		uint32_t *slot = &stack_index[i & (INDEX_SLOTS - 1)];
		struct prof_stack *s;

		if (!*slot)
			break;
		s = &stacks[*slot - 1];
		if (s->hash == hash && s->depth == n && !memcmp(s->frames, frames, n * sizeof(*frames)))
			return *slot - 1;
	}
	if (nr_stacks == PROF_STACKS - 1) {
		nr_stacks = PROF_STACKS;
		return PROF_STACKS - 1;
	}
	if (nr_stacks == PROF_STACKS)
		return PROF_STACKS - 1;
	stacks[nr_stacks].hash = hash;
	stacks[nr_stacks].depth = n;
	memcpy(stacks[nr_stacks].frames, frames, n * sizeof(*frames));
	for (size_t i = hash;; i++)
		if (!stack_index[i & (INDEX_SLOTS - 1)]) {
			stack_index[i & (INDEX_SLOTS - 1)] = (uint32_t)nr_stacks + 1;
			break;
		}
	/* The entry is whole before a reader counts it. */
	__atomic_store_n(&nr_stacks, nr_stacks + 1, __ATOMIC_RELEASE);
	return (uint32_t)nr_stacks - 1;
}

static size_t block_home(uintptr_t addr) { return (size_t)((addr >> 12) * 0x9e3779b97f4a7c15ull >> 20); }

static void block_put(struct prof_block *table, size_t slots, const struct prof_block *b)
{
	for (size_t i = block_home(b->addr);; i++)
		if (!table[i & (slots - 1)].addr) {
			table[i & (slots - 1)] = *b;
			return;
		}
}

/* Room for one more block: the table doubles at half full.  False if the kernel refuses. */
static bool blocks_room(void)
{
	size_t slots = block_slots ? 2 * block_slots : 1024;
	struct prof_block *fresh;

	if (2 * (nr_blocks + 1) <= block_slots)
		return true;
	fresh = os_alloc_meta(slots * sizeof(*fresh)); /* metadata: a checker's leak scan must not see its addresses */
	if (!fresh)
		return false;
	for (size_t i = 0; i < block_slots; i++)
		if (blocks[i].addr)
			block_put(fresh, slots, &blocks[i]);
	if (blocks)
		os_free_meta(blocks, block_slots * sizeof(*blocks));
	blocks = fresh;
	block_slots = slots;
	return true;
}

/* Take the block at addr out (backward-shift deletion: no tombstones); false if it is not there. */
static bool block_take(uintptr_t addr, struct prof_block *out)
{
	size_t mask = block_slots - 1, i = block_home(addr);

	for (;; i++) {
		if (!block_slots || !blocks[i & mask].addr)
			return false;
		if (blocks[i & mask].addr == addr)
			break;
	}
	*out = blocks[i & mask];
	for (size_t j = i + 1;; j++) {
		struct prof_block *b = &blocks[j & mask];

		if (!b->addr)
			break;
		/* b may fill the hole at i if its home is not in (i, j]. */
		if (((j - block_home(b->addr)) & mask) >= ((j - i) & mask)) {
			blocks[i & mask] = *b;
			i = j;
		}
	}
	blocks[i & mask].addr = 0;
	nr_blocks--;
	return true;
}

static void table_write_begin(void) { __atomic_store_n(&seq, seq + 1, __ATOMIC_RELEASE); __atomic_thread_fence(__ATOMIC_RELEASE); }
static void table_write_end(void) { __atomic_store_n(&seq, seq + 1, __ATOMIC_RELEASE); }

/* ------------------------------------------------------ sample, drop */

/* A sampled block is the owner's to free the slow way: it must never look like a bin's or a list's. */
static void mark(struct vmap_area *va)
{
	va->flags |= VA_PROF;
	va->cache = NULL;
	atomic_store_explicit(&va->live, VA_LIVE, memory_order_relaxed);
}

void *prof_record(void *p, size_t size)
{
	struct vmap_area *va = p ? area_find((uintptr_t)p) : NULL;
	size_t rate = uvm__heap->prof_rate;
	uint64_t frames[PROF_DEPTH], hash;
	struct prof_block b = { .addr = (uintptr_t)p };
	struct prof_stack *s;
	unsigned n;

	if (!va)
		return p;
	uvm_lock(&unwind_lock);
	unwinding = true; /* finding the unwinder allocates (dlopen): those allocations go unsampled */
	n = unwind(frames);
	unwinding = false;
	uvm_unlock(&unwind_lock);
	hash = stack_hash(frames, n);
	b.bytes = (double)size / sampled_share(size, rate);
	b.count = b.bytes / (double)size;
	uvm_lock(&lock);
	if (!tables_ready() || !blocks_room()) {
		uvm_unlock(&lock);
		return p; /* no room: this one goes unsampled */
	}
	mark(va);
	b.stack = stack_get(frames, n, hash);
	s = &stacks[b.stack];
	table_write_begin();
	s->bytes += b.bytes;
	s->count += b.count;
	s->samples++;
	table_write_end();
	block_put(blocks, block_slots, &b);
	nr_blocks++;
	uvm_unlock(&lock);
	UVM_TRACE(prof_alloc, p, size, (uint64_t)b.bytes, s->hash, s->depth, s->frames);
	return p;
}

void prof_drop(struct vmap_area *va)
{
	struct prof_block b;
	bool found;

	va->flags &= ~VA_PROF;
	uvm_lock(&lock);
	found = block_take(va->va_start, &b);
	if (found) {
		struct prof_stack *s = &stacks[b.stack];

		table_write_begin();
		s->bytes = --s->samples ? s->bytes - b.bytes : 0; /* no drift left behind by the last block */
		s->count = s->samples ? s->count - b.count : 0;
		table_write_end();
	}
	uvm_unlock(&lock);
	if (found)
		UVM_TRACE(prof_free, va->va_start);
}

/* --------------------------------------------------------- the rest */

static void redraw(struct heap *h, void *arg) { (void)arg, h->prof_left = 0; }

static void set_rate(long long rate)
{
	uvm__prof_rate = (size_t)rate;
	heap_for_each_live(redraw, NULL);
}

void prof_init(void)
{
	long long rate = option(OPT_PROF_SAMPLE);

	uvm__prof_rate = (size_t)(rate || !option(OPT_LEAKS) ? rate : PROF_LEAKS_RATE);
	option_watch(OPT_PROF_SAMPLE, set_rate);
}

static int by_bytes(const void *a, const void *b)
{
	double x = ((const struct prof_stack *)a)->bytes, y = ((const struct prof_stack *)b)->bytes;

	return (x < y) - (x > y);
}

size_t prof_live_stacks(struct prof_stack *out, size_t max)
{
	size_t n = 0;

	uvm_lock(&lock);
	for (size_t i = 0; i < nr_stacks && n < max; i++)
		if (stacks[i].samples)
			out[n++] = stacks[i];
	uvm_unlock(&lock);
	qsort(out, n, sizeof(*out), by_bytes);
	return n;
}

void prof_fork_prepare(void)
{
	uvm_lock(&unwind_lock);
	uvm_lock(&lock);
}

void prof_fork_parent(void)
{
	uvm_unlock(&lock);
	uvm_unlock(&unwind_lock);
}

void prof_fork_child(void)
{
	uvm_lock_init(&lock);
	uvm_lock_init(&unwind_lock);
}

void prof_describe(struct uvm_descriptor *d)
{
	d->prof_rate = (uintptr_t)&uvm__prof_rate;
	d->prof_stacks = (uintptr_t)&stacks;
	d->prof_nr = (uintptr_t)&nr_stacks;
	d->prof_seq = (uintptr_t)&seq;
	d->prof_stack_size = sizeof(struct prof_stack);
	d->prof_hash = offsetof(struct prof_stack, hash);
	d->prof_depth_off = offsetof(struct prof_stack, depth);
	d->prof_bytes = offsetof(struct prof_stack, bytes);
	d->prof_count = offsetof(struct prof_stack, count);
	d->prof_samples = offsetof(struct prof_stack, samples);
	d->prof_frames = offsetof(struct prof_stack, frames);
	d->prof_depth = PROF_DEPTH;
}
