/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CpuCall: run a callback on a chosen CPU in hardirq context, as an
 * interrupt of a device affined to that CPU would (an IPI underneath).
 * One call at a time: sending while a call is pending is refused with
 * -EBUSY, and the pending call still runs.
 *
 * Lifetime: the storage must outlive a pending call; the owner holds a
 * reference for each call sent and drops it at the end of the callback.
 */
#ifndef WEFT_CPU_H
#define WEFT_CPU_H

#include <weft/layout.h>
#include <weft/rt/kapi.h>
#include <weft/util.h>

namespace weft {

class CpuCall {
public:
	using Fn = void (*)(CpuCall &c);

	explicit CpuCall(Fn fn) : fn_(fn) { weft_cpu_call_init(storage_.get(), trampoline, this); }
	WEFT_NOCOPY(CpuCall);

	/* 0: it will run on @cpu; -EBUSY: one is pending; -ENXIO: @cpu is offline. */
	int send(int cpu) { return weft_cpu_call(storage_.get(), cpu); }

private:
	static void trampoline(void *info)
	{
		CpuCall *c = static_cast<CpuCall *>(info);
		c->fn_(*c);
	}
	Opaque<WEFT_SIZEOF_CSD, WEFT_ALIGNOF_CSD> storage_;
	Fn fn_;
};

} // namespace weft

#endif /* WEFT_CPU_H */
