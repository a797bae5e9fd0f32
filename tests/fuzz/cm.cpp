// SPDX-License-Identifier: GPL-2.0
/*
 * Fuzz target: the CM's reading of received messages (IBA Vol 1 12.6,
 * 12.8, 12.11; core/cm/wire.cpp), everything the handlers take from a CM
 * MAD before they look at connection state.  Each record of the input
 * (fuzz.h Records) is one CM MAD (class 0x07), decoded as the handler of
 * its AttributeID reads it.  Checked: fields keep to their widths, a REQ
 * called valid has an MTU, a LID and a QPN the QP can take, the ARI and
 * private data lie inside the MAD at the sizes IBA gives, an MRA's wait is
 * at least a millisecond.
 */
#include "fuzz.h"

#include "../../core/cm/wire.h"

using namespace weft;
using namespace weft::cm;

namespace {

void inside_mad(const mad::Mad &m, ConstBytes b, const char *what)
{
	fuzz::check(!b.size() || (b.data() >= m.bytes && b.data() + b.size() <= m.bytes + sizeof(m.bytes)), what);
}

size_t pdata_size(wire::Kind k)
{
	namespace pd = iba::cm::pdata;
	switch (k) {
	case wire::Kind::Req: return pd::req;
	case wire::Kind::Mra: return pd::mra;
	case wire::Kind::Rej: return pd::rej;
	case wire::Kind::Rep: return pd::rep;
	case wire::Kind::Rtu: return pd::rtu;
	case wire::Kind::Dreq: return pd::dreq;
	case wire::Kind::Drep: return pd::drep;
	case wire::Kind::SidrReq: return pd::sidr_req;
	case wire::Kind::SidrRep: return pd::sidr_rep;
	default: return 0;
	}
}

void decode(const mad::Mad &m)
{
	const wire::Kind k = wire::kind_of(m);
	const wire::Ids ids = wire::ids(m, k);
	fuzz::check(k != wire::Kind::Other || (!ids.sender && !ids.ours), "no IDs from what is no CM message");
	ConstBytes pd = wire::private_data(m, k);
	inside_mad(m, pd, "private data inside the MAD");
	fuzz::check(pd.size() == pdata_size(k), "private data of the size IBA 12.6 gives");
	/* Every private data area ends the MAD (tables 106-120). */
	fuzz::check(!pd.size() || pd.data() + pd.size() == m.bytes + sizeof(m.bytes), "private data ends the MAD");
	switch (k) {
	case wire::Kind::Req: {
		const wire::Req r = wire::req(m);
		const RequestInfo &ri = r.info;
		fuzz::check(ri.remote_qpn <= 0xffffff && r.remote_psn <= 0xffffff, "REQ QPN and PSN of 24 bits");
		fuzz::check(r.sl < 16 && r.ack_timeout < 32 && r.peer_cm_timeout < 32 && r.max_cm_retries < 16,
			    "REQ sub-word fields in their widths");
		fuzz::check(r.pkt_life < 32, "packet life from the ACK timeout");
		fuzz::check(ri.mtu >= iba::Mtu::M256 && ri.mtu <= iba::Mtu::M4096, "REQ MTU one the QP takes");
		if (r.valid)
			fuzz::check(ri.remote_lid && ri.remote_qpn > 1, "a valid REQ has a LID and a QPN past QP1");
		break;
	}
	case wire::Kind::Rep: {
		const wire::Rep r = wire::rep(m);
		fuzz::check(r.qpn <= 0xffffff && r.psn <= 0xffffff && r.rnr_retry < 8, "REP fields in their widths");
		break;
	}
	case wire::Kind::Rej: {
		const wire::Rej r = wire::rej(m);
		inside_mad(m, r.ari, "ARI inside the MAD");
		fuzz::check(r.ari.size() <= iba::cm::rej::ari_max && r.rejected < 4, "ARI at most 72 bytes");
		fuzz::check(!r.ari.size() || r.ari.data() + r.ari.size() <= pd.data(), "ARI before the private data");
		break;
	}
	case wire::Kind::Mra: {
		const wire::Mra r = wire::mra(m);
		fuzz::check(r.mraed < 4 && r.service_timeout_ms >= 1, "MRA: which message, a wait of 1 ms or more");
		break;
	}
	case wire::Kind::Dreq:
		fuzz::check(wire::dreq_qpn(m) <= 0xffffff, "DREQ QPN of 24 bits");
		break;
	case wire::Kind::SidrReq:
		(void)wire::sidr_req(m);
		break;
	case wire::Kind::SidrRep:
		fuzz::check(wire::sidr_rep(m).qpn <= 0xffffff, "SIDR_REP QPN of 24 bits");
		break;
	default:
		break;
	}
}

} // namespace

WEFT_FUZZ_TARGET(const uint8_t *data, size_t size)
{
	fuzz::Records in(data, size);
	ConstBytes rec;
	mad::Mad m;
	while (in.next(rec, iba::mad_size)) {
		__builtin_memset(m.bytes, 0, sizeof(m.bytes));
		__builtin_memcpy(m.bytes, rec.data(), rec.size());
		decode(m);
	}
	return 0;
}
