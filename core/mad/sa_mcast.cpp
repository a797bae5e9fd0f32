// SPDX-License-Identifier: GPL-2.0
/*
 * Multicast group membership for kernel consumers (IBA Vol 1 15.2.5.17):
 * one SA membership per port, MGID and JoinState, shared by every user
 * that joins it and given back to the SA when the last one leaves.  A
 * port that goes away orphans its memberships: their users still leave
 * them (and free them), with nobody left to tell.
 */
#include <weft/list.h>
#include <weft/lock.h>
#include <weft/mad/sa.h>

#include "sa_client.h"

namespace weft::mad::sa {

struct Membership {
	ListNode node;
	verbs::Device *dev;
	uint8_t port;
	uint8_t join_state;
	uint32_t users;
	bool orphan;
	iba::McMemberRecord rec;
};

namespace {

struct Groups {
	List<Membership, &Membership::node> list;
};
/* Held across the SA round trip: joins and leaves are rare and may wait. */
using GroupsLock = Protected<Groups, Mutex>;
GroupsLock *groups;
alignas(GroupsLock) unsigned char groups_storage[sizeof(GroupsLock)];

constexpr uint64_t identity = iba::mcr_comp::mgid | iba::mcr_comp::port_gid | iba::mcr_comp::join_state;

/* @m is a live membership of @mgid on the port with every JoinState bit of @want. */
bool covers(const Membership &m, const verbs::Device &dev, uint8_t port, const uint8_t *mgid, uint8_t want)
{
	return m.dev == &dev && m.port == port && !m.orphan && (m.join_state & want) == want &&
	       __builtin_memcmp(m.rec.mgid, mgid, 16) == 0;
}

} // namespace

Result<Membership *> join(verbs::Device &dev, uint8_t port, const iba::McMemberRecord &rec,
			  uint64_t comp_mask)
{
	const uint8_t want = iba::McMemberRecord::JoinState::get(rec.scope_state);
	if (!want)
		return Error(err::EINVAL);
	auto g = groups->lock();
	for (Membership &m : g->list) {
		if (covers(m, dev, port, rec.mgid, want)) {
			m.users++;
			return &m;
		}
	}
	SaPort *s = find_sa(dev, port);
	if (!s)
		return Error(err::ENODEV);
	iba::McMemberRecord ask = rec;
	auto gid = WEFT_TRY(dev.query_gid(port, 0));
	__builtin_memcpy(ask.port_gid, gid.raw, 16);
	SaPort::Answer a;
	WEFT_TRY(s->ask(iba::sa_method::set, iba::sa_attr::mcmember_record, comp_mask | identity, &ask,
			sizeof(ask), a));
	iba::McMemberRecord granted;
	WEFT_TRY(WEFT_TRY(a.records()).first(&granted, sizeof(granted)));
	auto *m = new (Gfp::Sleep) Membership{};
	if (!m)
		return Error(err::ENOMEM); /* the SA keeps a membership nobody uses until the port goes */
	m->dev = &dev;
	m->port = port;
	m->join_state = want;
	m->users = 1;
	m->rec = granted;
	g->list.push_back(*m);
	return m;
}

bool joined(verbs::Device &dev, uint8_t port, const verbs::Gid &mgid, uint8_t join_state)
{
	auto g = groups->lock();
	for (Membership &m : g->list)
		if (covers(m, dev, port, mgid.raw, join_state))
			return true;
	return false;
}

const iba::McMemberRecord &record(const Membership &m)
{
	return m.rec;
}

void leave(Membership *m)
{
	auto g = groups->lock();
	if (--m->users)
		return;
	g->list.remove(*m);
	if (!m->orphan) {
		if (SaPort *s = find_sa(*m->dev, m->port)) {
			iba::McMemberRecord rec = m->rec;
			iba::McMemberRecord::JoinState::set(rec.scope_state, m->join_state);
			SaPort::Answer a;
			(void)s->ask(iba::sa_method::del, iba::sa_attr::mcmember_record, identity, &rec,
				     sizeof(rec), a); /* the SA times stale members out if this is lost */
		}
	}
	delete m;
}

} // namespace weft::mad::sa

namespace weft::mad {

void sa_orphan(verbs::Device &dev, uint8_t port)
{
	auto g = sa::groups->lock();
	for (sa::Membership &m : g->list)
		if (m.dev == &dev && m.port == port)
			m.orphan = true;
}

void sa_groups_init()
{
	sa::groups = new (sa::groups_storage) sa::GroupsLock(WEFT_LOCK_CLASS("weft_mad_sa_groups"));
}

void sa_groups_exit()
{
	{
		/* Every user of weft_mad is gone: memberships left are leaks of theirs. */
		auto g = sa::groups->lock();
		while (sa::Membership *m = g->list.pop_front())
			delete m;
	}
	using sa::GroupsLock;
	sa::groups->~GroupsLock();
}

} // namespace weft::mad
