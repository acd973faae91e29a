// tests/override_prog.cc - the same for C++: a program linked with uvmalloc-override gets uvmalloc's new and delete.
#include <malloc.h>
#include <memory>
#include <string>
#include <vector>

int main()
{
	std::vector<std::unique_ptr<std::string>> v;

	for (int i = 0; i < 1000; i++)
		v.push_back(std::make_unique<std::string>(100, 'x'));
	v.clear();
	malloc_stats();
	return 0;
}
