/*
 * tests/crash_report.c - linked into every unit test: a crash (SIGSEGV,
 * SIGBUS, SIGILL, SIGFPE) prints its signal, the faulting address
 * and the crashing thread's stack before the test dies of it, where
 * Criterion says only "CRASH!": a rare crash under CI's load is then
 * diagnosed from the log it left.  The stack is libgcc's backtrace, loaded
 * before any crash (dlopen in a handler is not safe); names come from
 * export_dynamic.
 */
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static void report(int sig, siginfo_t *si, void *ctx)
{
	void *frames[64];
	char line[128];
	int n, len;

	(void)ctx;
	len = snprintf(line, sizeof(line), "crash_report: signal %d at address %p, thread %ld\n", sig, si->si_addr,
		       (long)gettid());
	if (len > 0 && write(2, line, (size_t)len) < 0)
		return;
	n = backtrace(frames, 64);
	backtrace_symbols_fd(frames, n, 2);
	/* SA_RESETHAND: the default action now, and the wait status Criterion reads is the signal's. */
	raise(sig);
}

__attribute__((constructor)) static void crash_report_install(void)
{
	/* Not SIGABRT: the library's aborts name their pointer, and the death tests read that message. */
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE };
	struct sigaction sa = { .sa_sigaction = report, .sa_flags = SA_SIGINFO | SA_RESETHAND | SA_NODEFER };
	void *warm[1];

	backtrace(warm, 1);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}
