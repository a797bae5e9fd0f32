// SPDX-License-Identifier: GPL-2.0
/*
 * The measurements.  Bandwidth keeps a window of work requests in flight
 * and counts completed bytes over wall time; latency is a SEND ping-pong
 * (one thread drives both ends, so half the round trip is one-way
 * latency); the ceiling is memcpy between two buffers of the same size.
 */
#include <weft/copy.h>
#include <weft/log.h>
#include <weft/verbs/test_pair.h>

#include "bench.h"

namespace weft::bench {

using namespace weft::verbs;
using namespace weft::verbs::testing;

namespace {

const Logger log("weft_bench");

constexpr size_t sizes_bw[] = {64, 256, 1024, 4096, 16384, 65536, 262144, 1 << 20};
constexpr size_t sizes_lat[] = {8, 64, 512, 4096};
constexpr uint32_t window = 16;
constexpr size_t max_size = 1 << 20;

uint64_t now() { return weft_ktime_ns(); }

/* Busy-poll one completion, yielding so the fabric's workers run. */
Result<Wc> poll_one(Cq *cq)
{
	Wc wc;
	uint64_t deadline = now() + 10ull * 1000 * 1000 * 1000;
	while (cq->poll(Span<Wc>(&wc, 1)) == 0) {
		if (now() > deadline)
			return Error(err::ETIMEDOUT);
		weft_cond_resched();
	}
	if (wc.status != WcStatus::Success)
		return Error(err::EIO);
	return wc;
}

void report(const char *what, size_t size, uint64_t bytes, uint64_t ns)
{
	uint64_t mbs = ns ? bytes * 1000 / ns : 0; /* bytes/ns * 1000 = MB/s */
	log.info("WEFT-BENCH %s %zu %llu MB/s", what, size, static_cast<unsigned long long>(mbs));
}

/*
 * The copy ceiling: the kernel's memcpy, and the datapath's own copies
 * against the kernel's checksumming copy (weft/copy.h says why both).
 */
template <typename Copy> void copy_rate(const char *what, uint8_t *a, uint8_t *b, unsigned int seconds, Copy copy)
{
	for (size_t size : sizes_bw) {
		uint64_t start = now(), bytes = 0, limit = seconds * 1000000000ull;
		while (now() - start < limit) {
			for (int i = 0; i < 64; i++)
				copy(b, a, size);
			bytes += 64 * size;
			weft_cond_resched();
		}
		report(what, size, bytes, now() - start);
	}
}

void memcpy_ceiling(uint8_t *a, uint8_t *b, unsigned int seconds)
{
	copy_rate("memcpy", a, b, seconds, [](uint8_t *d, const uint8_t *s, size_t n) { __builtin_memcpy(d, s, n); });
	copy_rate("copy_bytes", a, b, seconds, [](uint8_t *d, const uint8_t *s, size_t n) { copy_bytes(d, s, n); });
	copy_rate("kernel_csum_copy", a, b, seconds,
		  [](uint8_t *d, const uint8_t *s, size_t n) { weft_csum_copy(d, s, n); });
	copy_rate("copy_csum", a, b, seconds, [](uint8_t *d, const uint8_t *s, size_t n) { copy_csum(d, s, n); });
}

/*
 * Keep @window requests in flight for @seconds: post() starts one,
 * reap() waits for one to finish.  Returns the elapsed ns; @done counts
 * finished requests.
 */
template <typename Post, typename Reap>
Result<uint64_t> windowed(unsigned int seconds, uint64_t &done, Post post, Reap reap)
{
	uint64_t start = now(), limit = seconds * 1000000000ull;
	uint32_t out = 0;
	done = 0;
	while (now() - start < limit || out) {
		if (now() - start < limit && out < window) {
			WEFT_TRY(post());
			out++;
			continue;
		}
		WEFT_TRY(reap());
		out--;
		done++;
	}
	return now() - start;
}

/* RDMA WRITE or READ of @size bytes from a's buffer to b's. */
Result<void> rdma_bw_one(Pair &c, WrOpcode op, uint8_t *local, uint8_t *remote, Mr *rmr, size_t size,
			 unsigned int seconds)
{
	Sge sg{reinterpret_cast<uint64_t>(local), uint32_t(size), c.a.mr->lkey};
	SendWr wr;
	wr.opcode = op;
	wr.sg = Span<const Sge>(&sg, 1);
	wr.rdma.remote_addr = reinterpret_cast<uint64_t>(remote);
	wr.rdma.rkey = rmr->rkey;
	uint64_t n;
	uint64_t ns = WEFT_TRY(windowed(
		seconds, n, [&] { return c.a.qp->post_send(wr); },
		[&]() -> Result<void> {
			WEFT_TRY(poll_one(c.a.cq));
			return ok();
		}));
	report(op == WrOpcode::RdmaWrite ? "rc_write" : "rc_read", size, n * size, ns);
	return ok();
}

Result<void> rdma_bw(Pair &c, WrOpcode op, uint8_t *local, uint8_t *remote, Mr *rmr,
		     unsigned int seconds)
{
	for (size_t size : sizes_bw)
		WEFT_TRY(rdma_bw_one(c, op, local, remote, rmr, size, seconds));
	return ok();
}

Result<void> post_recv(Side &s, uint8_t *buf, size_t size)
{
	Sge sg{reinterpret_cast<uint64_t>(buf), uint32_t(size), s.mr->lkey};
	RecvWr r;
	r.sg = Span<const Sge>(&sg, 1);
	return s.qp->post_recv(r);
}

/* SEND bandwidth at one size: b keeps @window receives posted. */
Result<void> send_bw(Pair &c, size_t size, uint8_t *src, uint8_t *dst, unsigned int seconds)
{
	for (uint32_t i = 0; i < window; i++)
		WEFT_TRY(post_recv(c.b, dst, size));
	Sge sg{reinterpret_cast<uint64_t>(src), uint32_t(size), c.a.mr->lkey};
	SendWr wr;
	wr.opcode = WrOpcode::Send;
	wr.sg = Span<const Sge>(&sg, 1);
	uint64_t n;
	uint64_t ns = WEFT_TRY(windowed(
		seconds, n, [&] { return c.a.qp->post_send(wr); },
		[&]() -> Result<void> {
			WEFT_TRY(poll_one(c.a.cq));
			WEFT_TRY(poll_one(c.b.cq));
			return post_recv(c.b, dst, size);
		}));
	report("rc_send", size, n * size, ns);
	return ok();
}

/* SEND ping-pong of @size bytes; reports the one-way latency in ns. */
Result<void> send_lat_one(Pair &c, uint8_t *a_buf, uint8_t *b_buf, size_t size, unsigned int seconds)
{
	Sge sa{reinterpret_cast<uint64_t>(a_buf), uint32_t(size), c.a.mr->lkey};
	Sge sb{reinterpret_cast<uint64_t>(b_buf), uint32_t(size), c.b.mr->lkey};
	SendWr wa, wb;
	wa.opcode = wb.opcode = WrOpcode::Send;
	wa.sg = Span<const Sge>(&sa, 1);
	wb.sg = Span<const Sge>(&sb, 1);
	uint64_t start = now(), iters = 0, limit = seconds * 1000000000ull;
	while (now() - start < limit) {
		WEFT_TRY(post_recv(c.b, b_buf, size));
		WEFT_TRY(post_recv(c.a, a_buf, size));
		WEFT_TRY(c.a.qp->post_send(wa));
		WEFT_TRY(poll_one(c.b.cq)); /* b's receive */
		WEFT_TRY(c.b.qp->post_send(wb));
		WEFT_TRY(poll_one(c.a.cq)); /* a's send completion ... */
		WEFT_TRY(poll_one(c.a.cq)); /* ... and its receive */
		WEFT_TRY(poll_one(c.b.cq)); /* b's send completion */
		iters++;
	}
	uint64_t ns = (now() - start) / (iters ? iters : 1) / 2;
	log.info("WEFT-BENCH rc_send_lat %zu %llu ns", size, static_cast<unsigned long long>(ns));
	return ok();
}

Result<void> send_lat(Pair &c, uint8_t *a_buf, uint8_t *b_buf, unsigned int seconds)
{
	for (size_t size : sizes_lat)
		WEFT_TRY(send_lat_one(c, a_buf, b_buf, size, seconds));
	return ok();
}

Result<void> run(unsigned int seconds)
{
	Buf a(max_size), b(max_size);
	if (!a.p || !b.p)
		return Error(err::ENOMEM);
	a.pattern(1);
	b.pattern(2);
	memcpy_ceiling(a.p, b.p, seconds);
	{
		Pair c;
		WEFT_TRY(c.connect(QpType::Rc, iba::Mtu::M4096));
		Mr *rmr = WEFT_TRY(c.b.ctx->reg_kernel_mr(c.b.pd, b.p, max_size,
							  access::local_write | access::remote_write |
								  access::remote_read));
		WEFT_TRY(rdma_bw(c, WrOpcode::RdmaWrite, a.p, b.p, rmr, seconds));
		WEFT_TRY(rdma_bw(c, WrOpcode::RdmaRead, a.p, b.p, rmr, seconds));
	}
	for (size_t size : sizes_bw) {
		/* A fresh connection per size: no receives of another size left over. */
		Pair c;
		WEFT_TRY(c.connect(QpType::Rc, iba::Mtu::M4096));
		WEFT_TRY(send_bw(c, size, a.p, b.p, seconds));
	}
	{
		Pair c;
		WEFT_TRY(c.connect(QpType::Rc, iba::Mtu::M4096));
		WEFT_TRY(send_lat(c, a.p, b.p, seconds));
	}
	return ok();
}

} // namespace

} // namespace weft::bench

