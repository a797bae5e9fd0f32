// SPDX-License-Identifier: GPL-2.0
/* Calls on another CPU for C++ (weft/cpu.h): smp_call_function_single_async. */
#include <linux/cpumask.h>
#include <linux/export.h>
#include <linux/numa.h>
#include <linux/sched/task_stack.h>
#include <linux/smp.h>

#include "weft/layout.h"
#include "weft/rt/kapi.h"

static_assert(WEFT_SIZEOF_CSD == sizeof(call_single_data_t));
static_assert(WEFT_ALIGNOF_CSD == __alignof__(call_single_data_t));

void weft_cpu_call_init(void *csd, void (*fn)(void *info), void *info)
{
	INIT_CSD((call_single_data_t *)csd, fn, info);
}
EXPORT_SYMBOL_GPL(weft_cpu_call_init);

int weft_cpu_call(void *csd, int cpu)
{
	return smp_call_function_single_async(cpu, csd);
}
EXPORT_SYMBOL_GPL(weft_cpu_call);

int weft_this_cpu(void)
{
	return raw_smp_processor_id();
}
EXPORT_SYMBOL_GPL(weft_this_cpu);

int weft_vector_cpu(unsigned int v)
{
	return cpumask_local_spread(v % num_online_cpus(), NUMA_NO_NODE);
}
EXPORT_SYMBOL_GPL(weft_vector_cpu);

unsigned int weft_online_cpus(void)
{
	return num_online_cpus();
}
EXPORT_SYMBOL_GPL(weft_online_cpus);

unsigned long weft_stack_left(void)
{
	unsigned long sp = (unsigned long)__builtin_frame_address(0);
	unsigned long base = (unsigned long)task_stack_page(current);

	if (sp < base || sp >= base + THREAD_SIZE)
		return THREAD_SIZE;
	return sp - base;
}
EXPORT_SYMBOL_GPL(weft_stack_left);
