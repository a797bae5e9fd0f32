// SPDX-License-Identifier: GPL-2.0
/* weft_umad_test: KUnit suites of user-space MAD access (userspace/umad/tests/). */
#include "weft/rt/kunit_api.h"

extern const struct weft_test_suite weft_suite_weft_umad_file;

static const struct weft_test_suite *const weft_umad_suites[] = {
	&weft_suite_weft_umad_file,
};

WEFT_KUNIT_MODULE(weft_umad_suites, "Weft: KUnit suites of user-space MAD access");
