// SPDX-License-Identifier: GPL-2.0
/* weft_verbs_test: KUnit suites of the verbs mid-layer (core/verbs/tests/). */
#include "weft/rt/kunit_api.h"

extern const struct weft_test_suite weft_suite_weft_verbs_types;
extern const struct weft_test_suite weft_suite_weft_verbs_qp_transition;
extern const struct weft_test_suite weft_suite_weft_verbs_conn_events;

static const struct weft_test_suite *const weft_verbs_suites[] = {
	&weft_suite_weft_verbs_types,
	&weft_suite_weft_verbs_qp_transition,
	&weft_suite_weft_verbs_conn_events,
};

WEFT_KUNIT_MODULE(weft_verbs_suites, "Weft: KUnit suites of the verbs mid-layer");
