// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: the initiator's add_target option string (ulp/srp/initiator/
 * options.h), as srp_daemon writes it and as the in-tree parser judges
 * it: values, optional keys, and the malformed strings that get EINVAL.
 */
#include <weft/test.h>

#include "../initiator/options.h"

using namespace weft;
using namespace weft::srp;
using weft::test::Test;

namespace {

constexpr const char daemon_line[] =
	"id_ext=0200574654000004,ioc_guid=0200574654000004,"
	"dgid=fe800000000000000200574654000005,pkey=ffff,service_id=0200574654000004\n";

Result<void> parse(const char *s, TargetOptions &o)
{
	return parse_options(s, __builtin_strlen(s), o);
}

int err_of(const char *s)
{
	TargetOptions o;
	auto r = parse(s, o);
	return r ? 0 : r.error().code();
}

void srp_daemon_line(Test &t)
{
	TargetOptions o;
	WEFT_ASSERT_TRUE(t, parse(daemon_line, o).ok());
	WEFT_EXPECT_EQ(t, o.id_ext, 0x0200574654000004ull);
	WEFT_EXPECT_EQ(t, o.ioc_guid, 0x0200574654000004ull);
	WEFT_EXPECT_EQ(t, o.service_id, 0x0200574654000004ull);
	WEFT_EXPECT_EQ(t, o.pkey, 0xffffu);
	WEFT_EXPECT_EQ(t, o.dgid[0], 0xfeu);
	WEFT_EXPECT_EQ(t, o.dgid[1], 0x80u);
	WEFT_EXPECT_EQ(t, o.dgid[15], 0x05u);
	WEFT_EXPECT_EQ(t, o.io_class, 0x0100u);
	WEFT_EXPECT_EQ(t, o.tl_retry_count, 7u);
	WEFT_EXPECT_EQ(t, o.given, opt::id_ext | opt::ioc_guid | opt::dgid | opt::pkey | opt::service_id);
}

void optional_keys(Test &t)
{
	TargetOptions o;
	WEFT_ASSERT_TRUE(t, parse("id_ext=0x1,ioc_guid=2,dgid=000102030405060708090a0b0c0d0e0f,"
				  "pkey=0x8001,service_id=3,max_sect=256,queue_size=32,"
				  "max_cmd_per_lun=8,cmd_sg_entries=255,ch_count=2,tl_retry_count=2,"
				  "initiator_ext=abc,io_class=ff00,allow_ext_sg=1,comp_vector=0,,",
				  o)
				 .ok());
	WEFT_EXPECT_EQ(t, o.id_ext, 1ull);
	WEFT_EXPECT_EQ(t, o.pkey, 0x8001u);
	WEFT_EXPECT_EQ(t, o.max_sect, 256u);
	WEFT_EXPECT_EQ(t, o.queue_size, 32u);
	WEFT_EXPECT_EQ(t, o.max_cmd_per_lun, 8u);
	WEFT_EXPECT_EQ(t, o.cmd_sg_entries, 255u);
	WEFT_EXPECT_EQ(t, o.ch_count, 2u);
	WEFT_EXPECT_EQ(t, o.tl_retry_count, 2u);
	WEFT_EXPECT_EQ(t, o.initiator_ext, 0xabcull);
	WEFT_EXPECT_EQ(t, o.io_class, 0xff00u);
	WEFT_EXPECT_TRUE(t, o.allow_ext_sg);
	WEFT_EXPECT_EQ(t, o.dgid[15], 0x0fu);
}

void malformed(Test &t)
{
	/* What the in-tree parser refuses, each with EINVAL. */
	static const char *const bad[] = {
		"",
		"foo=1",
		"id_ext=1,ioc_guid=2,dgid=fe800000000000000200574654000005,pkey=ffff", /* no service_id */
		"id_ext=1,ioc_guid=2,dgid=fe80,pkey=ffff,service_id=3",		     /* short dgid */
		"id_ext=1,ioc_guid=2,dgid=fe80000000000000020057465400000g,pkey=ffff,service_id=3",
		"id_ext=zz,ioc_guid=2,dgid=fe800000000000000200574654000005,pkey=ffff,service_id=3",
		"id_ext=1,ioc_guid=2,dgid=fe800000000000000200574654000005,pkey=10000,service_id=3",
		"id_ext,ioc_guid=2,dgid=fe800000000000000200574654000005,pkey=ffff,service_id=3",
		"id_ext=1,ioc_guid=2,dgid=fe800000000000000200574654000005,pkey=ffff,service_id=",
		"id_ext=10000000000000000,ioc_guid=2,dgid=fe800000000000000200574654000005,pkey=ffff,service_id=3",
	};
	for (const char *s : bad)
		WEFT_EXPECT_EQ(t, err_of(s), err::EINVAL);
	/* Range checks of the optional keys. */
	char buf[200];
	static const char *const ranges[] = {"cmd_sg_entries=0",   "cmd_sg_entries=256", "tl_retry_count=1",
					     "tl_retry_count=8",   "queue_size=0",	      "max_cmd_per_lun=0",
					     "io_class=1234",	   "sg_tablesize=2049",   "ch_count=0",
					     "max_sect=-1"};
	for (const char *r : ranges) {
		format(buf, sizeof(buf), "%s,%s", daemon_line, r);
		WEFT_EXPECT_EQ(t, err_of(buf), err::EINVAL);
	}
}

void ip_addressing(Test &t)
{
	/* src=/dest= name the RDMA CM's IP addressing: not available yet, said so. */
	WEFT_EXPECT_EQ(t, err_of("id_ext=1,ioc_guid=2,dest=10.0.0.1:5555"), err::EOPNOTSUPP);
}

/*
 * The pages of the largest command's registration, counted in 64 bits:
 * max_sect x 512 wrapped in 32 bits from 8388608 sectors on (to one page
 * at exactly 2^23), which made add_target accept a SCSI host whose large
 * commands no registration could hold.  Limit 512: Weft's HCA.
 */
void max_sect_pages(Test &t)
{
	auto pages = [](uint32_t max_sect) {
		auto r = cmd_pages(max_sect, 4096, 512);
		return r ? int64_t(r.value()) : -int64_t(r.error().code());
	};
	WEFT_EXPECT_EQ(t, pages(1), 2);
	WEFT_EXPECT_EQ(t, pages(8), 2);
	WEFT_EXPECT_EQ(t, pages(9), 3);
	WEFT_EXPECT_EQ(t, pages(1024), 129);
	WEFT_EXPECT_EQ(t, pages(4088), 512);
	WEFT_EXPECT_EQ(t, pages(4089), -int64_t(err::EINVAL));
	WEFT_EXPECT_EQ(t, pages(8388607), -int64_t(err::EINVAL));
	WEFT_EXPECT_EQ(t, pages(8388608), -int64_t(err::EINVAL)); /* 2^32 bytes */
	WEFT_EXPECT_EQ(t, pages(8388609), -int64_t(err::EINVAL));
	WEFT_EXPECT_EQ(t, pages(0x7fffffff), -int64_t(err::EINVAL));
	WEFT_EXPECT_EQ(t, pages(0xffffffff), -int64_t(err::EINVAL));
	WEFT_EXPECT_EQ(t, pages(0), -int64_t(err::EINVAL));
	/* The parser takes what in-tree takes; the device's limit is add_target's check. */
	char buf[200];
	format(buf, sizeof(buf), "%s,max_sect=8388608", daemon_line);
	TargetOptions o;
	WEFT_ASSERT_TRUE(t, parse(buf, o).ok());
	WEFT_EXPECT_EQ(t, o.max_sect, 8388608u);
}

} // namespace

WEFT_TEST_SUITE(weft_srp_options, WEFT_CASE(srp_daemon_line), WEFT_CASE(optional_keys),
		WEFT_CASE(malformed), WEFT_CASE(ip_addressing), WEFT_CASE(max_sect_pages));
