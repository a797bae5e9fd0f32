// SPDX-License-Identifier: GPL-2.0
/* weft_uverbs_test: KUnit suites of the uverbs command layer (userspace/uverbs/tests/). */
#include <linux/module.h>

#include "weft/rt/kunit_api.h"
#include "user_mem.h"

extern const struct weft_test_suite weft_suite_weft_uverbs_objects;

static const struct weft_test_suite *const weft_uverbs_suites[] = {
	&weft_suite_weft_uverbs_objects,
};

static void *weft_uverbs_kunit;

/* The suites run while this returns: the loader's address space is theirs meanwhile. */
static int __init weft_uverbs_test_init(void)
{
	int r;

	weft_uvtest_take_mm();
	r = weft_kunit_run(weft_uverbs_suites, ARRAY_SIZE(weft_uverbs_suites), &weft_uverbs_kunit);
	weft_uvtest_drop_mm();
	return r;
}

static void __exit weft_uverbs_test_exit(void)
{
	weft_kunit_release(weft_uverbs_kunit);
}

module_init(weft_uverbs_test_init);
module_exit(weft_uverbs_test_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft: KUnit suites of the uverbs command layer");
