/*
 * settings.c - the settings as the program sees them: uvm_option_get,
 * uvm_option_set, uvm_settings and uvm_version, each bringing the library
 * up first (the table and its parsing are options.c, a layer below).
 */
#include <errno.h>
#include <stdio.h>

#include "init.h"
#include "options.h"
#include "uvmalloc.h"

int uvm_option_get(const char *name, long long *value)
{
	int id = option_find(name), err = id < 0 ? ENOENT : uvm_init();

	if (!err)
		*value = option((enum uvm_option_id)id);
	return err;
}

int uvm_option_set(const char *name, long long value)
{
	int id = option_find(name), err = id < 0 ? ENOENT : uvm_init();

	return err ? err : option_change((enum uvm_option_id)id, value);
}

void uvm_settings(FILE *f)
{
	if (!uvm_init())
		option_print(f);
}

const char *uvm_version(void) { return UVM_VERSION; }
