// SPDX-License-Identifier: GPL-2.0
/*
 * The user_mad operations of one open file (file.h).  Behaviour follows
 * the in-tree 6.1 ABI: the errno of every refusal, the header layout by
 * ENABLE_PKEY, a too-small read buffer failing with EINVAL and leaving
 * the message queued, an unanswered request coming back with status
 * ETIMEDOUT and only its 24-byte MAD header, EIO once the port is gone.
 */
#include <weft/alloc.h>

#include "file.h"
#include "umad_kapi.h"

namespace weft::umad {

namespace {

/* IBA 13.4.3 + 13.6.2: the common MAD header and the RMPP header (the in-tree minimum write). */
constexpr size_t mad_hdr_size = sizeof(iba::MadHeader);
constexpr size_t min_write_mad = 36;

/* In-tree limits of a registration (MAX_MGMT_CLASS, MAX_MGMT_VERSION, IB_MGMT_RMPP_VERSION). */
constexpr uint8_t max_class = 80;
constexpr uint8_t max_class_version = 0x83;
constexpr uint8_t rmpp_v1 = 1;

bool is_response(uint8_t method)
{
	return method & 0x80;
}

} // namespace

MethodMask MethodMask::from_longs(const uint32_t m[4])
{
	/* Two little-endian longs (or four u32 from a 32-bit caller): the same bytes. */
	MethodMask r;
	for (int i = 0; i < 4; i++)
		r.w[i] = m[i];
	return r;
}

MethodMask MethodMask::from_u64(const uint64_t m[2])
{
	MethodMask r;
	for (int i = 0; i < 2; i++) {
		r.w[2 * i] = static_cast<uint32_t>(m[i]);
		r.w[2 * i + 1] = static_cast<uint32_t>(m[i] >> 32);
	}
	return r;
}

Result<void> Registration::validate() const
{
	if (qpn > 1)
		return Error(err::EINVAL);
	if (rmpp_version > rmpp_v1)
		return Error(err::EINVAL);
	if (flags & ~abi::supported_flags)
		return Error(err::EINVAL);
	if (!mgmt_class) {
		/* No class: an agent that only sends; user RMPP means nothing there. */
		return flags & abi::flag_user_rmpp ? Result<void>(Error(err::EINVAL)) : ok();
	}
	if (class_version >= max_class_version)
		return Error(err::EINVAL);
	if (mgmt_class >= max_class && mgmt_class != iba::mgmt_class::subn_directed_route)
		return Error(err::EINVAL);
	if (iba::vendor_range2(mgmt_class) && !oui)
		return Error(err::EINVAL);
	if (oui & 0xff000000u)
		return Error(err::EINVAL);
	if (rmpp_version && !iba::class_uses_rmpp(mgmt_class))
		return Error(err::EINVAL);
	if (qpn_of_class(mgmt_class) != qpn)
		return Error(err::EINVAL);
	return ok();
}

File::File(Services &s, Waker w)
	: services_(s), waker_(w), lock_(WEFT_LOCK_CLASS("weft_umad_file")),
	  qlock_(WEFT_LOCK_CLASS("weft_umad_queue"))
{
}

File::~File()
{
	for (FileAgent *a : agents_)
		if (a)
			weft_warn(__FILE__, __LINE__, "umad file freed with agents");
}

/* --- agents ------------------------------------------------------------------ */

Result<uint32_t> File::register_agent(const Registration &r)
{
	MutexGuard g(lock_);
	if (dead())
		return Error(err::EPIPE);
	WEFT_TRY(r.validate());
	mad::MadService *svc = services_.service(static_cast<uint8_t>(r.qpn));
	if (!svc)
		return Error(err::EPIPE);
	uint32_t id = 0;
	while (id < abi::max_agents && agents_[id])
		id++;
	if (id == abi::max_agents)
		return Error(err::ENOMEM); /* in-tree: "Max Agents reached" */
	auto *a = new (Gfp::Sleep) FileAgent(*this, *svc, static_cast<uint8_t>(id), r);
	if (!a)
		return Error(err::ENOMEM);
	if (r.mgmt_class)
		for (unsigned m = 0; m < 128; m++)
			if (r.methods.has(static_cast<uint8_t>(m)))
				a->agent.add_method(static_cast<uint8_t>(m));
	/* IBA 13.6: RMPP version 1 agents get segmentation and reassembly from the service. */
	a->agent.rmpp = r.rmpp_version == 1;
	a->agent.oui = iba::vendor_range2(r.mgmt_class) ? r.oui : 0;
	auto reg = svc->register_agent(a->agent);
	if (!reg) {
		delete a;
		return reg.error();
	}
	agents_[id] = a;
	already_used_ = true;
	return id;
}

Result<void> File::unregister_agent(uint32_t id)
{
	FileAgent *a;
	{
		MutexGuard g(lock_);
		if (id >= abi::max_agents || dead() || !agents_[id])
			return Error(err::EINVAL);
		a = exchange(agents_[id], nullptr);
		/* Under lock_, so no write can be sending through it; callbacks drain. */
		a->svc.unregister_agent(a->agent);
	}
	delete a;
	return ok();
}

void File::unregister_all_locked()
{
	lock_.assert_held();
	for (FileAgent *&slot : agents_) {
		if (FileAgent *a = exchange(slot, nullptr)) {
			a->svc.unregister_agent(a->agent);
			delete a;
		}
	}
}

Result<void> File::ioctl(unsigned int cmd, UserBuf &arg)
{
	switch (cmd) {
	case abi::ioc_register_agent: {
		abi::RegReq u;
		if (arg.size < sizeof(u))
			return Error(err::EINVAL);
		WEFT_TRY(arg.copy_in(&u, 0, sizeof(u)));
		Registration r;
		r.qpn = u.qpn;
		r.mgmt_class = u.mgmt_class;
		r.class_version = u.mgmt_class_version;
		r.oui = uint32_t(u.oui[0]) << 16 | uint32_t(u.oui[1]) << 8 | u.oui[2];
		r.rmpp_version = u.rmpp_version;
		r.methods = MethodMask::from_longs(u.method_mask);
		uint32_t id = WEFT_TRY(register_agent(r));
		auto put = arg.copy_out(__builtin_offsetof(abi::RegReq, id), &id, sizeof(id));
		if (!put)
			(void)unregister_agent(id);
		return put;
	}
	case abi::ioc_register_agent2: {
		abi::RegReq2 u;
		if (arg.size < sizeof(u))
			return Error(err::EINVAL);
		WEFT_TRY(arg.copy_in(&u, 0, sizeof(u)));
		if (u.flags & ~abi::supported_flags) {
			/* Tell the caller what is supported, as in-tree does. */
			uint32_t sup = abi::supported_flags;
			WEFT_TRY(arg.copy_out(__builtin_offsetof(abi::RegReq2, flags), &sup, sizeof(sup)));
			return Error(err::EINVAL);
		}
		Registration r;
		r.qpn = u.qpn;
		r.mgmt_class = u.mgmt_class;
		r.class_version = u.mgmt_class_version;
		r.oui = u.oui;
		r.rmpp_version = u.rmpp_version;
		r.flags = u.flags;
		r.methods = MethodMask::from_u64(u.method_mask);
		uint32_t id = WEFT_TRY(register_agent(r));
		{
			/* In-tree: REGISTER_AGENT2 implies the 64-byte header. */
			MutexGuard g(lock_);
			use_pkey_ = true;
		}
		auto put = arg.copy_out(__builtin_offsetof(abi::RegReq2, id), &id, sizeof(id));
		if (!put)
			(void)unregister_agent(id);
		return put;
	}
	case abi::ioc_unregister_agent: {
		uint32_t id;
		if (arg.size < sizeof(id))
			return Error(err::EINVAL);
		WEFT_TRY(arg.copy_in(&id, 0, sizeof(id)));
		return unregister_agent(id);
	}
	case abi::ioc_enable_pkey: {
		MutexGuard g(lock_);
		if (already_used_)
			return Error(err::EINVAL);
		use_pkey_ = true;
		return ok();
	}
	default:
		return Error(err::ENOTTY);
	}
}

/* --- callbacks ----------------------------------------------------------------- */

void File::enqueue(Packet &p, bool received)
{
	bool queued = false;
	p.received = received;
	{
		SpinGuardBh g(qlock_);
		const bool room = nqueued_ < max_queued &&
				  (!nqueued_ || queued_bytes_ + p.mad_len <= max_queued_bytes);
		if (!dead_ && (!received || room)) {
			queue_.push_back(p);
			nqueued_ += received;
			queued_bytes_ += received ? p.mad_len : 0;
			queued = true;
		}
	}
	if (!queued) {
		dropped_.fetch_add(1, Order::Relaxed);
		delete &p;
		return;
	}
	waker_.wake();
}

namespace {

void fill_from(abi::Hdr &h, const mad::MadAddr &from)
{
	h.qpn.set(from.qpn);
	h.qkey.set(from.qkey);
	h.lid.set(from.lid);
	h.sl = from.sl;
	h.pkey_index = from.pkey_index;
	h.grh_present = from.global;
	if (!from.global)
		return;
	/* In-tree: the route back, as ib_init_ah_attr_from_wc() builds it (the sender's GID). */
	h.gid_index = from.grh.sgid_index;
	h.hop_limit = from.grh.hop_limit;
	h.traffic_class = from.grh.traffic_class;
	__builtin_memcpy(h.gid, from.grh.gid, sizeof(h.gid));
	h.flow_label.set(from.grh.flow_label);
}

} // namespace

void FileAgent::recv(mad::Agent &, const mad::Mad &m, const mad::MadAddr &from)
{
	auto *p = new (Gfp::Sleep) Packet;
	if (!p) {
		file.dropped_.fetch_add(1, Order::Relaxed);
		return;
	}
	p->hdr = abi::Hdr{};
	p->hdr.id = id;
	p->hdr.length = static_cast<uint32_t>(file.hdr_size() + iba::mad_size);
	fill_from(p->hdr, from);
	p->req.mad = m;
	p->mad_len = iba::mad_size;
	file.enqueue(*p, true);
}

/* A reassembled multi-segment request: read() returns all of it, as in-tree (headers, then data). */
bool FileAgent::recv_message(mad::Agent &, Array<uint8_t> &msg, size_t len, const mad::MadAddr &from)
{
	auto *p = new (Gfp::Sleep) Packet;
	if (!p) {
		file.dropped_.fetch_add(1, Order::Relaxed);
		return true;
	}
	p->hdr = abi::Hdr{};
	p->hdr.id = id;
	p->hdr.length = static_cast<uint32_t>(file.hdr_size() + len);
	fill_from(p->hdr, from);
	__builtin_memcpy(p->req.mad.bytes, msg.data(), min(len, iba::mad_size));
	p->whole = move(msg);
	p->mad_len = static_cast<uint32_t>(len);
	file.enqueue(*p, true);
	return true;
}

void FileAgent::send_done(mad::Agent &, mad::SendReq &r)
{
	Packet &p = *container_of(&r, &Packet::req);
	if (r.status == 0) {
		/* The response goes to the reader as any received MAD. */
		uint32_t saved_id = p.hdr.id;
		p.hdr = abi::Hdr{};
		p.hdr.id = saved_id;
		p.hdr.length = static_cast<uint32_t>(file.hdr_size() + iba::mad_size);
		fill_from(p.hdr, r.from);
		p.req.mad = r.response;
		p.mad_len = iba::mad_size;
		if (r.long_len) {
			/* A reassembled RMPP response: read() returns all of it. */
			p.whole = move(r.long_response);
			p.mad_len = static_cast<uint32_t>(r.long_len);
			p.hdr.length = static_cast<uint32_t>(file.hdr_size() + r.long_len);
		}
		file.enqueue(p, true);
	} else if (r.status == err::ETIMEDOUT) {
		/* In-tree: the request's header as written, and just its MAD header. */
		p.hdr.status = err::ETIMEDOUT;
		p.mad_len = mad_hdr_size;
		file.enqueue(p, false);
	} else {
		delete &p; /* cancelled: the agent is going away */
	}
}

/* --- read and write -------------------------------------------------------------- */

namespace {

bool rmpp_active(const mad::Mad &m)
{
	const auto &h = *reinterpret_cast<const iba::RmppHeader *>(m.bytes + sizeof(iba::MadHeader));
	return iba::RmppHeader::Flags::get(h.rtime_flags) & iba::rmpp_flag::active;
}

/*
 * An RMPP-active MAD written shorter than 256 bytes is a message of just
 * that length: IBA 13.6.2.2, PayloadLength counts the data the sender
 * has, which in-tree is what was written.  A GetTableResp of one record
 * then carries one record, not the zero padding after it as more
 * (libvendor counts records by the reassembled length).
 */
Result<Array<uint8_t>> short_message(mad::SendReq &r, size_t len)
{
	auto whole = WEFT_TRY(Array<uint8_t>::make(Gfp::Sleep, len));
	__builtin_memcpy(whole.data(), r.mad.bytes, len);
	r.long_msg = ConstBytes(whole.data(), len);
	return whole;
}

/*
 * The address of a write.  With grh_present the MAD goes with a GRH (IBA
 * 8.3.1): SGID at gid_index, DGID gid, and the header's hop limit, traffic
 * class and flow label; a bad gid_index fails the AH (EINVAL), a GRH on
 * QP0 the send (EINVAL).
 */
mad::MadAddr to_addr(const abi::Hdr &h, bool use_pkey)
{
	mad::MadAddr to;
	to.lid = h.lid.get();
	to.sl = h.sl;
	to.qpn = h.qpn.get() & 0xffffff;
	to.qkey = h.qkey.get();
	to.pkey_index = use_pkey ? h.pkey_index : 0;
	to.global = h.grh_present;
	if (!to.global)
		return to;
	__builtin_memcpy(to.grh.gid, h.gid, sizeof(to.grh.gid));
	to.grh.sgid_index = h.gid_index;
	to.grh.hop_limit = h.hop_limit;
	to.grh.traffic_class = h.traffic_class;
	to.grh.flow_label = h.flow_label.get() & 0xfffff;
	return to;
}

} // namespace

Result<size_t> File::write(UserBuf &buf)
{
	const size_t hs = hdr_size();
	if (buf.size < hs + min_write_mad)
		return Error(err::EINVAL);
	auto *p = new (Gfp::Sleep) Packet;
	if (!p)
		return Error(err::ENOMEM);
	Own<Packet> own(p);
	p->hdr = abi::Hdr{};
	WEFT_TRY(buf.copy_in(&p->hdr, 0, hs));
	if (p->hdr.id >= abi::max_agents)
		return Error(err::EINVAL);
	const size_t mad_len = buf.size - hs;
	__builtin_memset(p->req.mad.bytes, 0, sizeof(p->req.mad.bytes));

	MutexGuard g(lock_);
	FileAgent *a = dead() ? nullptr : agents_[p->hdr.id];
	if (!a)
		return Error(err::EIO);
	/* IBA 13.6: more than one MAD only from an RMPP agent, as one message the service segments. */
	Array<uint8_t> whole;
	if (mad_len > iba::mad_size) {
		if (!a->rmpp_version)
			return Error(err::EINVAL);
		/* The class is only known once copied: bound by the largest any class may send. */
		if (mad_len > mad::rmpp_max_message(iba::mgmt_class::subn_adm))
			return Error(err::EINVAL);
		whole = WEFT_TRY(Array<uint8_t>::make(Gfp::Sleep, mad_len, Sized::ByInput));
		WEFT_TRY(buf.copy_in(whole.data(), hs, mad_len));
		p->req.long_msg = ConstBytes(whole.data(), mad_len);
	} else {
		WEFT_TRY(buf.copy_in(p->req.mad.bytes, hs, mad_len));
		if (a->rmpp_version && mad_len < iba::mad_size && rmpp_active(p->req.mad))
			whole = WEFT_TRY(short_message(p->req, mad_len));
	}
	if (whole.size() > iba::mad_size)
		__builtin_memcpy(p->req.mad.bytes, whole.data(), iba::mad_size);
	const iba::MadHeader &mh = p->req.mad.hdr();
	if (whole.size() && mad_len > mad::rmpp_max_message(mh.mgmt_class.get()))
		return Error(err::EINVAL);
	/* A class travels on its own QP: the agent's QP must be the class's. */
	if (qpn_of_class(mh.mgmt_class.get()) != a->qpn)
		return Error(err::EINVAL);

	mad::SendReq &r = p->req;
	r.to = to_addr(p->hdr, use_pkey_);
	r.timeout_ms = p->hdr.timeout_ms;
	r.retries = static_cast<uint8_t>(min<uint32_t>(p->hdr.retries, 255));
	p->mad_len = static_cast<uint32_t>(mad_len);

	const bool expect = r.timeout_ms && !is_response(mh.method.get());
	if (expect)
		own.release(); /* the service holds it until send_done */
	auto sent = a->svc.send(a->agent, r);
	if (!sent) {
		if (expect)
			delete p;
		return Error(sent.error().code());
	}
	return buf.size;
}

Result<size_t> File::read(UserBuf &buf)
{
	const size_t hs = hdr_size();
	if (buf.size < hs)
		return Error(err::EINVAL);
	Packet *p;
	{
		SpinGuardBh g(qlock_);
		if (dead_)
			return Error(err::EIO);
		p = queue_.pop_front();
		if (!p)
			return Error(err::EAGAIN);
	}
	const size_t need = hs + p->mad_len;
	const uint8_t *bytes = p->whole.size() ? p->whole.data() : p->req.mad.bytes;
	Result<void> r = ok();
	if (buf.size < need && !p->whole.size())
		r = Error(err::EINVAL); /* in-tree: a single MAD must fit whole */
	if (r)
		r = buf.copy_out(0, &p->hdr, hs);
	if (r && buf.size < need) {
		/*
		 * In-tree: of a reassembled message too long for the buffer, the
		 * header (whose length says how much to ask for) and what fits
		 * of the first MAD, ENOSPC, and the message stays for the retry.
		 */
		r = buf.copy_out(hs, bytes, min(buf.size - hs, iba::mad_size));
		if (r)
			r = Error(err::ENOSPC);
	} else if (r) {
		r = buf.copy_out(hs, bytes, p->mad_len);
	}
	{
		SpinGuardBh g(qlock_);
		if (!r && !dead_) {
			/* Keep it for the next read, at the front. */
			queue_.push_front(*p);
			return r.error();
		}
		nqueued_ -= p->received;
		queued_bytes_ -= p->received ? p->mad_len : 0;
	}
	delete p;
	if (!r)
		return r.error();
	return need;
}

bool File::readable()
{
	SpinGuardBh g(qlock_);
	return dead_ || !queue_.empty();
}

bool File::dead()
{
	SpinGuardBh g(qlock_);
	return dead_;
}

size_t File::queued()
{
	SpinGuardBh g(qlock_);
	return queue_.size();
}

unsigned int File::poll()
{
	SpinGuardBh g(qlock_);
	if (dead_)
		return WEFT_UMAD_POLL_ERR;
	return queue_.empty() ? 0 : WEFT_UMAD_POLL_IN;
}

/* --- teardown ---------------------------------------------------------------------- */

void File::kill()
{
	MutexGuard g(lock_);
	{
		SpinGuardBh q(qlock_);
		dead_ = true;
	}
	waker_.wake();
	unregister_all_locked();
}

void File::close()
{
	kill();
	SpinGuardBh g(qlock_);
	while (Packet *p = queue_.pop_front())
		delete p;
	nqueued_ = 0;
	queued_bytes_ = 0;
}

} // namespace weft::umad
