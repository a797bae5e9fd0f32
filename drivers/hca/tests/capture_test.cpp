// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit: fabric capture (drivers/hca/capture.cpp): the pcap stream a ring
 * produces (file header, record format, truncation at the snaplen), drops
 * when the reader is behind, wrap-around, and a capture's life on a port:
 * one reader, sealing at the tap, detach when the port goes away.
 */
#include <weft/test.h>

#include "../capture.h"
#include "../crc.h"
#include "sample_packet.h"

using namespace weft;
using namespace weft::hca;
using namespace weft::iba;
using weft::test::Test;

namespace {

constexpr size_t hdr = sizeof(PcapFileHeader), rec = sizeof(PcapRecordHeader);

uint64_t fake_ns;
uint64_t fake_clock(void)
{
	return fake_ns;
}

/* Drain up to @n bytes of @ring into @out. */
size_t drain(CaptureRing &ring, uint8_t *out, size_t n)
{
	auto r = ring.read(n, [&](const uint8_t *src, size_t len) -> Result<void> {
		__builtin_memcpy(out, src, len);
		out += len;
		return ok();
	});
	return r ? r.value() : 0;
}

void file_header(Test &t)
{
	auto ring = CaptureRing::create(Gfp::Sleep, 8192);
	WEFT_ASSERT_OK(t, ring);
	WEFT_EXPECT_EQ(t, ring.value()->available(), hdr);
	uint8_t buf[64];
	WEFT_ASSERT_EQ(t, drain(*ring.value(), buf, sizeof(buf)), hdr);
	const auto *h = reinterpret_cast<const PcapFileHeader *>(buf);
	/* Little-endian on disk whatever the host: check the bytes themselves. */
	static constexpr uint8_t magic[] = {0x4d, 0x3c, 0xb2, 0xa1};
	WEFT_EXPECT_EQ(t, __builtin_memcmp(buf, magic, 4), 0);
	WEFT_EXPECT_EQ(t, h->version_major.get(), 2);
	WEFT_EXPECT_EQ(t, h->version_minor.get(), 4);
	WEFT_EXPECT_EQ(t, h->thiszone.get(), 0u);
	WEFT_EXPECT_EQ(t, h->snaplen.get(), capture_snaplen);
	WEFT_EXPECT_EQ(t, buf[20], 247);
	WEFT_EXPECT_EQ(t, h->linktype.get(), 247u);
	WEFT_EXPECT_EQ(t, ring.value()->available(), size_t(0));
	/* Too small for one full record. */
	WEFT_EXPECT_ERR(t, CaptureRing::create(Gfp::Sleep, hdr + rec + capture_snaplen - 1), err::EINVAL);
}

void record_format(Test &t)
{
	auto ring = CaptureRing::create(Gfp::Sleep, 16384);
	WEFT_ASSERT_OK(t, ring);
	CaptureRing &r = *ring.value();
	uint8_t pkt[30];
	for (size_t i = 0; i < sizeof(pkt); i++)
		pkt[i] = static_cast<uint8_t>(i + 1);
	fake_ns = 1700000000ull * 1000000000ull + 123456789;
	WEFT_EXPECT_TRUE(t, r.push(ConstBytes(pkt), fake_clock));
	static uint8_t big[capture_snaplen + 100];
	WEFT_EXPECT_TRUE(t, r.push(ConstBytes(big), fake_clock));
	static uint8_t out[hdr + 2 * rec + sizeof(pkt) + capture_snaplen];
	WEFT_ASSERT_EQ(t, drain(r, out, sizeof(out) + 10), sizeof(out));
	const auto *h = reinterpret_cast<const PcapRecordHeader *>(out + hdr);
	WEFT_EXPECT_EQ(t, h->ts_sec.get(), 1700000000u);
	WEFT_EXPECT_EQ(t, h->ts_frac.get(), 123456789u);
	WEFT_EXPECT_EQ(t, h->incl_len.get(), 30u);
	WEFT_EXPECT_EQ(t, h->orig_len.get(), 30u);
	WEFT_EXPECT_EQ(t, __builtin_memcmp(out + hdr + rec, pkt, sizeof(pkt)), 0);
	/* Longer than the snaplen: truncated, with its real length kept. */
	h = reinterpret_cast<const PcapRecordHeader *>(out + hdr + rec + sizeof(pkt));
	WEFT_EXPECT_EQ(t, h->incl_len.get(), capture_snaplen);
	WEFT_EXPECT_EQ(t, h->orig_len.get(), uint32_t(sizeof(big)));
	WEFT_EXPECT_EQ(t, r.packets(), 2ull);
	WEFT_EXPECT_EQ(t, r.dropped(), 0ull);
}

/* A full ring drops whole records and counts them; reading makes room again. */
void drops_when_full(Test &t)
{
	const size_t size = hdr + 3 * (rec + 1500) + 500;
	auto ring = CaptureRing::create(Gfp::Sleep, size);
	WEFT_ASSERT_OK(t, ring);
	CaptureRing &r = *ring.value();
	static uint8_t pkt[1500], out[8192];
	int accepted = 0;
	for (int i = 0; i < 10; i++)
		accepted += r.push(ConstBytes(pkt), fake_clock);
	WEFT_EXPECT_EQ(t, accepted, 3);
	WEFT_EXPECT_EQ(t, r.dropped(), 7ull);
	WEFT_EXPECT_EQ(t, r.available(), hdr + 3 * (rec + 1500));
	/* Room for one record only after the reader took header and one record. */
	WEFT_EXPECT_EQ(t, drain(r, out, hdr + rec + 1500), hdr + rec + 1500);
	WEFT_EXPECT_TRUE(t, r.push(ConstBytes(pkt), fake_clock));
	WEFT_EXPECT_FALSE(t, r.push(ConstBytes(pkt), fake_clock));
	WEFT_EXPECT_EQ(t, r.packets(), 4ull);
	WEFT_EXPECT_EQ(t, r.dropped(), 8ull);
}

/* Records that wrap around the end of the ring come out intact, in order. */
void wraps_around(Test &t)
{
	const size_t size = hdr + rec + capture_snaplen + 7;
	auto ring = CaptureRing::create(Gfp::Sleep, size);
	WEFT_ASSERT_OK(t, ring);
	CaptureRing &r = *ring.value();
	static uint8_t out[hdr + rec + 1500];
	WEFT_ASSERT_EQ(t, drain(r, out, hdr), hdr);
	uint8_t pkt[333];
	for (int i = 0; i < 100; i++) {
		for (size_t j = 0; j < sizeof(pkt); j++)
			pkt[j] = static_cast<uint8_t>(i * 13 + j);
		fake_ns = uint64_t(i);
		WEFT_ASSERT_TRUE(t, r.push(ConstBytes(pkt), fake_clock));
		/* Read in two uneven pieces to end reads mid-record too. */
		size_t n = drain(r, out, 100);
		n += drain(r, out + n, sizeof(out));
		WEFT_ASSERT_EQ(t, n, rec + sizeof(pkt));
		const auto *h = reinterpret_cast<const PcapRecordHeader *>(out);
		WEFT_EXPECT_EQ(t, h->ts_frac.get(), uint32_t(i));
		WEFT_EXPECT_EQ(t, h->incl_len.get(), uint32_t(sizeof(pkt)));
		WEFT_EXPECT_EQ(t, __builtin_memcmp(out + rec, pkt, sizeof(pkt)), 0);
	}
	WEFT_EXPECT_EQ(t, r.dropped(), 0ull);
}

/* A sink that fails first consumes nothing: the bytes are read again. */
void sink_error_keeps_bytes(Test &t)
{
	auto ring = CaptureRing::create(Gfp::Sleep, 8192);
	WEFT_ASSERT_OK(t, ring);
	auto r = ring.value()->read(100, [](const uint8_t *, size_t) -> Result<void> { return Error(err::EFAULT); });
	WEFT_EXPECT_ERR(t, r, err::EFAULT);
	WEFT_EXPECT_EQ(t, ring.value()->available(), hdr);
}

/* A node with one port and no cable, as a capture point outside the subnet. */
class TestNode final : public Node {
public:
	void receive(Port &, Own<PacketBuf>) override {}
	Port *port(uint8_t num) override { return num == 1 ? &port_ : nullptr; }
	uint8_t port_count() const override { return 1; }
	bool is_switch() const override { return false; }
	Port port_{*this, 1};
};

Result<size_t> read_some(Capture &c, uint8_t *out, size_t n)
{
	return c.read(n, true, [&](const uint8_t *src, size_t len) -> Result<void> {
		__builtin_memcpy(out, src, len);
		out += len;
		return ok();
	});
}

size_t read_count(Capture &c, uint8_t *out, size_t n)
{
	auto r = read_some(c, out, n);
	return r ? r.value() : 99999;
}

/*
 * open/tap/read/remove/close as the debugfs file drives them: one reader,
 * the tap seals what it records, and a port going away ends the capture
 * (what was captured is still read, then end of file) without the file
 * ever touching the port again.
 */
void capture_lifecycle(Test &t)
{
	auto *n = new (Gfp::Sleep) TestNode();
	WEFT_ASSERT_TRUE(t, n != nullptr);
	Port &p = n->port_;
	WEFT_EXPECT_ERR(t, Capture::open(p), err::ENODEV); /* no files yet */
	Capture::add_node(*n, "kunit_capture");
	auto c = Capture::open(p);
	WEFT_ASSERT_OK(t, c);
	Capture &cap = *c.value();
	WEFT_EXPECT_ERR(t, Capture::open(p), err::EBUSY);
	static uint8_t out[512];
	WEFT_EXPECT_EQ(t, read_count(cap, out, sizeof(out)), hdr);
	WEFT_EXPECT_ERR(t, read_some(cap, out, sizeof(out)), err::EAGAIN);

	uint8_t pl[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	auto pkt = PacketBuf::alloc(Gfp::Sleep, 128);
	WEFT_ASSERT_OK(t, pkt);
	auto len = hca::build(Bytes(pkt.value()->data(), 128),
			      fixture::sample(opcode(Transport::Rc, op::SendOnly), ConstBytes(pl), false), false);
	WEFT_ASSERT_OK(t, len);
	pkt.value()->len = static_cast<uint32_t>(len.value());
	p.tap(*pkt.value());
	WEFT_EXPECT_TRUE(t, pkt.value()->sealed);
	auto crcs = check_crcs(pkt.value()->bytes());
	WEFT_EXPECT_TRUE(t, crcs && crcs.value() == CrcCheck::Ok);
	WEFT_EXPECT_EQ(t, __atomic_load_n(&p.capture_packets, __ATOMIC_RELAXED), 1ull);

	Capture::remove_node(*n);
	WEFT_EXPECT_TRUE(t, cap.detached());
	WEFT_EXPECT_ERR(t, Capture::open(p), err::ENODEV);
	p.tap(*pkt.value()); /* nothing attached any more */
	WEFT_EXPECT_EQ(t, __atomic_load_n(&p.capture_packets, __ATOMIC_RELAXED), 1ull);
	delete n;
	/* The record is still there, byte for byte; then end of file, not EAGAIN. */
	auto r = read_some(cap, out, sizeof(out));
	WEFT_ASSERT_OK(t, r);
	WEFT_EXPECT_EQ(t, r.value(), rec + len.value());
	WEFT_EXPECT_EQ(t, __builtin_memcmp(out + rec, pkt.value()->data(), len.value()), 0);
	WEFT_EXPECT_EQ(t, read_count(cap, out, sizeof(out)), size_t(0));
	cap.close();
	WEFT_EXPECT_EQ(t, capture_users.load(Order::Relaxed), 0);
}

} // namespace

WEFT_TEST_SUITE(weft_hca_capture, WEFT_CASE(file_header), WEFT_CASE(record_format), WEFT_CASE(drops_when_full),
		WEFT_CASE(wraps_around), WEFT_CASE(sink_error_keeps_bytes), WEFT_CASE(capture_lifecycle));