int weft_bench_one(const char *what, unsigned int seconds)
{
	using namespace weft::bench;
	Buf a(max_size), b(max_size);
	if (!a.p || !b.p)
		return -weft::err::ENOMEM;
	if (__builtin_strcmp(what, "memcpy") == 0) {
		/* The ceiling alone, for make bench-verbs (perftest measures the fabric). */
		a.pattern(1);
		b.pattern(2);
		memcpy_ceiling(a.p, b.p, seconds);
		return 0;
	}
	Pair c;
	bool lat = __builtin_strcmp(what, "lat") == 0;
	if (!lat && __builtin_strcmp(what, "write64k") != 0)
		return -weft::err::EINVAL;
	auto r = c.connect(QpType::Rc, weft::iba::Mtu::M4096);
	if (r && lat)
		r = send_lat_one(c, a.p, b.p, 64, seconds);
	else if (r) {
		auto mr = c.b.ctx->reg_kernel_mr(c.b.pd, b.p, max_size, access::local_write | access::remote_write);
		r = mr ? rdma_bw_one(c, WrOpcode::RdmaWrite, a.p, b.p, mr.value(), 65536, seconds)
		       : weft::Result<void>(mr.error());
	}
	return r.to_errno();
}

int weft_bench_run(unsigned int seconds_per_point)
{
	auto r = weft::bench::run(seconds_per_point ? seconds_per_point : 1);
	if (!r)
		weft::bench::log.err("benchmark failed: errno %d", r.error().code());
	return r.to_errno();
}
