// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the WQEs a process writes into the rings of a uverbs QP
 * (userspace/uverbs/wqe.cpp): CREATE_QP's caps (qp_caps()) and the slot
 * sizes they give, send WQEs converted at the doorbell
 * (convert_send_wqe(), as UQp::doorbell() calls it) and receive WQEs
 * taken as a message arrives (take_recv_wqe()), with the process
 * rewriting ring headers and slots at any time and creating and
 * destroying the AHs (and other objects) a UD WQE names by handle
 * (handles.cpp).  The input is records (fuzz.h): the first is the
 * CREATE_QP request (abi::CreateQp; the soft HCA's limits, or with
 * `reserved` set a device offering up to 31 SGEs); each later one an
 * operation byte and its argument:
 *   0 a send WQE written at the process's SQ index (a fix-up byte, then
 *     the slot's bytes), the index advanced;  1 the doorbell: every WQE
 *     between the kernel's index and the process's converted;
 *   2 a receive WQE written at the RQ index, advanced;  3 up to N
 *     receive WQEs taken;  4 a ring header word rewritten;
 *   5 an AH (on the QP's PD or another) or a PD object created;
 *   6 an object destroyed by handle.
 * Each ring is poisoned for ASan but the slot the kernel reads, so a read
 * outside it is a report; the SGE array convert fills is a heap block of
 * verbs::RecvEntry::max_sge entries.  Checked: caps within the device's
 * and that array's, and the slots room for them; a converted WQE's
 * opcode and flags are the process's, its SGEs (or inline data) lie in
 * the slot and number within the QP's caps, a UD WQE's AH is a live AH on
 * the QP's PD; a taken receive WQE has the process's SGEs, none if it
 * claimed more than the caps; the kernel's indices stay in the ring.
 */
#include "fuzz.h"

#include "../../userspace/uverbs/wqe.h"

using namespace weft;
using namespace weft::uverbs;

extern "C" void __asan_poison_memory_region(void const volatile *addr, size_t size);
extern "C" void __asan_unpoison_memory_region(void const volatile *addr, size_t size);

/* --- ring memory (uverbs_kapi.h) ---------------------------------------------- */

extern "C" {

void *weft_uverbs_ring_alloc(size_t size)
{
	void *p = weft_kmalloc(size, 0);
	if (p)
		__builtin_memset(p, 0, size);
	return p;
}

void weft_uverbs_ring_free(void *p)
{
	(void)p; /* unpoisoned by the target before the last reference goes */
	weft_kfree(p);
}

} // extern "C"

namespace {

/* The soft HCA's limits (drivers/hca/hca.cpp device_attr()). */
verbs::DeviceAttr hca_attr()
{
	verbs::DeviceAttr a;
	a.max_qp_wr = 16383;
	a.max_send_sge = a.max_recv_sge = a.max_srq_sge = verbs::RecvEntry::max_sge;
	return a;
}

/* The kernel reads only slot @i while the rest of the ring's elements stay poisoned. */
class Guard {
public:
	Guard(const Ring &r, uint32_t i) : p_(r.slot(i)), n_(r.elem_size)
	{
		__asan_unpoison_memory_region(p_, n_);
	}
	~Guard() { __asan_poison_memory_region(p_, n_); }

private:
	uint8_t *p_;
	size_t n_;
};

void poison_slots(const Ring &r)
{
	__asan_poison_memory_region(r.slot(0), size_t(r.mask + 1) * r.elem_size);
}

void unpoison(const Ring &r)
{
	__asan_unpoison_memory_region(r.kva(), r.bytes);
}

alignas(verbs::Context) uint8_t ctx_storage[sizeof(verbs::Context)]; /* never used: a Pd's owner */
verbs::Context &no_context()
{
	return *reinterpret_cast<verbs::Context *>(ctx_storage);
}

struct Qp {
	UQp::Caps caps{};
	verbs::QpType type = verbs::QpType::Rc;
	Ref<Ring> sq, rq;
	uint32_t sq_prod = 0, rq_prod = 0; /* the process's indices */
	uint32_t fetch = 0, rq_cons = 0;   /* the kernel's */
	verbs::Pd pd{no_context(), 1}, other_pd{no_context(), 2};
	verbs::Ah ah_mine{pd, verbs::AhAttr{}}, ah_other{other_pd, verbs::AhAttr{}};
	Objects objs;
	uint32_t handles[16] = {};
	uint32_t nhandles = 0;
	static constexpr uint32_t inline_lkey = 0x1234;

	~Qp()
	{
		while (UObject *o = objs.pop())
			delete o;
		if (sq)
			unpoison(*sq);
		if (rq)
			unpoison(*rq);
	}
};

/* CREATE_QP: the caps, then rings of the sizes CREATE_QP makes (cmd_qp.cpp make_uqp()). */
bool create(Qp &q, ConstBytes rec)
{
	abi::CreateQp req{};
	__builtin_memcpy(&req, rec.data(), min(rec.size(), sizeof(req)));
	/* Rings of up to 64 slots: the ring's size is not this target's question. */
	req.max_send_wr %= 64;
	req.max_recv_wr %= 64;
	/* The soft HCA's limits, or (reserved set) a device offering up to 31 SGEs. */
	verbs::DeviceAttr a = hca_attr();
	if (req.reserved)
		a.max_send_sge = a.max_recv_sge = req.reserved % 32u;
	auto caps = qp_caps(req, a);
	constexpr uint32_t arr = verbs::RecvEntry::max_sge;
	if (!caps) {
		fuzz::check(req.max_send_sge > min(a.max_send_sge, arr) ||
				    req.max_recv_sge > min(a.max_recv_sge, arr) || req.max_inline_data > 512,
			    "caps refused only beyond the device's or the WQE's SGE array");
		return false;
	}
	q.caps = caps.value();
	fuzz::check(q.caps.max_send_sge <= a.max_send_sge && q.caps.max_recv_sge <= a.max_recv_sge &&
			    q.caps.max_send_sge <= arr && q.caps.max_recv_sge <= arr,
		    "caps within the device's and the WQE's SGE array");
	fuzz::check(q.caps.max_inline >= q.caps.max_send_sge * sizeof(rxe::Sge) &&
			    q.caps.max_inline >= req.max_inline_data,
		    "inline room covers the SGEs and what was asked");
	const size_t ss = send_slot_size(q.caps), rs = recv_slot_size(q.caps.max_recv_sge);
	fuzz::check(ss >= sizeof(rxe::SendWqe) + q.caps.max_inline &&
			    ss >= sizeof(rxe::SendWqe) + q.caps.max_send_sge * sizeof(rxe::Sge),
		    "a send slot holds the WQE and its SGEs or inline data");
	fuzz::check(rs >= sizeof(rxe::RecvWqe) + q.caps.max_recv_sge * sizeof(rxe::Sge),
		    "a receive slot holds the WQE and its SGEs");
	auto sq = Ring::make(max<uint32_t>(req.max_send_wr, 1), ss);
	auto rq = Ring::make(max<uint32_t>(req.max_recv_wr, 1), rs);
	if (!sq || !rq)
		return false;
	q.sq = move(sq.value());
	q.rq = move(rq.value());
	fuzz::check(q.sq->elem_size >= ss && q.rq->elem_size >= rs, "slots of the sizes asked");
	poison_slots(*q.sq);
	poison_slots(*q.rq);
	q.type = req.qp_type == uint8_t(verbs::QpType::Ud) ? verbs::QpType::Ud : verbs::QpType::Rc;
	return true;
}

/* The process writes a WQE into @r at its index @prod (fix-ups to reach deeper checks), and advances it. */
void post(Qp &q, const Ring &r, uint32_t &prod, ConstBytes arg, bool send)
{
	if (arg.empty())
		return;
	const uint8_t fix = arg[0];
	arg = ConstBytes(arg.data() + 1, arg.size() - 1);
	Guard g(r, prod);
	uint8_t *slot = r.slot(prod);
	__builtin_memset(slot, 0, r.elem_size);
	__builtin_memcpy(slot, arg.data(), min(arg.size(), r.elem_size));
	if (send) {
		rxe::SendWqe w;
		__builtin_memcpy(&w, slot, sizeof(w));
		if (fix & 1)
			w.wr.opcode %= 10;
		if (fix & 2)
			w.wr.send_flags &= 0xf;
		if (fix & 4)
			w.dma.num_sge %= q.caps.max_send_sge + 2;
		if (fix & 8)
			w.dma.length %= q.caps.max_inline + 2;
		if ((fix & 16) && q.nhandles)
			w.wr.wr.ud.ah_num = q.handles[w.wr.wr.ud.ah_num % q.nhandles] + 1;
		__builtin_memcpy(slot, &w, sizeof(w));
	} else if (fix & 1) {
		rxe::RecvWqe w;
		__builtin_memcpy(&w, slot, sizeof(w));
		w.dma.num_sge %= q.caps.max_recv_sge + 2;
		__builtin_memcpy(slot, &w, sizeof(w));
	}
	prod++;
	r.hdr().producer_index.store(prod, Order::Release);
}

/* The verbs opcode a process's IBV_WR_* becomes (qp_send.cpp's table, read here independently). */
bool expected_opcode(uint32_t op, verbs::WrOpcode &out)
{
	using O = verbs::WrOpcode;
	constexpr O map[] = {O::RdmaWrite, O::RdmaWriteWithImm, O::Send,      O::SendWithImm, O::RdmaRead,
			     O::AtomicCmpSwap, O::AtomicFetchAdd, O::LocalInv, O::BindMw,      O::SendWithInv};
	if (op >= sizeof(map) / sizeof(map[0]))
		return false;
	out = map[op];
	return true;
}

void check_send(const Qp &q, const uint8_t *slot, const rxe::SendWqe &w, const verbs::SendWr &wr,
		const verbs::Sge *sge)
{
	verbs::WrOpcode op;
	fuzz::check(expected_opcode(w.wr.opcode, op) && op == wr.opcode, "the process's opcode");
	fuzz::check(!(w.wr.send_flags & ~0xfu), "only the process's send flags");
	fuzz::check(wr.send_flags == (w.wr.send_flags & ~verbs::send_flag::inline_data), "send flags as written");
	fuzz::check(wr.wr_id == w.wr.wr_id, "wr_id as written");
	const size_t room = q.sq->elem_size - sizeof(rxe::SendWqe);
	const uint8_t *data = slot + sizeof(rxe::SendWqe);
	if (wr.opcode == verbs::WrOpcode::BindMw) {
		fuzz::check(wr.sg.empty(), "a bind carries no data");
		return;
	}
	if (q.type == verbs::QpType::Ud) {
		const uint32_t num = w.wr.wr.ud.ah_num;
		UAh *ah = num ? q.objs.find<UAh>(num - 1, ObjType::Ah) : nullptr;
		fuzz::check(ah && wr.ud.ah == ah->ah && &ah->ah->pd == &q.pd, "a UD WQE's AH is live and on the QP's PD");
	}
	if (w.wr.send_flags & verbs::send_flag::inline_data) {
		fuzz::check(wr.sg.size() <= 1, "inline data is one gather");
		if (wr.sg.empty())
			return;
		const verbs::Sge &s = wr.sg[0];
		fuzz::check(s.addr == reinterpret_cast<uintptr_t>(data) && s.length <= q.caps.max_inline &&
				    s.length <= room && s.lkey == Qp::inline_lkey,
			    "inline data lies in the slot, within the QP's inline cap");
		return;
	}
	fuzz::check(wr.sg.data() == sge || wr.sg.empty(), "SGEs in the caller's array");
	fuzz::check(wr.sg.size() <= q.caps.max_send_sge && wr.sg.size() <= verbs::RecvEntry::max_sge,
		    "SGE count within the QP's caps");
	fuzz::check(wr.sg.size() * sizeof(rxe::Sge) <= room, "SGEs lie in the slot");
	for (size_t i = 0; i < wr.sg.size(); i++) {
		rxe::Sge s;
		__builtin_memcpy(&s, data + i * sizeof(s), sizeof(s));
		fuzz::check(wr.sg[i].addr == s.addr && wr.sg[i].length == s.length && wr.sg[i].lkey == s.lkey,
			    "SGEs as the process wrote them");
	}
}

/* UQp::doorbell()'s loop, without a QP to post to: each WQE converted and checked. */
void doorbell(Qp &q, verbs::Sge *sge)
{
	const Ring &r = *q.sq;
	const uint32_t prod = r.producer();
	for (uint32_t n = 0; q.fetch != prod; n++) {
		fuzz::check(n <= r.mask && q.fetch <= r.mask, "the doorbell stays within the ring");
		Guard g(r, q.fetch);
		const uint8_t *slot = r.slot(q.fetch);
		rxe::SendWqe w;
		__builtin_memcpy(&w, slot, sizeof(w));
		verbs::SendWr wr;
		const SendQueue sqv{q.type, q.pd, Qp::inline_lkey, q.caps};
		if (convert_send_wqe(w, slot, sqv, q.objs, wr, sge))
			check_send(q, slot, w, wr, sge);
		q.fetch = (q.fetch + 1) & r.mask;
	}
}

void take(Qp &q, uint8_t n)
{
	const Ring &r = *q.rq;
	for (uint32_t k = 0; k < n; k++) {
		const uint32_t before = q.rq_cons, prod = r.producer();
		auto *e = static_cast<verbs::RecvEntry *>(weft_kmalloc(sizeof(verbs::RecvEntry), 0));
		if (!e)
			return;
		bool took;
		rxe::RecvWqe w;
		{
			Guard g(r, before);
			__builtin_memcpy(&w, r.slot(before), sizeof(w));
			took = take_recv_wqe(r, q.rq_cons, q.caps.max_recv_sge, *e);
		}
		fuzz::check(took == (before != prod), "a WQE is taken exactly when one is posted");
		if (took) {
			fuzz::check(q.rq_cons == ((before + 1) & r.mask), "the kernel's index advances by one");
			fuzz::check(r.hdr().consumer_index.load(Order::Relaxed) == q.rq_cons, "the consumer index published");
			const bool fits = w.dma.num_sge <= q.caps.max_recv_sge;
			fuzz::check(e->wr_id == w.wr_id && e->nsge == (fits ? w.dma.num_sge : 0),
				    "a receive WQE's SGEs as posted, none if more than the caps");
			fuzz::check(sizeof(rxe::RecvWqe) + e->nsge * sizeof(rxe::Sge) <= r.elem_size, "SGEs lie in the slot");
			const uint8_t *sges = r.slot(before) + sizeof(rxe::RecvWqe);
			Guard g(r, before);
			for (uint32_t i = 0; i < e->nsge; i++) {
				rxe::Sge s;
				__builtin_memcpy(&s, sges + i * sizeof(s), sizeof(s));
				fuzz::check(e->sge[i].addr == s.addr && e->sge[i].length == s.length, "SGE as posted");
			}
		} else {
			fuzz::check(q.rq_cons == before, "nothing taken, the index stays");
		}
		weft_kfree(e);
		if (!took)
			return;
	}
}

/* The process rewrites a header word of a ring: the kernel keeps its own mask and index. */
void scribble(Qp &q, ConstBytes arg)
{
	if (arg.size() < 5)
		return;
	rxe::QueueHdr &h = (arg[0] & 1 ? q.rq : q.sq)->hdr();
	uint32_t v;
	__builtin_memcpy(&v, arg.data() + 1, 4);
	switch (arg[0] >> 1 & 3) {
	case 0: h.producer_index.store(v, Order::Release); break;
	case 1: h.consumer_index.store(v, Order::Release); break;
	case 2: h.index_mask = v; break;
	default: h.log2_elem_size = v; break;
	}
	if (arg[0] & 1)
		q.rq_prod = v;
	else
		q.sq_prod = v;
}

void add_object(Qp &q, uint8_t kind)
{
	if (q.nhandles == sizeof(q.handles) / sizeof(q.handles[0]))
		return;
	UObject *o;
	if (kind % 3 == 2)
		o = new (Gfp::Sleep) UPd(&q.pd);
	else
		o = new (Gfp::Sleep) UAh(kind % 3 ? &q.ah_other : &q.ah_mine);
	if (!o)
		return;
	if (!q.objs.insert(*o)) {
		delete o;
		return;
	}
	q.handles[q.nhandles++] = o->id;
}

void drop_object(Qp &q, uint8_t which)
{
	if (!q.nhandles)
		return;
	const uint32_t i = which % q.nhandles;
	const uint32_t h = q.handles[i];
	UObject *o = q.objs.find(h, ObjType::Ah);
	if (!o)
		o = q.objs.find(h, ObjType::Pd);
	fuzz::check(o && o->id == h, "a live handle finds its object");
	q.objs.remove(*o);
	fuzz::check(!q.objs.find(h, o->type), "a removed handle finds nothing");
	delete o;
	q.handles[i] = q.handles[--q.nhandles];
}

} // namespace

WEFT_FUZZ_TARGET(const uint8_t *data, size_t size)
{
	fuzz::Records in(data, size);
	ConstBytes rec;
	if (!in.next(rec, sizeof(abi::CreateQp)))
		return 0;
	Qp q;
	if (!create(q, rec))
		return 0;
	auto *sge = static_cast<verbs::Sge *>(weft_kmalloc(sizeof(verbs::Sge) * verbs::RecvEntry::max_sge, 0));
	if (!sge)
		return 0;
	while (in.next(rec, 2048)) {
		if (rec.empty())
			continue;
		const ConstBytes arg(rec.data() + 1, rec.size() - 1);
		switch (rec[0] % 7) {
		case 0: post(q, *q.sq, q.sq_prod, arg, true); break;
		case 1: doorbell(q, sge); break;
		case 2: post(q, *q.rq, q.rq_prod, arg, false); break;
		case 3: take(q, arg.empty() ? 1 : arg[0]); break;
		case 4: scribble(q, arg); break;
		case 5: add_object(q, arg.empty() ? 0 : arg[0]); break;
		default: drop_object(q, arg.empty() ? 0 : arg[0]); break;
		}
	}
	weft_kfree(sge);
	return 0;
}
