// SPDX-License-Identifier: GPL-2.0
/* MADs to a MadService without a wire (loopback.h). */
#include <weft/alloc.h>

#include "loopback.h"

namespace weft::mad {

Loopback::Loopback(MadService &svc)
	: svc_(svc), lock_(WEFT_LOCK_CLASS("weft_mad_loopback")),
	  work_(run, WEFT_LOCK_CLASS("weft_mad_loopback_work"))
{
}

Loopback::~Loopback()
{
	stop();
}

Result<void> Loopback::post(const Mad &m, const MadAddr &from)
{
	auto *it = new (Gfp::Sleep) Item;
	if (!it)
		return Error(err::ENOMEM);
	it->mad = m;
	it->from = from;
	SpinGuardBh g(lock_);
	if (stopping_) {
		delete it;
		return Error(err::ENODEV);
	}
	items_.push_back(*it);
	work_.queue();
	return ok();
}

void Loopback::run(Work &w)
{
	auto *l = container_of(&w, &Loopback::work_);
	for (;;) {
		Item *it;
		{
			SpinGuardBh g(l->lock_);
			it = l->items_.pop_front();
		}
		if (!it)
			return;
		l->svc_.receive(it->mad, it->from);
		delete it;
	}
}

void Loopback::stop()
{
	{
		SpinGuardBh g(lock_);
		stopping_ = true;
	}
	work_.cancel_sync();
	SpinGuardBh g(lock_);
	while (Item *it = items_.pop_front())
		delete it;
}

} // namespace weft::mad
