/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The QP event glue of a connected ULP (weft_srp, weft_isert): what the
 * asynchronous events of a connection's QP (IBA 11.6.3.1) may reach of
 * the connection's CM identifier.
 *
 * The QP must outlive its CM Id (the CM moves it through its states,
 * IBA 12.9), yet the HCA delivers an event it raised (CommEst, from its
 * engine's work) at any time until destroy_qp() has drained the QP, and
 * CommEst leads to the Id: data before the RTU counts as the RTU
 * (IBA 12.9.5).  A handler that read the Id pointer unlocked could use
 * an Id that teardown destroyed in between.  Here the pointer is kept
 * under a mutex that the handler holds while it uses the Id.
 *
 * Lifetime rule: attach(id) once the Id exists, before its QP can reach
 * RTR; detach() before the Id is destroyed.  When detach() returns, no
 * call uses the old Id and none will.  The ConnEvents is the QP's
 * EventHandler (QpInitAttr::events): it must outlive the QP, whose
 * destroy_qp() is the last point a call can reach it.  The callbacks run
 * in process context with the mutex held (they may sleep); they must not
 * call attach() or detach().
 */
#ifndef WEFT_VERBS_CONN_EVENTS_H
#define WEFT_VERBS_CONN_EVENTS_H

#include <weft/atomic.h>
#include <weft/verbs/verbs.h>

namespace weft::verbs {

class ConnEvents final : public EventHandler {
public:
	/* CommEst: tell the CM, with the attached Id (as on_established<> makes one). */
	using Established = void (*)(void *id);
	/* The QP went to Error by itself (QpFatal, QpReqErr, QpAccessErr), with @owner. */
	using Failed = void (*)(void *owner);

	/* @failed may be null: the ULP learns of the error from its completions. */
	ConnEvents(Established established, Failed failed, void *owner);
	WEFT_NOCOPY(ConnEvents);

	template <typename Id> void attach(Id &id) { attach_raw(&id); }
	void detach();
	/* Inline: each module gets its own vtable (only functions are exported). */
	void handle(const Event &e) override { dispatch(e); }

private:
	void attach_raw(void *id);
	void dispatch(const Event &e);

	const Established established_;
	const Failed failed_;
	void *const owner_;
	Mutex mutex_;
	void *id_ = nullptr; /* under mutex_ */
};

/* A typed CommEst callback: on_established<cm::Id, cm::established>. */
template <typename Id, void (*Fn)(Id &)>
inline constexpr ConnEvents::Established on_established = [](void *id) { Fn(*static_cast<Id *>(id)); };

/*
 * KUnit only (core/verbs/tests/conn_events_test.cpp); unset in
 * production: called by handle() with the Id it is about to use, in the
 * window between reading the pointer and using it.
 */
using ConnEventsHook = void (*)(ConnEvents &events, void *id);
extern Atomic<ConnEventsHook> conn_events_hook;

} // namespace weft::verbs

#endif
