/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A CA port's multicast attachments (IBA 10.5): which UD QPs belong to which
 * group, so that a copy of a packet to a multicast LID reaches every
 * attached QP (IBA 10.5).
 */
#ifndef WEFT_HCA_MCAST_H
#define WEFT_HCA_MCAST_H

#include <weft/lock.h>
#include <weft/verbs/types.h>

#include "fabric.h"
#include "packet.h"

namespace weft::hca {

class SoftQp;

class McastTable {
public:
	static constexpr uint32_t max_groups = 64;
	static constexpr uint32_t max_attach = 16;

	McastTable() : lock_(WEFT_LOCK_CLASS("weft_hca_mcast")) {}
	WEFT_NOCOPY(McastTable);

	/* EEXIST if already attached, ENOMEM when a table is full. */
	Result<void> attach(SoftQp &qp, const verbs::Gid &mgid, uint16_t mlid);
	/* EINVAL if not attached. */
	Result<void> detach(SoftQp &qp, const verbs::Gid &mgid, uint16_t mlid);
	void detach_all(SoftQp &qp);

	/* Copy @pkt to every QP attached to (DGID, DLID); false if none. */
	bool deliver(const Packet &p, PacketBuf &pkt);

private:
	struct Group {
		verbs::Gid mgid;
		uint16_t mlid;
		uint32_t count;
		SoftQp *qps[max_attach];
	};
	Group *find(const verbs::Gid &mgid, uint16_t mlid);

	SpinLock lock_;
	Group groups_[max_groups] = {};
};

} // namespace weft::hca

#endif
