// tests/newdelete.cc - C++ operator new and delete under the preload library (run with LD_PRELOAD):
// every form reaches uvmalloc, a failing new calls the new_handler until there is none and then throws
// std::bad_alloc, the nothrow forms return nullptr (also when the handler throws), aligned forms align,
// and an area from new is charged to the program's call, not to operator new.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <initializer_list>
#include <malloc.h>
#include <new>

static int failures;

#define CHECK(cond)                                                              \
	do {                                                                     \
		if (!(cond)) {                                                   \
			std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #cond); \
			failures++;                                              \
		}                                                                \
	} while (0)

static const std::size_t impossible = std::size_t(1) << 62;
static int handler_calls;

static void give_up_on_second_call()
{
	if (++handler_calls == 2)
		std::set_new_handler(nullptr);
}

static void throwing_handler()
{
	handler_calls++;
	throw std::bad_alloc();
}

static bool ours(const void *fn)
{
	Dl_info info;

	return dladdr(fn, &info) && info.dli_fname && std::strstr(info.dli_fname, "uvmalloc-preload");
}

// uvm_vmallocinfo's line for the area at p (the preload library exports the API) names a caller outside it.
static bool charged_to_program(const void *p)
{
	auto info = reinterpret_cast<void (*)(FILE *)>(dlsym(RTLD_DEFAULT, "uvm_vmallocinfo"));
	char *text = nullptr, start[32];
	std::size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!info || !f)
		return false;
	info(f);
	std::fclose(f);
	std::snprintf(start, sizeof(start), "0x%016lx-", static_cast<unsigned long>(reinterpret_cast<std::uintptr_t>(p)));
	const char *line = std::strstr(text, start), *end = line ? std::strchr(line, '\n') : nullptr;
	bool ok = end && !memmem(line, static_cast<std::size_t>(end - line), "uvmalloc-preload", 16);
	if (!ok)
		std::fprintf(stderr, "%.*s", end ? static_cast<int>(end - line + 1) : 0, line);
	std::free(text);
	return ok;
}

int main()
{
	// Every form is the preload library's.
	CHECK(ours(reinterpret_cast<void *>(static_cast<void *(*)(std::size_t)>(&::operator new))));
	CHECK(ours(reinterpret_cast<void *>(static_cast<void (*)(void *) noexcept>(&::operator delete))));
	CHECK(ours(reinterpret_cast<void *>(
		static_cast<void *(*)(std::size_t, std::align_val_t, const std::nothrow_t &) noexcept>(&::operator new[]))));

	// Plain, array, sized and aligned forms allocate usable memory that free accepts.
	for (std::size_t n : { 1, 24, 100, 4000, 70000, 3 << 20 }) {
		char *p = new char[n], *q = static_cast<char *>(::operator new(n));
		std::memset(p, 1, n);
		std::memset(q, 2, n);
		CHECK(malloc_usable_size(p) >= n && malloc_usable_size(q) >= n);
		delete[] p;
		::operator delete(q, n);
	}
	for (std::size_t a = 16; a <= 8192; a <<= 1) {
		void *p = ::operator new(100, std::align_val_t(a));
		void *q = ::operator new[](5000, std::align_val_t(a), std::nothrow);
		CHECK(reinterpret_cast<std::uintptr_t>(p) % a == 0 && q && reinterpret_cast<std::uintptr_t>(q) % a == 0);
		::operator delete(p, std::align_val_t(a));
		::operator delete[](q, std::align_val_t(a));
	}

	// new reaches the allocator by a jump (preload/override_new.c), so that the area's caller is main: when optimized.
#ifdef __OPTIMIZE__
	void *area = ::operator new(64 << 10);
	CHECK(charged_to_program(area));
	::operator delete(area);
#endif

	// No handler: bad_alloc, and nullptr from nothrow.
	bool threw = false;
	try {
		void *volatile p = ::operator new(impossible);
		(void)p;
	} catch (const std::bad_alloc &) {
		threw = true;
	}
	CHECK(threw);
	CHECK(::operator new(impossible, std::nothrow) == nullptr);
	CHECK(::operator new[](impossible, std::align_val_t(64), std::nothrow) == nullptr);

	// A handler is called until it removes itself, then bad_alloc.
	std::set_new_handler(give_up_on_second_call);
	threw = false;
	try {
		void *volatile p = ::operator new[](impossible);
		(void)p;
	} catch (const std::bad_alloc &) {
		threw = true;
	}
	CHECK(threw && handler_calls == 2);

	// A handler that throws: the throwing forms pass it on, the nothrow forms return nullptr.
	std::set_new_handler(throwing_handler);
	handler_calls = 0;
	threw = false;
	try {
		void *volatile p = ::operator new(impossible, std::align_val_t(256));
		(void)p;
	} catch (const std::bad_alloc &) {
		threw = true;
	}
	CHECK(threw && handler_calls == 1);
	CHECK(::operator new(impossible, std::nothrow) == nullptr && handler_calls == 2);
	CHECK(::operator new[](impossible, std::align_val_t(32), std::nothrow) == nullptr && handler_calls == 3);
	std::set_new_handler(nullptr);

	std::printf("new-delete: %s\n", failures ? "FAILED" : "ok");
	return failures != 0;
}
