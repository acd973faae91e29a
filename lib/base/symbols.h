/*
 * symbols.h - naming code addresses of this process without allocating:
 * the module from dl_iterate_phdr, the function from the module file's own
 * symbol table (.symtab, else .dynsym), read through a private mapping.
 * For the exit leak report (leaks.c); readers in other processes use
 * elfutils instead.
 */
#ifndef UVM_SYMBOLS_H
#define UVM_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

/*
 * The return address ip as "function+0xOFF [module]", or "[module+0xOFF]"
 * (the offset in the file's address space, for addr2line) when no symbol
 * holds it, or "0xIP" outside every module.  Named by ip - 1, the call's
 * last byte, as vminfo names frames: a return address may lie past its
 * call's function.
 */
void symbol_name(uintptr_t ip, char *buf, size_t len);

#endif
