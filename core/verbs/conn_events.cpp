// SPDX-License-Identifier: GPL-2.0
/* The QP event glue of a connected ULP (include/weft/verbs/conn_events.h). */
#include <weft/verbs/conn_events.h>

namespace weft::verbs {

constinit Atomic<ConnEventsHook> conn_events_hook;

ConnEvents::ConnEvents(Established established, Failed failed, void *owner)
	: established_(established), failed_(failed), owner_(owner),
	  mutex_(WEFT_LOCK_CLASS("weft_verbs_conn_events"))
{
}

void ConnEvents::attach_raw(void *id)
{
	MutexGuard g(mutex_);
	id_ = id;
}

/* Waits for a handler using the Id: the caller may destroy it next. */
void ConnEvents::detach()
{
	MutexGuard g(mutex_);
	id_ = nullptr;
}

void ConnEvents::dispatch(const Event &e)
{
	switch (e.type) {
	case EventType::CommEst: {
		MutexGuard g(mutex_);
		if (!id_)
			return;
		if (ConnEventsHook h = conn_events_hook.load(Order::Acquire); WEFT_UNLIKELY(h))
			h(*this, id_);
		established_(id_);
		return;
	}
	case EventType::QpFatal:
	case EventType::QpReqErr:
	case EventType::QpAccessErr:
		/* No Id involved: the owner outlives its QP. */
		if (failed_)
			failed_(owner_);
		return;
	default:
		return;
	}
}

} // namespace weft::verbs
