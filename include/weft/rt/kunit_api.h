/* SPDX-License-Identifier: GPL-2.0 */
/*
 * C API of weft_kunit.ko (tests/kunit/glue.c): runs KUnit suites whose test
 * bodies are C++.  A test module lists its suites (declared by
 * WEFT_TEST_SUITE in C++) and hands them over with WEFT_KUNIT_MODULE.
 */
#ifndef WEFT_RT_KUNIT_API_H
#define WEFT_RT_KUNIT_API_H

#include <weft/rt/kapi.h>

WEFT_C_BEGIN

struct kunit;

struct weft_test_case {
	const char *name;
	void (*run)(struct kunit *test);
};

struct weft_test_suite {
	const char *name;
	const struct weft_test_case *cases;
	unsigned int ncases;
};

/* Mark the running case failed and log @msg (with file:line) through KUnit. */
void weft_kunit_fail(struct kunit *test, const char *file, int line, const char *msg);
/* Log a line into the case's KUnit log. */
void weft_kunit_note(struct kunit *test, const char *msg);
/* Run @n suites now (at module load); *handle is what weft_kunit_release frees. */
int weft_kunit_run(const struct weft_test_suite *const *suites, unsigned int n, void **handle);
void weft_kunit_release(void *handle);

WEFT_C_END

#ifndef __cplusplus
#include <linux/module.h>
/* The whole C side of a test module: run @suites at load, release at unload. */
#define WEFT_KUNIT_MODULE(suites, desc)                                       \
	static void *weft_kunit_handle;                                       \
	static int __init weft_kunit_mod_init(void)                           \
	{                                                                     \
		return weft_kunit_run(suites, ARRAY_SIZE(suites), &weft_kunit_handle); \
	}                                                                     \
	static void __exit weft_kunit_mod_exit(void)                          \
	{                                                                     \
		weft_kunit_release(weft_kunit_handle);                        \
	}                                                                     \
	module_init(weft_kunit_mod_init);                                     \
	module_exit(weft_kunit_mod_exit);                                     \
	MODULE_LICENSE("GPL");                                                \
	MODULE_DESCRIPTION(desc)
#endif

#endif
