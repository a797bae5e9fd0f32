// SPDX-License-Identifier: GPL-2.0
/* The kernel SA client (IBA Vol 1 15.4): queries, path cache, multicast joins. */
#include <weft/list.h>
#include <weft/log.h>
#include <weft/mad/port.h>
#include <weft/wait.h>

#include "port_mad.h"
#include "qp_transport.h"
#include "sa_client.h"

namespace weft::mad {

namespace {

const Logger log("weft_mad");

/* IBA 13.4.6.4: how long the SA gets, and how often it is asked again. */
constexpr uint32_t sa_timeout_ms = 1000;
constexpr uint8_t sa_retries = 3;

struct Pending {
	SendReq req;
	Completion done;
};

} // namespace

SaPort *find_sa(verbs::Device &dev, uint8_t port)
{
	MadPort *p = find_port(dev, port);
	return p ? &static_cast<PortMad *>(p)->sa() : nullptr;
}

SaPort::SaPort(MadPort &p) : port(p), cache_lock_(WEFT_LOCK_CLASS("weft_mad_sa_cache")) {}

SaPort::~SaPort()
{
	stop();
}

Result<void> SaPort::start()
{
	agent_.rmpp = true; /* GetTable answers come in segments (IBA 15.4.2) */
	WEFT_TRY(port.gsi().register_agent(agent_));
	port.device.add_event_handler(*this);
	started_ = true;
	return ok();
}

void SaPort::stop()
{
	if (!exchange(started_, false))
		return;
	port.device.remove_event_handler(*this);
	port.gsi().unregister_agent(agent_); /* queries in flight end with ECANCELED */
}

void SaPort::send_done(Agent &, SendReq &r)
{
	container_of(&r, &Pending::req)->done.complete();
}

void SaPort::handle(const verbs::Event &e)
{
	using verbs::EventType;
	if (e.port != port.port)
		return;
	switch (e.type) {
	case EventType::LidChange:
	case EventType::SmChange:
	case EventType::PkeyChange:
	case EventType::ClientReregister:
	case EventType::PortActive:
	case EventType::PortErr:
		gen_.fetch_add(1, Order::Relaxed);
		break;
	default:
		break;
	}
}

Result<void> SaPort::ask(uint8_t method, uint16_t attr, uint64_t comp_mask, const void *rec, size_t len,
			 Answer &out)
{
	verbs::PortAttr pa;
	WEFT_TRY(port.device.query_port(port.port, pa));
	if (len > iba::sa_data_size)
		return Error(err::EINVAL);
	/* An SA behind a port that is not ACTIVE cannot answer: no point waiting out the retries. */
	if (!pa.sm_lid || pa.state != verbs::PortState::Active)
		return Error(err::ENODEV);
	auto pending = WEFT_TRY(make_own<Pending>(Gfp::Sleep));
	SendReq &r = pending->req;
	iba::MadHeader &h = r.mad.hdr();
	h.base_version.set(1);
	h.mgmt_class.set(iba::mgmt_class::subn_adm);
	h.class_version.set(iba::sa_class_version);
	h.method.set(method);
	h.tid.set(next_tid_.fetch_add(1, Order::Relaxed));
	h.attr_id.set(attr);
	auto *sah = reinterpret_cast<iba::SaHeader *>(r.mad.bytes + iba::sa_header_offset);
	sah->comp_mask.set(comp_mask);
	__builtin_memcpy(r.mad.bytes + iba::sa_data_offset, rec, len);
	r.to = MadAddr{pa.sm_lid, 1, gsi_qkey, 0, pa.sm_sl};
	r.timeout_ms = sa_timeout_ms;
	r.retries = sa_retries;
	WEFT_TRY(port.gsi().send(agent_, r));
	pending->done.wait(); /* bounded: the service times the request out */
	if (r.status)
		return Error(r.status);
	if (int e = sa::status_errno(r.response.hdr().status.get()))
		return Error(e);
	out.first = r.response;
	out.len = r.long_len ? r.long_len : iba::mad_size;
	out.all = move(r.long_response);
	return ok();
}

/* IBA 15.2.5.16: one reversible path from this port to @dgid in @pkey. */
Result<iba::PathRecord> SaPort::resolve_path(const verbs::Gid &dgid, uint16_t pkey)
{
	uint64_t gen = gen_.load(Order::Relaxed);
	{
		SpinGuardBh g(cache_lock_);
		for (Cached &c : cache_)
			if (c.gen == gen && c.pkey == pkey && c.dgid == dgid)
				return c.rec;
	}
	auto sgid = WEFT_TRY(port.device.query_gid(port.port, 0));
	iba::PathRecord want{};
	__builtin_memcpy(want.dgid, dgid.raw, 16);
	__builtin_memcpy(want.sgid, sgid.raw, 16);
	want.pkey.set(pkey);
	iba::PathRecord::Reversible::set(want.num_path, 1);
	iba::PathRecord::NumbPath::set(want.num_path, 1);
	auto rec = WEFT_TRY(sa::get_path(port.device, port.port, want,
					 iba::pr_comp::dgid | iba::pr_comp::sgid | iba::pr_comp::pkey |
						 iba::pr_comp::reversible | iba::pr_comp::numb_path));
	SpinGuardBh g(cache_lock_);
	Cached &c = cache_[cache_next_++ % cache_size];
	c = Cached{dgid, pkey, gen, rec};
	return rec;
}

namespace sa {

Result<iba::PathRecord> get_path(verbs::Device &dev, uint8_t port, const iba::PathRecord &want,
				 uint64_t comp_mask)
{
	SaPort *s = find_sa(dev, port);
	if (!s)
		return Error(err::ENODEV);
	SaPort::Answer a;
	WEFT_TRY(s->ask(iba::sa_method::get, iba::sa_attr::path_record, comp_mask, &want, sizeof(want), a));
	iba::PathRecord rec;
	WEFT_TRY(WEFT_TRY(a.records()).first(&rec, sizeof(rec)));
	return rec;
}

Result<iba::PathRecord> resolve_path(verbs::Device &dev, uint8_t port, const verbs::Gid &dgid,
				     uint16_t pkey)
{
	SaPort *s = find_sa(dev, port);
	if (!s)
		return Error(err::ENODEV);
	return s->resolve_path(dgid, pkey);
}

Result<iba::ClassPortInfo> class_port_info(verbs::Device &dev, uint8_t port)
{
	SaPort *s = find_sa(dev, port);
	if (!s)
		return Error(err::ENODEV);
	/* IBA 13.4.8.1: a Get of ClassPortInfo carries no record of its own. */
	const iba::ClassPortInfo none{};
	SaPort::Answer a;
	WEFT_TRY(s->ask(iba::sa_method::get, iba::sa_attr::class_port_info, 0, &none, sizeof(none), a));
	iba::ClassPortInfo cpi;
	WEFT_TRY(WEFT_TRY(a.records()).first(&cpi, sizeof(cpi)));
	return cpi;
}

Result<size_t> get_services(verbs::Device &dev, uint8_t port, const iba::ServiceRecord &want,
			    uint64_t comp_mask, iba::ServiceRecord *out, size_t max)
{
	SaPort *s = find_sa(dev, port);
	if (!s)
		return Error(err::ENODEV);
	SaPort::Answer a;
	WEFT_TRY(s->ask(iba::sa_method::get_table, iba::sa_attr::service_record, comp_mask, &want,
			sizeof(want), a));
	auto recs = WEFT_TRY(a.records());
	size_t n = recs.count();
	for (size_t i = 0; i < n && i < max; i++)
		recs.copy(i, &out[i], sizeof(iba::ServiceRecord));
	return n;
}

} // namespace sa

} // namespace weft::mad
