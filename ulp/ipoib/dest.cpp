// SPDX-License-Identifier: GPL-2.0
/* The destination table of an IPoIB interface (dest.h). */
#include "dest.h"

namespace weft::ipoib {

Dest *DestTable::find(const verbs::Gid &gid)
{
	for (Dest &d : list_)
		if (d.gid == gid)
			return &d;
	return nullptr;
}

Dest *DestTable::add(const verbs::Gid &gid)
{
	if (count_ >= max_entries)
		return nullptr;
	Dest *d = new (Gfp::Atomic) Dest;
	if (!d)
		return nullptr;
	d->gid = gid;
	list_.push_back(*d);
	count_++;
	return d;
}

DestTable::Decision DestTable::send(const verbs::Gid &gid, void *pkt, uint32_t qpn, uint64_t now_ms)
{
	Dest *d = find(gid);
	bool kick = false;
	if (!d) {
		d = add(gid);
		if (!d)
			return {Verdict::Unreachable};
		kick = true;
	}
	d->used_at = now_ms;
	switch (d->state) {
	case Dest::State::Valid:
		return {Verdict::Send, d->res.ah};
	case Dest::State::Failed:
		if (now_ms < d->retry_at)
			return {Verdict::Unreachable};
		d->state = Dest::State::Resolving;
		kick = true;
		break;
	case Dest::State::Resolving:
		break;
	}
	if (d->nqueued >= Dest::queue_max)
		return {Verdict::QueueFull, nullptr, kick};
	d->queue[d->nqueued++] = Pending{pkt, qpn};
	return {Verdict::Queued, nullptr, kick};
}

bool DestTable::claim(Claim &out)
{
	for (Dest &d : list_) {
		if (d.state != Dest::State::Resolving || d.busy)
			continue;
		d.busy = true;
		out = Claim{d.gid, gen_, d.member};
		return true;
	}
	return false;
}

bool DestTable::complete(const Claim &c, const Resolved *res, uint64_t now_ms, Pending *out, uint32_t &nout)
{
	nout = 0;
	Dest *d = c.gen == gen_ ? find(c.gid) : nullptr;
	if (!d || !d->busy)
		return false;
	d->busy = false;
	for (uint32_t i = 0; i < d->nqueued; i++)
		out[nout++] = d->queue[i];
	d->nqueued = 0;
	if (!res) {
		d->state = Dest::State::Failed;
		d->retry_at = now_ms + retry_ms;
		return true;
	}
	d->res = *res;
	d->state = Dest::State::Valid;
	return true;
}

size_t DestTable::set_members(const verbs::Gid *mgids, size_t n, DestList &gone)
{
	for (Dest &d : list_) {
		if (!d.multicast() || d.broadcast)
			continue;
		bool listed = false;
		for (size_t i = 0; i < n && !listed; i++)
			listed = mgids[i] == d.gid;
		if (d.member && !listed && !d.busy && d.nqueued == 0) {
			/* No longer listened to: left, as a send-only user would re-join. */
			list_.remove(d);
			count_--;
			gone.push_back(d);
		}
	}
	size_t work = 0;
	for (size_t i = 0; i < n; i++) {
		Dest *d = find(mgids[i]);
		if (!d) {
			d = add(mgids[i]);
			if (!d)
				continue;
		}
		if (d->broadcast)
			continue;
		if (!d->member && d->state == Dest::State::Valid && !d->busy) {
			/* Joined to send only so far: join again to listen (attach). */
			d->state = Dest::State::Resolving;
			Resolved old = d->res;
			d->res = Resolved{};
			Dest *keep = new (Gfp::Atomic) Dest;
			if (keep) {
				keep->gid = d->gid;
				keep->res = old;
				gone.push_back(*keep);
			} else {
				d->res = old;
				d->state = Dest::State::Valid;
				continue;
			}
		}
		d->member = true;
		if (d->state == Dest::State::Failed)
			d->state = Dest::State::Resolving;
		if (d->state == Dest::State::Resolving)
			work++;
	}
	return work;
}

Result<void> DestTable::install(const verbs::Gid &gid, const Resolved &res, bool broadcast)
{
	if (find(gid))
		return Error(err::EEXIST);
	Dest *d = add(gid);
	if (!d)
		return Error(err::ENOMEM);
	d->res = res;
	d->state = Dest::State::Valid;
	d->broadcast = broadcast;
	d->member = true;
	return ok();
}

size_t DestTable::take_idle(uint64_t now_ms, uint64_t idle_ms, DestList &out)
{
	size_t n = 0;
	for (Dest &d : list_) {
		const bool settled = d.state != Dest::State::Resolving && !d.busy && d.nqueued == 0;
		if (settled && !d.member && !d.broadcast && d.used_at + idle_ms <= now_ms) {
			list_.remove(d);
			count_--;
			out.push_back(d);
			n++;
		}
	}
	return n;
}

void DestTable::take_all(DestList &out)
{
	while (Dest *d = list_.pop_front())
		out.push_back(*d);
	count_ = 0;
	gen_++;
}

} // namespace weft::ipoib
