// override_new.cc - C++ operator new and delete, every standard form, on
// the uvm_malloc family.  new follows the standard: on failure call the
// new_handler and retry, throw std::bad_alloc when there is none; the
// nothrow forms return nullptr instead.
#include <cstddef>
#include <new>

#include "uvmalloc.h"

#define EXPORT __attribute__((visibility("default")))

namespace {

void *alloc_or_throw(std::size_t size, std::size_t align)
{
	for (;;) {
		void *p = align ? uvm_aligned_alloc(align, size ? size : 1) : uvm_malloc(size);

		if (p)
			return p;
		std::new_handler handler = std::get_new_handler();
		if (!handler)
			throw std::bad_alloc();
		handler();
	}
}

void *alloc_or_null(std::size_t size, std::size_t align) noexcept
{
	try {
		return alloc_or_throw(size, align);
	} catch (...) {
		return nullptr;
	}
}

} // namespace

EXPORT void *operator new(std::size_t n) { return alloc_or_throw(n, 0); }
EXPORT void *operator new[](std::size_t n) { return alloc_or_throw(n, 0); }
EXPORT void *operator new(std::size_t n, const std::nothrow_t &) noexcept { return alloc_or_null(n, 0); }
EXPORT void *operator new[](std::size_t n, const std::nothrow_t &) noexcept { return alloc_or_null(n, 0); }
EXPORT void *operator new(std::size_t n, std::align_val_t a) { return alloc_or_throw(n, static_cast<std::size_t>(a)); }
EXPORT void *operator new[](std::size_t n, std::align_val_t a) { return alloc_or_throw(n, static_cast<std::size_t>(a)); }
EXPORT void *operator new(std::size_t n, std::align_val_t a, const std::nothrow_t &) noexcept
{
	return alloc_or_null(n, static_cast<std::size_t>(a));
}
EXPORT void *operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t &) noexcept
{
	return alloc_or_null(n, static_cast<std::size_t>(a));
}

EXPORT void operator delete(void *p) noexcept { uvm_free(p); }
EXPORT void operator delete[](void *p) noexcept { uvm_free(p); }
EXPORT void operator delete(void *p, const std::nothrow_t &) noexcept { uvm_free(p); }
EXPORT void operator delete[](void *p, const std::nothrow_t &) noexcept { uvm_free(p); }
EXPORT void operator delete(void *p, std::size_t) noexcept { uvm_free(p); }
EXPORT void operator delete[](void *p, std::size_t) noexcept { uvm_free(p); }
EXPORT void operator delete(void *p, std::align_val_t) noexcept { uvm_free(p); }
EXPORT void operator delete[](void *p, std::align_val_t) noexcept { uvm_free(p); }
EXPORT void operator delete(void *p, std::align_val_t, const std::nothrow_t &) noexcept { uvm_free(p); }
EXPORT void operator delete[](void *p, std::align_val_t, const std::nothrow_t &) noexcept { uvm_free(p); }
EXPORT void operator delete(void *p, std::size_t, std::align_val_t) noexcept { uvm_free(p); }
EXPORT void operator delete[](void *p, std::size_t, std::align_val_t) noexcept { uvm_free(p); }
