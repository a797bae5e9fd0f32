// SPDX-License-Identifier: GPL-2.0
/* The verbs vocabulary: GID halves and the IBA time encodings. */
#include <weft/test.h>
#include <weft/verbs/types.h>

using namespace weft;
using namespace weft::verbs;
using weft::test::Test;

namespace {

void gid_halves(Test &t)
{
	Gid g = Gid::make(0xfe80000000000000ull, 0x0002c90300001234ull);
	WEFT_EXPECT_EQ(t, g.raw[0], 0xfe);
	WEFT_EXPECT_EQ(t, g.raw[15], 0x34);
	WEFT_EXPECT_EQ(t, g.subnet_prefix(), 0xfe80000000000000ull);
	WEFT_EXPECT_EQ(t, g.interface_id(), 0x0002c90300001234ull);
}

/* IBA 9.7.5.2.8 Table 45 end points and IBA 9.7.6.1.3's doubling. */
void time_encodings(Test &t)
{
	WEFT_EXPECT_EQ(t, rnr_timer_us(0), 655360u);
	WEFT_EXPECT_EQ(t, rnr_timer_us(1), 10u);
	WEFT_EXPECT_EQ(t, rnr_timer_us(14), 1280u);
	WEFT_EXPECT_EQ(t, rnr_timer_us(31), 491520u);
	WEFT_EXPECT_EQ(t, ack_timeout_us(0), 0ull);
	WEFT_EXPECT_EQ(t, ack_timeout_us(14), 67108ull);
	WEFT_EXPECT_EQ(t, ack_timeout_us(31), 8796093022ull);
}

void names(Test &t)
{
	WEFT_EXPECT_STREQ(t, qp_state_str(QpState::Sqe), "SQE");
	WEFT_EXPECT_STREQ(t, port_state_str(PortState::Active), "ACTIVE");
	WEFT_EXPECT_STREQ(t, wc_status_str(WcStatus::RnrRetryExcErr), "RNR retry counter exceeded");
	WEFT_EXPECT_STREQ(t, wc_status_str(static_cast<WcStatus>(200)), "unknown");
}

} // namespace

WEFT_TEST_SUITE(weft_verbs_types, WEFT_CASE(gid_halves), WEFT_CASE(time_encodings), WEFT_CASE(names));
