// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: partitions for IPoIB (ulp/ipoib/pkey.h): which values make a
 * child's P_Key, where a P_Key is found in a port's table, a child's
 * default name, and the broadcast MGID a child's P_Key gives.
 */
#include <weft/test.h>

#include "../addr.h"
#include "../pkey.h"

using namespace weft;
using namespace weft::ipoib;
using weft::test::Test;

namespace {

uint16_t pkey_of(long v)
{
	auto r = child_pkey(v);
	return r ? *r : 0;
}

void child_pkey_values(Test &t)
{
	/* Linux's ipoib: the full-membership bit is set on what the user gives. */
	WEFT_EXPECT_EQ(t, pkey_of(0x8001), 0x8001);
	WEFT_EXPECT_EQ(t, pkey_of(0x0001), 0x8001);
	WEFT_EXPECT_EQ(t, pkey_of(0x7fff), 0xffff);
	WEFT_EXPECT_EQ(t, pkey_of(0xffff), 0xffff);
	WEFT_EXPECT_EQ(t, pkey_of(1), 0x8001);
	/* IBA 10.9.1.2: no partition in 0 and 0x8000; nothing beyond 16 bits. */
	const long bad[] = {0, 0x8000, 0x10000, 0x18001, -1, -0x8001, 0x7fffffffL};
	for (long v : bad) {
		auto r = child_pkey(v);
		WEFT_EXPECT_FALSE(t, r.ok());
		WEFT_EXPECT_EQ(t, r.to_errno(), -err::EINVAL);
	}
}

void index_lookup(Test &t)
{
	/* OpenSM's table for Default=0x7fff (full) and 0x8001 (limited at 2, full at 3). */
	const uint16_t table[] = {0xffff, 0x0000, 0x0001, 0x8001, 0x7002, 0, 0, 0};
	auto at = [&](uint16_t pkey) -> long {
		auto r = pkey_index_in(table, 8, pkey);
		return r ? static_cast<long>(*r) : -1;
	};
	WEFT_EXPECT_EQ(t, at(0xffff), 0);
	WEFT_EXPECT_EQ(t, at(0x7fff), 0); /* the default partition, either membership */
	WEFT_EXPECT_EQ(t, at(0x8001), 3); /* full member entry first */
	WEFT_EXPECT_EQ(t, at(0x0001), 3);
	WEFT_EXPECT_EQ(t, at(0xf002), 4); /* only a limited entry: that one */
	WEFT_EXPECT_EQ(t, at(0x8003), -1);
	auto none = pkey_index_in(table, 8, 0x8003);
	WEFT_EXPECT_EQ(t, none.to_errno(), -err::ENOENT);
	/* Empty entries (0x0000, 0x8000) are never a match, not even for P_Key 0x8000. */
	const uint16_t empty[] = {0x0000, 0x8000};
	WEFT_EXPECT_FALSE(t, pkey_index_in(empty, 2, 0x8000).ok());
	/* A limited default entry only (0x7fff) is still the default partition. */
	const uint16_t limited[] = {0x7fff};
	WEFT_EXPECT_EQ(t, pkey_index_in(limited, 1, 0xffff).ok() ? 0 : -1, 0);
	WEFT_EXPECT_FALSE(t, pkey_index_in(table, 0, 0xffff).ok());
	/* The table may change under the interface: a later index is found as well. */
	const uint16_t moved[] = {0xffff, 0, 0, 0, 0, 0, 0, 0x8001};
	WEFT_EXPECT_EQ(t, pkey_index_in(moved, 8, 0x8001).ok() ? *pkey_index_in(moved, 8, 0x8001) : 0, 7);
}

void names(Test &t)
{
	char n[16];
	child_name(n, sizeof(n), "ib0", 0x8001);
	WEFT_EXPECT_EQ(t, __builtin_strcmp(n, "ib0.8001"), 0);
	/* As given, before the membership bit: create_child 0x1 makes ib0.0001. */
	child_name(n, sizeof(n), "ib0", 0x1);
	WEFT_EXPECT_EQ(t, __builtin_strcmp(n, "ib0.0001"), 0);
	/* At most 10 characters of the parent: the name fits IFNAMSIZ. */
	child_name(n, sizeof(n), "averyverylongname", 0xabcd);
	WEFT_EXPECT_EQ(t, __builtin_strcmp(n, "averyveryl.abcd"), 0);
}

void child_broadcast(Test &t)
{
	/* RFC 4391 §4: the child's broadcast MGID carries its full-member P_Key. */
	const verbs::Gid g = broadcast_mgid(pkey_of(0x0001));
	WEFT_EXPECT_EQ(t, g.raw[4], 0x80);
	WEFT_EXPECT_EQ(t, g.raw[5], 0x01);
	WEFT_EXPECT_TRUE(t, g == broadcast_mgid(0x8001));
	WEFT_EXPECT_FALSE(t, g == broadcast_mgid(0xffff));
}

} // namespace

WEFT_TEST_SUITE(weft_ipoib_pkey, WEFT_CASE(child_pkey_values), WEFT_CASE(index_lookup), WEFT_CASE(names),
		WEFT_CASE(child_broadcast));
