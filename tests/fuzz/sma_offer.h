/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For the sma and sma_switch targets: one MAD offered to a node's firmware
 * agents as Device::process_mad does (PerfMgt to the PMA, the rest to the
 * SMA), padded to 256 bytes; a Reply must be a response with the request's
 * TID.  And what every port of a node keeps whatever the SMA was sent.
 */
#ifndef WEFT_FUZZ_SMA_OFFER_H
#define WEFT_FUZZ_SMA_OFFER_H

#include "fuzz.h"

#include "../../drivers/hca/pma.h"
#include "../../drivers/hca/sma.h"

namespace weft::fuzz {

inline void offer_mad(hca::Node &node, uint8_t port, ConstBytes mad)
{
	uint8_t req[iba::mad_size] = {}, resp[iba::mad_size];
	__builtin_memcpy(req, mad.data(), mad.size() < sizeof(req) ? mad.size() : sizeof(req));
	__builtin_memset(resp, 0xa5, sizeof(resp));
	verbs::MadIn mi;
	mi.port = port;
	mi.slid = 0x10;
	const auto &h = *reinterpret_cast<const iba::MadHeader *>(req);
	verbs::MadOutcome out;
	if (h.mgmt_class.get() == iba::mgmt_class::perf)
		out = hca::pma::process(node, mi, *reinterpret_cast<const iba::PmaMad *>(req),
					*reinterpret_cast<iba::PmaMad *>(resp));
	else
		out = hca::sma::process(node, mi, *reinterpret_cast<const iba::Smp *>(req),
					*reinterpret_cast<iba::Smp *>(resp));
	if (out == verbs::MadOutcome::Reply) {
		const auto &r = *reinterpret_cast<const iba::MadHeader *>(resp);
		check(iba::MadHeader::Response::get(r.method), "a reply is a response");
		check(r.tid.get() == h.tid.get(), "a reply keeps the TID");
	}
}

/*
 * The input's records (Records): a control byte (bit 7: first let bits
 * 0-5 x 1000 ms of virtual time pass, the M_Key lease), then a MAD,
 * offered at the port @port_of(control) names; @after runs after each.
 */
template <typename P, typename A>
void offer_all(hca::Node &node, const uint8_t *data, size_t size, P port_of, A after)
{
	Records in(data, size);
	ConstBytes rec;
	while (in.next(rec, 1 + iba::mad_size)) {
		if (rec.empty())
			continue;
		const uint8_t ctl = rec[0];
		if (ctl & 0x80)
			weft_host_advance(1000u * (ctl & 0x3f));
		offer_mad(node, port_of(ctl), ConstBytes(rec.data() + 1, rec.size() - 1));
		after();
	}
}

/* LMC 0..7 and a port state in range on ports @first..@last. */
inline void check_ports(hca::Node &node, uint8_t first, uint8_t last)
{
	for (uint8_t n = first; n <= last; n++) {
		hca::Port &p = *node.port(n);
		check(p.lmc.load(Order::Relaxed) <= 7, "LMC 0..7");
		check(uint8_t(p.state.load(Order::Relaxed)) <= uint8_t(verbs::PortState::Active), "port state in range");
	}
}

} // namespace weft::fuzz

#endif
