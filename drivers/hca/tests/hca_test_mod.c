// SPDX-License-Identifier: GPL-2.0
/* weft_hca_test: KUnit suites of the soft HCA (drivers/hca/tests/). */
#include "weft/rt/kunit_api.h"

extern const struct weft_test_suite weft_suite_weft_hca_packet, weft_suite_weft_hca_crc,
	weft_suite_weft_hca_datapath, weft_suite_weft_hca_verbs, weft_suite_weft_hca_capture,
	weft_suite_weft_hca_faults, weft_suite_weft_hca_reliability, weft_suite_weft_hca_fastpath,
	weft_suite_weft_hca_coverage, weft_suite_weft_hca_cable, weft_suite_weft_hca_sma, weft_suite_weft_hca_smi,
	weft_suite_weft_hca_switch_gsi, weft_suite_weft_hca_pma, weft_suite_weft_hca_csum, weft_suite_weft_hca_lso,
	weft_suite_weft_hca_races, weft_suite_weft_hca_mw, weft_suite_weft_hca_hostile;

static const struct weft_test_suite *const weft_hca_suites[] = {
	&weft_suite_weft_hca_packet,
	&weft_suite_weft_hca_crc,
	&weft_suite_weft_hca_datapath,
	&weft_suite_weft_hca_verbs,
	&weft_suite_weft_hca_capture,
	&weft_suite_weft_hca_faults,
	&weft_suite_weft_hca_reliability,
	&weft_suite_weft_hca_fastpath,
	&weft_suite_weft_hca_coverage,
	&weft_suite_weft_hca_cable,
	&weft_suite_weft_hca_sma,
	&weft_suite_weft_hca_smi,
	&weft_suite_weft_hca_switch_gsi,
	&weft_suite_weft_hca_pma,
	&weft_suite_weft_hca_csum,
	&weft_suite_weft_hca_lso,
	&weft_suite_weft_hca_races,
	&weft_suite_weft_hca_mw,
	&weft_suite_weft_hca_hostile,
};

WEFT_KUNIT_MODULE(weft_hca_suites, "Weft: KUnit suites of the soft HCA");
