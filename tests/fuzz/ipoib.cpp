// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: what IPoIB's C++ reads from outside (ulp/ipoib): a UD
 * receive buffer (GRH room, encapsulation header, RFC 4391 §6) with any
 * completion length, a connected-mode receive (RFC 4755), the private data
 * of a CM REQ/REP, the 20-byte link-layer address a sender's pseudo header
 * carries (from a neighbour entry or a packet socket) sent through the
 * destination table with resolutions, failures, multicast lists and ageing
 * in virtual time, and the P_Key values of create_child and a port's
 * P_Key table.  The input is records (fuzz.h): an op byte, then its bytes.
 *
 * Checks: a frame is accepted only when its headers lie in what arrived and
 * in the buffer, its kind follows the DGID; private data gives an MTU of at
 * most the connected-mode maximum; the table never holds more than its
 * bound nor queues more than queue_max per entry, every packet given to it
 * comes back exactly once (sent, dropped, handed back on completion or
 * flush); a child P_Key is a partition with the full bit, an index found
 * names an entry of that partition, full before limited; names fit IFNAMSIZ.
 */
#include "fuzz.h"

#include "../../ulp/ipoib/addr.h"
#include "../../ulp/ipoib/cm_proto.h"
#include "../../ulp/ipoib/dest.h"
#include "../../ulp/ipoib/pkey.h"

using namespace weft;
using namespace weft::ipoib;

namespace {

constexpr uint16_t pkey = 0xffff;

uint32_t be32_at(ConstBytes r, size_t off)
{
	uint32_t v = 0;
	for (size_t i = 0; i < 4; i++)
		v = v << 8 | (off + i < r.size() ? r[off + i] : 0);
	return v;
}

/* A UD receive: buffer size from the input (as an MTU makes it), the record's bytes in it. */
void ud(ConstBytes r)
{
	const uint32_t sizes[] = {2048 + 44, 4096 + 44, 256 + 44, 44};
	const uint32_t size = sizes[be32_at(r, 0) & 3];
	const uint32_t byte_len = be32_at(r, 1) % (size + 64);
	const bool grh = be32_at(r, 5) & 1;
	auto *buf = static_cast<uint8_t *>(weft_kmalloc(size, 0));
	fuzz::check(buf, "buffer");
	const size_t n = r.size() > 6 ? r.size() - 6 : 0;
	__builtin_memset(buf, 0, size);
	__builtin_memcpy(buf, r.data() + (r.size() - n), n < size ? n : size);
	const RxFrame f = ud_frame(ConstBytes(buf, size), byte_len, grh, pkey);
	fuzz::check(f.ok == (byte_len >= grh_len + encap_len && byte_len <= size), "a UD frame fits what arrived");
	if (f.ok) {
		fuzz::check(f.len + grh_len + encap_len == byte_len, "the packet is what follows the headers");
		fuzz::check(f.proto == (uint16_t(buf[grh_len]) << 8 | buf[grh_len + 1]), "the EtherType");
		fuzz::check((f.kind != RxKind::Host) == (grh && buf[24] == 0xff), "multicast only by a GRH's DGID");
		if (f.kind == RxKind::Broadcast)
			fuzz::check(broadcast_mgid(pkey) == [&] {
				verbs::Gid g;
				__builtin_memcpy(g.raw, buf + 24, 16);
				return g;
			}(), "broadcast is the partition's group");
	}
	weft_kfree(buf);
}

void cm(ConstBytes r)
{
	const uint32_t byte_len = be32_at(r, 0) % (cmp::buf_size + 64);
	const size_t head = r.size() > 4 ? r.size() - 4 : 0;
	auto *buf = static_cast<uint8_t *>(weft_kmalloc(head ? head : 1, 0));
	fuzz::check(buf, "buffer");
	if (head)
		__builtin_memcpy(buf, r.data() + 4, head);
	const RxFrame f = cm_frame(ConstBytes(buf, head), byte_len, cmp::buf_size);
	if (f.ok) {
		fuzz::check(byte_len >= encap_len && byte_len <= cmp::buf_size && head >= encap_len, "a CM frame fits");
		fuzz::check(f.len + encap_len == byte_len, "the CM packet follows the header");
	}
	weft_kfree(buf);
}

void priv_data(ConstBytes r)
{
	uint32_t qpn = 0xdeadbeef;
	const uint32_t mtu = cmp::decode_mtu(r, &qpn);
	fuzz::check(mtu <= cmp::max_mtu, "a peer's MTU at most the CM maximum");
	if (r.size() < sizeof(cmp::PrivData))
		fuzz::check(mtu == 0, "short private data gives no MTU");
	if (mtu)
		fuzz::check(qpn <= HwAddr::Qpn::max, "a 24-bit QPN");
	/* What we send reads back. */
	const cmp::PrivData p = cmp::encode(be32_at(r, 0), cmp::buf_size);
	uint32_t q2 = 0;
	fuzz::check(cmp::decode_mtu(ConstBytes(reinterpret_cast<const uint8_t *>(&p), sizeof(p)), &q2) ==
			    cmp::max_mtu &&
		    q2 == (be32_at(r, 0) & HwAddr::Qpn::max),
		    "our private data reads back");
}

void pkeys(ConstBytes r)
{
	const long v = static_cast<long>(static_cast<int32_t>(be32_at(r, 0)));
	auto k = child_pkey(v);
	fuzz::check(bool(k) == (v > 0 && v <= 0xffff && v != 0x8000), "a child P_Key is a partition");
	if (k)
		fuzz::check((k.value() & pkey_full_bit) && pkey_base(k.value()) == pkey_base(uint16_t(v)),
			    "a child is a full member of the partition given");
	uint16_t table[64];
	size_t n = 0;
	for (size_t i = 4; i + 1 < r.size() && n < 64; i += 2)
		table[n++] = uint16_t(r[i] << 8 | r[i + 1]);
	const uint16_t want = uint16_t(be32_at(r, 1));
	auto idx = pkey_index_in(table, n, want);
	if (idx) {
		const uint16_t e = table[idx.value()];
		fuzz::check(idx.value() < n && pkey_base(e) && pkey_base(e) == pkey_base(want), "the entry found matches");
		if (!(e & pkey_full_bit))
			for (size_t i = 0; i < n; i++)
				fuzz::check(!(pkey_base(table[i]) == pkey_base(want) && (table[i] & pkey_full_bit)),
					    "a full member before a limited one");
	}
	char parent[40] = {}, name[16];
	for (size_t i = 0; i < sizeof(parent) - 1 && 4 + i < r.size(); i++)
		parent[i] = char(r[4 + i]);
	child_name(name, sizeof(name), parent, uint16_t(v));
	fuzz::check(__builtin_strlen(name) < 16, "a child's name fits IFNAMSIZ");
}

/* The destination table as an interface drives it (xmit, resolve work, rx_mode, reaping, flush). */
struct Table {
	DestTable t;
	uint64_t now = 0;
	uint32_t given = 0, back = 0; /* packets in, packets out */
	uintptr_t next_pkt = 1;

