// SPDX-License-Identifier: GPL-2.0
/* Reading received CM messages (IBA Vol 1 12.6, 12.8, 12.11): see wire.h. */
#include <weft/util.h>

#include "wire.h"

namespace weft::cm::wire {

namespace ic = iba::cm;

namespace {

template <typename T> const T &body(const mad::Mad &m)
{
	static_assert(sizeof(T) == ic::data_size);
	return *reinterpret_cast<const T *>(m.bytes + sizeof(iba::MadHeader));
}

template <typename T> ConstBytes pdata_of(const mad::Mad &m)
{
	const T &t = body<T>(m);
	return ConstBytes(t.private_data, sizeof(t.private_data));
}

} // namespace

Kind kind_of(const mad::Mad &m)
{
	switch (m.hdr().attr_id.get()) {
	case ic::attr::req: return Kind::Req;
	case ic::attr::mra: return Kind::Mra;
	case ic::attr::rej: return Kind::Rej;
	case ic::attr::rep: return Kind::Rep;
	case ic::attr::rtu: return Kind::Rtu;
	case ic::attr::dreq: return Kind::Dreq;
	case ic::attr::drep: return Kind::Drep;
	case ic::attr::lap: return Kind::Lap;
	case ic::attr::apr: return Kind::Apr;
	case ic::attr::sidr_req: return Kind::SidrReq;
	case ic::attr::sidr_rep: return Kind::SidrRep;
	default: return Kind::Other;
	}
}

Ids ids(const mad::Mad &m, Kind k)
{
	switch (k) {
	case Kind::Req:
		return Ids{body<ic::Req>(m).local_comm_id.get(), 0};
	case Kind::SidrReq:
		return Ids{body<ic::SidrReq>(m).request_id.get(), 0};
	case Kind::SidrRep:
		/* IBA 12.11.2: it echoes our RequestID. */
		return Ids{0, body<ic::SidrRep>(m).request_id.get()};
	case Kind::Other:
		return Ids{};
	default:
		/* IBA 12.6.6-12.8.2: every other message starts with the two comm IDs (LAP too). */
		const ic::Rtu &r = body<ic::Rtu>(m);
		return Ids{r.local_comm_id.get(), r.remote_comm_id.get()};
	}
}

ConstBytes private_data(const mad::Mad &m, Kind k)
{
	switch (k) {
	case Kind::Req: return pdata_of<ic::Req>(m);
	case Kind::Mra: return pdata_of<ic::Mra>(m);
	case Kind::Rej: return pdata_of<ic::Rej>(m);
	case Kind::Rep: return pdata_of<ic::Rep>(m);
	case Kind::Rtu: return pdata_of<ic::Rtu>(m);
	case Kind::Dreq: return pdata_of<ic::Dreq>(m);
	case Kind::Drep: return pdata_of<ic::Drep>(m);
	case Kind::SidrReq: return pdata_of<ic::SidrReq>(m);
	case Kind::SidrRep: return pdata_of<ic::SidrRep>(m);
	default: return ConstBytes();
	}
}

Req req(const mad::Mad &m)
{
	using R = ic::Req;
	const R &r = body<R>(m);
	Req out;
	const uint8_t mtu = R::Mtu::get(r.mtu_flags);
	out.valid = mtu >= uint8_t(iba::Mtu::M256) && mtu <= uint8_t(iba::Mtu::M4096) &&
		    r.primary.local_lid.get() && R::Qpn::get(r.qpn_rr) > 1;
	out.rc_or_uc = R::TransportType::get(r.reecn_flags) <= 1;
	RequestInfo &ri = out.info;
	ri.service_id = r.service_id.get();
	ri.remote_ca_guid = r.local_ca_guid.get();
	ri.remote_qpn = R::Qpn::get(r.qpn_rr);
	ri.remote_lid = r.primary.local_lid.get();
	__builtin_memcpy(ri.remote_gid.raw, r.primary.local_gid, 16);
	__builtin_memcpy(ri.local_gid.raw, r.primary.remote_gid, 16);
	ri.pkey = r.pkey.get();
	ri.responder_resources = R::ResponderResources::get(r.qpn_rr);
	ri.initiator_depth = R::InitiatorDepth::get(r.eecn_id);
	/* Only a valid REQ's MTU is used; an invalid one reads as the smallest. */
	ri.mtu = out.valid ? static_cast<iba::Mtu>(mtu) : iba::Mtu::M256;
	ri.retry_count = R::RetryCount::get(r.psn_flags);
	ri.rnr_retry_count = R::RnrRetry::get(r.mtu_flags);
	ri.srq = R::Srq::get(r.retries_flags);
	out.remote_psn = R::Psn::get(r.psn_flags);
	out.sl = ic::Path::Sl::get(r.primary.sl_local);
	out.ack_timeout = ic::Path::AckTimeout::get(r.primary.ack_timeout);
	/* IBA 12.7.34: the active side chose an ACK timeout of about 2 * PacketLifeTime. */
	out.pkt_life = out.ack_timeout ? out.ack_timeout - 1 : 0;
	out.peer_cm_timeout = R::LocalCmTimeout::get(r.psn_flags);
	out.max_cm_retries = R::MaxCmRetries::get(r.retries_flags);
	return out;
}

Rep rep(const mad::Mad &m)
{
	using R = ic::Rep;
	const R &r = body<R>(m);
	Rep out;
	out.ca_guid = r.local_ca_guid.get();
	out.qpn = R::Qpn::get(r.qpn_vendor);
	out.psn = R::Psn::get(r.psn_vendor);
	out.rnr_retry = R::RnrRetry::get(r.rnr_flags);
	out.responder_resources = r.responder_resources.get();
	out.initiator_depth = r.initiator_depth.get();
	return out;
}

Rej rej(const mad::Mad &m)
{
	using R = ic::Rej;
	const R &r = body<R>(m);
	Rej out;
	out.reason = r.reason.get();
	out.rejected = R::Rejected::get(r.rejected);
	/* IBA 12.6.7.1: RejectedInfoLength is 7 bits, the ARI field 72 bytes. */
	out.ari = ConstBytes(r.ari, min<size_t>(R::AriLength::get(r.ari_length), sizeof(r.ari)));
	return out;
}

Mra mra(const mad::Mad &m)
{
	using M = ic::Mra;
	const M &r = body<M>(m);
	return Mra{M::Mraed::get(r.mraed), ic::timeout_ms(M::Timeout::get(r.service_timeout))};
}

uint32_t dreq_qpn(const mad::Mad &m)
{
	return ic::Dreq::Qpn::get(body<ic::Dreq>(m).remote_qpn);
}

SidrReq sidr_req(const mad::Mad &m)
{
	const ic::SidrReq &r = body<ic::SidrReq>(m);
	return SidrReq{r.pkey.get(), r.service_id.get()};
}

SidrInfo sidr_rep(const mad::Mad &m)
{
	using R = ic::SidrRep;
	const R &r = body<R>(m);
	SidrInfo out{};
	out.status = r.status.get();
	out.qpn = R::Qpn::get(r.qpn_vendor);
	out.qkey = r.qkey.get();
	out.service_id = r.service_id.get();
	return out;
}

} // namespace weft::cm::wire
