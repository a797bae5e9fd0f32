// SPDX-License-Identifier: GPL-2.0
/*
 * Capture of fabric traffic to pcap: the ring of pcap records, the tap,
 * and captures attaching to and detaching from ports (capture.h).
 */
#include <weft/log.h>

#include "capture.h"
#include "capture_kapi.h"
#include "hca_module.h"

namespace weft::hca {

constinit Atomic<int> capture_users;
unsigned int capture_ring_kb = 1024;

namespace {
const Logger log("weft_hca");

/* The smallest ring that holds the file header and one full record. */
constexpr size_t ring_min = sizeof(PcapFileHeader) + sizeof(PcapRecordHeader) + capture_snaplen;
} // namespace

CaptureRing::CaptureRing(Array<uint8_t> buf)
	: lock_(WEFT_LOCK_CLASS("weft_hca_capture_ring")), buf_(move(buf))
{
}

Result<Own<CaptureRing>> CaptureRing::create(Gfp gfp, size_t bytes)
{
	if (bytes < ring_min)
		return Error(err::EINVAL);
	auto buf = WEFT_TRY(Array<uint8_t>::make(gfp, bytes));
	auto ring = WEFT_TRY(make_own<CaptureRing>(gfp, move(buf)));
	PcapFileHeader h;
	h.magic.set(pcap_magic_nsec);
	h.version_major.set(2);
	h.version_minor.set(4);
	h.snaplen.set(capture_snaplen);
	h.linktype.set(linktype_infiniband);
	/* Not yet visible to anyone: no lock needed. */
	ring->head_.store(ring->put(0, &h, sizeof(h)), Order::Relaxed);
	return ring;
}

uint64_t CaptureRing::put(uint64_t pos, const void *src, size_t len)
{
	size_t off = pos % buf_.size();
	size_t first = buf_.size() - off < len ? buf_.size() - off : len;
	__builtin_memcpy(buf_.data() + off, src, first);
	__builtin_memcpy(buf_.data(), static_cast<const uint8_t *>(src) + first, len - first);
	return pos + len;
}

bool CaptureRing::push(ConstBytes pkt, uint64_t (*clock)(void))
{
	uint32_t incl = pkt.size() < capture_snaplen ? static_cast<uint32_t>(pkt.size()) : capture_snaplen;
	size_t need = sizeof(PcapRecordHeader) + incl;
	SpinGuardIrq g(lock_);
	/* Acquire: the reader is done with the bytes it released. */
	uint64_t tail = tail_.load(Order::Acquire);
	/* Relaxed: head_ is written only under lock_, which we hold. */
	const uint64_t head = head_.load(Order::Relaxed);
	if (buf_.size() - (head - tail) < need) {
		dropped_.fetch_add(1, Order::Relaxed);
		return false;
	}
	uint64_t ns = clock();
	PcapRecordHeader r;
	r.ts_sec.set(static_cast<uint32_t>(ns / 1000000000u));
	r.ts_frac.set(static_cast<uint32_t>(ns % 1000000000u));
	r.incl_len.set(incl);
	r.orig_len.set(static_cast<uint32_t>(pkt.size()));
	uint64_t pos = put(head, &r, sizeof(r));
	pos = put(pos, pkt.data(), incl);
	/* Release: the reader sees a record only once all of it is written. */
	head_.store(pos, Order::Release);
	packets_.fetch_add(1, Order::Relaxed);
	return true;
}

size_t CaptureRing::available() const
{
	/* Relaxed tail_: only the reader, the caller, writes it. */
	return static_cast<size_t>(head_.load(Order::Acquire) - tail_.load(Order::Relaxed));
}

Capture::Capture(Port &p, Own<CaptureRing> ring)
	: ring_(move(ring)), readable_(WEFT_LOCK_CLASS("weft_hca_capture_readable")),
	  read_lock_(WEFT_LOCK_CLASS("weft_hca_capture_read")), port_(&p)
{
	format(label_, sizeof(label_), "%s port%u", p.node.capture_name ? p.node.capture_name : "?", p.num);
}

Result<Capture *> Capture::open(Port &port)
{
	/* Allocate before looking: a busy port costs one ring allocation. */
	auto ring = WEFT_TRY(CaptureRing::create(Gfp::Sleep, size_t(capture_ring_kb) * 1024));
	auto c = WEFT_TRY(make_own<Capture>(Gfp::Sleep, port, move(ring)));
	MutexGuard g(Fabric::get().capture_lock);
	if (!port.capture_open_ok_)
		return Error(err::ENODEV);
	if (port.capture_.load(Order::Relaxed)) /* written only under capture_lock */
		return Error(err::EBUSY);
	port.capture_.store(c.get(), Order::Release);
	capture_users.fetch_add(1, Order::Relaxed);
	log.info("%s: capture started", c->label_);
	return c.release();
}

void Capture::detach_locked()
{
	Fabric::get().capture_lock.assert_held();
	port_->capture_.store(nullptr, Order::Release);
	capture_users.fetch_sub(1, Order::Relaxed);
	port_ = nullptr;
	detached_.store(true, Order::Release);
	readable_.wake_all();
}

void Capture::close()
{
	{
		MutexGuard g(Fabric::get().capture_lock);
		if (port_)
			detach_locked();
	}
	/* No tap is still recording into the ring once a grace period has passed. */
	weft_synchronize_rcu();
	log.info("%s: capture stopped: %llu packets, %llu dropped (ring full)", label_,
		 static_cast<unsigned long long>(ring_->packets()),
		 static_cast<unsigned long long>(ring_->dropped()));
	delete this;
}

void Capture::record(Port &at, ConstBytes pkt)
{
	/* Raw builtins: these two are plain u64s that debugfs reads (fabric.h). */
	if (ring_->push(pkt, weft_capture_clock_ns))
		__atomic_fetch_add(&at.capture_packets, 1, __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&at.capture_dropped, 1, __ATOMIC_RELAXED);
	readable_.wake_all();
}

void Capture::add_node(Node &n, const char *name)
{
	::dentry *dir = weft_capture_debugfs_dir(name);
	for (uint8_t i = 1; i <= n.port_count(); i++) {
		Port *p = n.port(i);
		if (p)
			weft_capture_debugfs_port(dir, i, p, &p->capture_packets, &p->capture_dropped);
	}
	MutexGuard g(Fabric::get().capture_lock);
	n.capture_dir = dir;
	n.capture_name = name;
	for (uint8_t i = 1; i <= n.port_count(); i++) {
		Port *p = n.port(i);
		if (p)
			p->capture_open_ok_ = dir != nullptr;
	}
}

void Capture::remove_node(Node &n)
{
	::dentry *dir;
	{
		MutexGuard g(Fabric::get().capture_lock);
		for (uint8_t i = 0; i <= n.port_count(); i++) {
			Port *p = n.port(i);
			if (!p)
				continue;
			p->capture_open_ok_ = false;
			if (Capture *c = p->capture_.load(Order::Relaxed)) /* we hold capture_lock */
				c->detach_locked();
		}
		dir = exchange(n.capture_dir, nullptr);
	}
	/* Readers were woken and see the end of the capture: nothing blocks this. */
	weft_capture_debugfs_remove(dir);
}

/*
 * A port receives what its peer transmits, so this one call site sees
 * both directions: this port's capture (what it sends) and its peer's
 * (what that receives).
 */
void Port::tap_slow(PacketBuf &pkt)
{
	RcuReadGuard rcu;
	Capture *tx = capture_.load(Order::Acquire);
	Port *p = peer();
	Capture *rx = p ? p->capture_.load(Order::Acquire) : nullptr;
	if (!tx && !rx)
		return;
	/* A payload whose sender's memory went away is not captured: the packet is lost anyway. */
	if (!pkt.materialize())
		return;
	/* What goes on a real wire carries its CRCs; one too short to seal is captured as it is. */
	(void)pkt.seal();
	if (tx)
		tx->record(*this, pkt.bytes());
	if (rx)
		rx->record(*p, pkt.bytes());
}

} // namespace weft::hca

using weft::hca::Capture;

void weft_hca_capture_init(unsigned int ring_kb)
{
	weft::hca::capture_ring_kb = ring_kb;
	weft_capture_debugfs_init();
}

void weft_hca_capture_exit(void)
{
	weft_capture_debugfs_exit();
}

int weft_capture_file_open(void *port, void **file)
{
	auto r = Capture::open(*static_cast<weft::hca::Port *>(port));
	if (!r)
		return r.to_errno();
	*file = r.value();
	return 0;
}

long weft_capture_file_read(void *file, void *ubuf, size_t len, bool nonblock)
{
	auto *dst = static_cast<uint8_t *>(ubuf);
	auto r = static_cast<Capture *>(file)->read(len, nonblock,
						    [&](const uint8_t *src, size_t n) -> weft::Result<void> {
							    if (weft_capture_copy_to_user(dst, src, n))
								    return weft::Error(weft::err::EFAULT);
							    dst += n;
							    return weft::ok();
						    });
	return r ? static_cast<long>(r.value()) : r.to_errno();
}

void weft_capture_file_release(void *file)
{
	static_cast<Capture *>(file)->close();
}