	void took(uint32_t n) { back += n; }
	void drain(DestList &l)
	{
		while (Dest *d = l.pop_front()) {
			took(d->nqueued);
			delete d;
		}
	}
	void step(ConstBytes r)
	{
		const uint8_t op = r.empty() ? 0 : r[0];
		now += op >> 4;
		HwAddr a{};
		const size_t alen = r.size() > 1 ? min(r.size() - 1, sizeof(a)) : 0;
		if (alen)
			__builtin_memcpy(&a, r.data() + 1, alen);
		switch (op & 7) {
		case 0:
		case 1: {
			given++;
			auto d = t.send(a.gid_value(), reinterpret_cast<void *>(next_pkt++), a.qpn(), now);
			if (d.verdict != DestTable::Verdict::Queued)
				took(1);
			if (d.verdict == DestTable::Verdict::Send)
				fuzz::check(d.ah, "a valid entry has an address handle");
			break;
		}
		case 2:
		case 3: {
			DestTable::Claim c;
			if (!t.claim(c))
				break;
			Resolved res;
			res.ah = reinterpret_cast<verbs::Ah *>(0x1000);
			Pending out[Dest::queue_max];
			uint32_t n = 0;
			if ((op & 7) == 3 && (op & 8))
				t.take_all(flushed); /* the claim goes stale */
			if (t.complete(c, (op & 1) ? nullptr : &res, now, out, n)) {
				fuzz::check(n <= Dest::queue_max, "at most queue_max waited");
				took(n);
			} else {
				fuzz::check(n == 0, "a stale claim hands back nothing");
			}
			break;
		}
		case 4: {
			verbs::Gid g[4];
			size_t n = 0;
			for (size_t i = 1; i + 16 <= r.size() && n < 4; i += 16) {
				__builtin_memcpy(g[n].raw, r.data() + i, 16);
				g[n].raw[0] = 0xff;
				n++;
			}
			DestList gone;
			t.set_members(g, n, gone);
			drain(gone);
			break;
		}
		case 5: {
			DestList idle;
			t.take_idle(now, op >> 4, idle);
			drain(idle);
			break;
		}
		case 6: {
			Resolved res;
			res.ah = reinterpret_cast<verbs::Ah *>(0x2000);
			(void)t.install(broadcast_mgid(pkey), res, true);
			break;
		}
		default:
			t.take_all(flushed);
			break;
		}
		drain(flushed);
		fuzz::check(t.size() <= DestTable::max_entries, "the table is bounded");
		fuzz::check(back <= given, "no packet comes back twice");
	}
	DestList flushed;
};

} // namespace

WEFT_FUZZ_TARGET(const uint8_t *data, size_t size)
{
	auto *tb = new (Gfp::Sleep) Table;
	fuzz::check(tb, "table");
	fuzz::Records in(data, size);
	ConstBytes rec;
	while (in.next(rec, 4200)) {
		if (rec.empty())
			continue;
		const ConstBytes r(rec.data() + 1, rec.size() - 1);
		switch (rec[0] % 5) {
		case 0: ud(r); break;
		case 1: cm(r); break;
		case 2: priv_data(r); break;
		case 3: pkeys(r); break;
		default: tb->step(r); break;
		}
	}
	tb->t.take_all(tb->flushed);
	tb->drain(tb->flushed);
	fuzz::check(tb->back == tb->given, "every packet comes back");
	delete tb;
	return 0;
}
