// SPDX-License-Identifier: GPL-2.0
/* weft_rt_test: KUnit suites of the C++ runtime (lib/rt/tests/). */
#include "weft/rt/kunit_api.h"

extern const struct weft_test_suite weft_suite_weft_rt_alloc, weft_suite_weft_rt_result,
	weft_suite_weft_rt_ref, weft_suite_weft_rt_list, weft_suite_weft_rt_lock,
	weft_suite_weft_rt_wait_work, weft_suite_weft_rt_wire, weft_suite_weft_rt_log,
	weft_suite_weft_rt_copy;

static const struct weft_test_suite *const weft_rt_suites[] = {
	&weft_suite_weft_rt_alloc, &weft_suite_weft_rt_result, &weft_suite_weft_rt_ref,
	&weft_suite_weft_rt_list,  &weft_suite_weft_rt_lock,   &weft_suite_weft_rt_wait_work,
	&weft_suite_weft_rt_wire,  &weft_suite_weft_rt_log,    &weft_suite_weft_rt_copy,
};

WEFT_KUNIT_MODULE(weft_rt_suites, "Weft: KUnit suites of the kernel C++ runtime");
