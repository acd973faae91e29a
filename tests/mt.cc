// tests/mt.cc - a multi-threaded C++ program for the preload tests: threads
// allocate with new, hand their objects to other threads through a queue,
// which free them; the main thread forks children that allocate, and exec.
// The output is deterministic, so runs under different allocators compare.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <queue>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

struct alignas(64) Item { // over-aligned: new and delete take their aligned forms
	std::string text;
	std::vector<long> nums;
};

std::mutex lock;
std::condition_variable ready;
std::queue<std::unique_ptr<Item>> queue;
std::atomic<long> consumed{0};
bool done = false;

void produce(int id)
{
	for (int i = 0; i < 20000; i++) {
		auto item = std::make_unique<Item>();
		item->text = std::to_string(id) + ":" + std::string(static_cast<size_t>(i % 200), 'x');
		item->nums.assign(static_cast<size_t>(i % 50), i);
		std::lock_guard<std::mutex> g(lock);
		queue.push(std::move(item));
		ready.notify_one();
	}
}

void consume(long &sum)
{
	for (;;) {
		std::unique_ptr<Item> item;
		{
			std::unique_lock<std::mutex> g(lock);
			ready.wait(g, [] { return !queue.empty() || done; });
			if (queue.empty())
				return;
			item = std::move(queue.front());
			queue.pop();
		}
		if (reinterpret_cast<std::uintptr_t>(item.get()) % 64)
			std::abort();
		sum += static_cast<long>(item->text.size());
		for (long n : item->nums)
			sum += n;
		consumed++;
	}
}

int child(int k)
{
	std::map<int, std::string> m;
	for (int i = 0; i < 10000; i++)
		m[i] = std::to_string(i * k);
	if (k % 2) {
		std::string arg = "child " + std::to_string(k) + " " + m[9999];
		execl("/bin/echo", "echo", arg.c_str(), static_cast<char *>(nullptr));
		return 1;
	}
	std::printf("child %d %s\n", k, m[9999].c_str());
	return 0;
}

} // namespace

int main()
{
	std::vector<std::thread> producers, consumers;
	std::vector<long> sums(4, 0);

	for (int i = 0; i < 4; i++)
		consumers.emplace_back(consume, std::ref(sums[static_cast<size_t>(i)]));
	for (int i = 0; i < 4; i++)
		producers.emplace_back(produce, i);
	for (int k = 0; k < 6; k++) {
		std::fflush(stdout);
		pid_t pid = fork();
		if (pid == 0)
			_exit(child(k));
		int status = 0;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
			std::fprintf(stderr, "child %d: %s %d\n", k, WIFSIGNALED(status) ? "killed by signal" : "exit status",
				     WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
			std::_Exit(1); /* the threads are still running: no destructors, no terminate() */
		}
	}
	for (auto &t : producers)
		t.join();
	{
		std::lock_guard<std::mutex> g(lock);
		done = true;
	}
	ready.notify_all();
	for (auto &t : consumers)
		t.join();
	long total = 0;
	for (long s : sums)
		total += s;
	std::printf("consumed %ld total %ld\n", consumed.load(), total);
	return 0;
}
