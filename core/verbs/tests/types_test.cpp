// SPDX-License-Identifier: GPL-2.0
/* The verbs vocabulary: GID halves and the IBA time encodings. */
#include <weft/test.h>
#include <weft/verbs/types.h>

using namespace weft;
using namespace weft::verbs;

WEFT_CASE(gid_halves)
{
	Gid g = Gid::make(0xfe80000000000000ull, 0x0002c90300001234ull);
	WEFT_EXPECT_EQ(g.raw[0], 0xfe);
	WEFT_EXPECT_EQ(g.raw[15], 0x34);
	WEFT_EXPECT_EQ(g.subnet_prefix(), 0xfe80000000000000ull);
	WEFT_EXPECT_EQ(g.interface_id(), 0x0002c90300001234ull);
}

/* IBA 9.7.5.2.8 Table 45 end points and IBA 9.7.6.1.3's doubling. */
WEFT_CASE(time_encodings)
{
	WEFT_EXPECT_EQ(rnr_timer_us(0), 655360u);
	WEFT_EXPECT_EQ(rnr_timer_us(1), 10u);
	WEFT_EXPECT_EQ(rnr_timer_us(14), 1280u);
	WEFT_EXPECT_EQ(rnr_timer_us(31), 491520u);
	WEFT_EXPECT_EQ(ack_timeout_us(0), 0ull);
	WEFT_EXPECT_EQ(ack_timeout_us(14), 67108ull);
	WEFT_EXPECT_EQ(ack_timeout_us(31), 8796093022ull);
}

WEFT_CASE(names)
{
	WEFT_EXPECT_STREQ(qp_state_str(QpState::Sqe), "SQE");
	WEFT_EXPECT_STREQ(port_state_str(PortState::Active), "ACTIVE");
	WEFT_EXPECT_STREQ(wc_status_str(WcStatus::RnrRetryExcErr), "RNR retry counter exceeded");
	WEFT_EXPECT_STREQ(wc_status_str(static_cast<WcStatus>(200)), "unknown");
}

WEFT_TEST_SUITE(weft_verbs_types, gid_halves, time_encodings, names);
