// SPDX-License-Identifier: GPL-2.0
/* printk, formatting, WARN and time for C++ (weft/log.h). */
#include <linux/bug.h>
#include <linux/delay.h>
#include <linux/export.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/printk.h>
#include <linux/sched.h>
#include <linux/timekeeping.h>

#include "weft/rt/kapi.h"

void weft_vlog(int level, const char *prefix, const char *fmt, va_list ap)
{
	struct va_format vaf = { .fmt = fmt };
	va_list copy;

	va_copy(copy, ap);
	vaf.va = &copy;
	/* KERN_<LEVEL> is "\001" followed by the level digit. */
	printk("\001%c%s: %pV\n", '0' + clamp(level, 0, 7), prefix, &vaf);
	va_end(copy);
}
EXPORT_SYMBOL_GPL(weft_vlog);

int weft_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	return vscnprintf(buf, size, fmt, ap);
}
EXPORT_SYMBOL_GPL(weft_vsnprintf);

void weft_warn(const char *file, int line, const char *what)
{
	WARN(1, "weft: %s at %s:%d\n", what, file, line);
}
EXPORT_SYMBOL_GPL(weft_warn);

uint64_t weft_jiffies(void)
{
	return get_jiffies_64();
}
EXPORT_SYMBOL_GPL(weft_jiffies);

unsigned long weft_msecs_to_jiffies(unsigned int ms)
{
	return msecs_to_jiffies(ms);
}
EXPORT_SYMBOL_GPL(weft_msecs_to_jiffies);

void weft_msleep(unsigned int ms)
{
	msleep(ms);
}
EXPORT_SYMBOL_GPL(weft_msleep);

uint64_t weft_ktime_ns(void)
{
	return ktime_get_ns();
}
EXPORT_SYMBOL_GPL(weft_ktime_ns);

void weft_cond_resched(void)
{
	cond_resched();
}
EXPORT_SYMBOL_GPL(weft_cond_resched);

const void *weft_current_task(void)
{
	return current;
}
EXPORT_SYMBOL_GPL(weft_current_task);
