// tests/override_prog.cc - the same for C++: a program linked with uvmalloc-override gets uvmalloc's new and delete
// (and mallopt and malloc_info, as override_prog.c).
#include <malloc.h>
#include <stdio.h>
#include <memory>
#include <string>
#include <vector>

int main()
{
	std::vector<std::unique_ptr<std::string>> v;

	for (int i = 0; i < 1000; i++)
		v.push_back(std::make_unique<std::string>(100, 'x'));
	v.clear();
	if (mallopt(M_ARENA_MAX, 1) != 1 || malloc_info(0, stdout))
		return 1;
	malloc_stats();
	return 0;
}
