/* A tiny TAP producer for the C unit tests: ok(), is_int(), is_str(), done_testing(). */
#ifndef SRVSCOPE_TESTS_UNIT_H
#define SRVSCOPE_TESTS_UNIT_H

#include <stdio.h>
#include <string.h>

static int unit_n, unit_failed;

#define ok(cond, ...)                                                                      \
	({                                                                                 \
		int _c = !!(cond);                                                         \
		printf("%sok %d - ", _c ? "" : "not ", ++unit_n);                          \
		printf(__VA_ARGS__);                                                       \
		printf("\n");                                                              \
		if (!_c) {                                                                 \
			unit_failed++;                                                     \
			printf("#   at %s:%d\n", __FILE__, __LINE__);                       \
		}                                                                          \
		_c;                                                                        \
	})

#define is_int(got, want, ...)                                                             \
	({                                                                                 \
		long long _g = (got), _w = (want);                                         \
		int _r = ok(_g == _w, __VA_ARGS__);                                        \
		if (!_r)                                                                   \
			printf("#   got %lld, want %lld\n", _g, _w);                       \
		_r;                                                                        \
	})

#define is_str(got, want, ...)                                                             \
	({                                                                                 \
		const char *_g = (got), *_w = (want);                                      \
		int _r = ok(_g && _w ? !strcmp(_g, _w) : _g == _w, __VA_ARGS__);           \
		if (!_r)                                                                   \
			printf("#   got '%s', want '%s'\n", _g ? _g : "(null)",            \
			       _w ? _w : "(null)");                                        \
		_r;                                                                        \
	})

/* The path of tests/fixtures/NAME ("models/redis.json") into buf, found from the test's
 * own source file, so that it runs from any directory; buf. */
#define unit_fixture(buf, size, name)                                                      \
	(snprintf((buf), (size), "%.*s/../fixtures/%s",                                    \
		  (int)(strrchr(__FILE__, '/') - __FILE__), __FILE__, (name)),             \
	 (buf))

static inline int done_testing(void)
{
	printf("1..%d\n", unit_n);
	return unit_failed ? 1 : 0;
}

#endif
