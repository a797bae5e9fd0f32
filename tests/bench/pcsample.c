// SPDX-License-Identifier: GPL-2.0
/*
 * weft_pcsample: an in-guest program-counter sampler for profiling under
 * QEMU TCG, where perf wedges the guest and sampling from QEMU's monitor
 * over-weights MMIO.  A pinned hrtimer per CPU records the interrupted
 * instruction pointer (0 for user mode) into one array, exposed raw through
 * debugfs; tests/bench/pcsample.py names the addresses from /proc/kallsyms.
 *
 *   /sys/kernel/debug/weft_pcsample/control   write "start" or "stop"
 *   /sys/kernel/debug/weft_pcsample/samples   after stop: { u64 ip; u32 cpu; u32 pad }[]
 *
 * Only loaded by the profile jobs (tests/bench/profile-ipoib*.sh).
 */
#include <linux/cpu.h>
#include <linux/debugfs.h>
#include <linux/hrtimer.h>
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/ptrace.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <asm/irq_regs.h>

static unsigned int period_us = 997;	/* prime, so it beats with no periodic tick */
module_param(period_us, uint, 0444);
MODULE_PARM_DESC(period_us, "sampling period per CPU in microseconds");
static unsigned int max_samples = 1 << 20;
module_param(max_samples, uint, 0444);
MODULE_PARM_DESC(max_samples, "samples kept per start (the rest are counted, not kept)");

struct pcs_sample {
	u64 ip;
	u32 cpu;
	u32 pad;
};

static DEFINE_PER_CPU(struct hrtimer, pcs_timer);
static struct pcs_sample *pcs_buf;
static atomic_t pcs_next;
static bool pcs_running;
static DEFINE_MUTEX(pcs_lock);	/* start/stop and the blob's size */
static struct debugfs_blob_wrapper pcs_blob;
static struct dentry *pcs_dir;

static enum hrtimer_restart pcs_tick(struct hrtimer *t)
{
	struct pt_regs *regs = get_irq_regs();
	unsigned int i = atomic_inc_return(&pcs_next) - 1;

	if (i < max_samples) {
		pcs_buf[i].ip = regs && !user_mode(regs) ? instruction_pointer(regs) : 0;
		pcs_buf[i].cpu = smp_processor_id();
	}
	hrtimer_forward_now(t, ns_to_ktime((u64)period_us * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

static void pcs_start_here(void *unused)
{
	hrtimer_start(this_cpu_ptr(&pcs_timer), ns_to_ktime((u64)period_us * NSEC_PER_USEC), HRTIMER_MODE_REL_PINNED);
}

static void pcs_stop_all(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		hrtimer_cancel(per_cpu_ptr(&pcs_timer, cpu));
	pcs_running = false;
	pcs_blob.size = min_t(unsigned int, atomic_read(&pcs_next), max_samples) * sizeof(*pcs_buf);
	pr_info("weft_pcsample: %u samples (%u kept)\n", atomic_read(&pcs_next),
		(unsigned int)(pcs_blob.size / sizeof(*pcs_buf)));
}

static ssize_t pcs_control(struct file *f, const char __user *ubuf, size_t len, loff_t *pos)
{
	char cmd[8] = {};

	if (len == 0 || len >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, len))
		return -EFAULT;
	strim(cmd);
	mutex_lock(&pcs_lock);
	if (!strcmp(cmd, "start") && !pcs_running) {
		pcs_blob.size = 0;
		atomic_set(&pcs_next, 0);
		pcs_running = true;
		cpus_read_lock();
		on_each_cpu(pcs_start_here, NULL, 1);
		cpus_read_unlock();
	} else if (!strcmp(cmd, "stop") && pcs_running) {
		pcs_stop_all();
	} else {
		len = -EINVAL;
	}
	mutex_unlock(&pcs_lock);
	return len;
}

static const struct file_operations pcs_control_fops = {
	.owner = THIS_MODULE,
	.write = pcs_control,
	.llseek = noop_llseek,
};

static int __init pcs_init(void)
{
	int cpu;

	if (!period_us || !max_samples)
		return -EINVAL;
	pcs_buf = vzalloc(array_size(max_samples, sizeof(*pcs_buf)));
	if (!pcs_buf)
		return -ENOMEM;
	pcs_blob.data = pcs_buf;
	for_each_possible_cpu(cpu) {
		struct hrtimer *t = per_cpu_ptr(&pcs_timer, cpu);

		hrtimer_init(t, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED);
		t->function = pcs_tick;
	}
	pcs_dir = debugfs_create_dir("weft_pcsample", NULL);
	debugfs_create_file("control", 0200, pcs_dir, NULL, &pcs_control_fops);
	debugfs_create_blob("samples", 0400, pcs_dir, &pcs_blob);
	return 0;
}

static void __exit pcs_exit(void)
{
	debugfs_remove_recursive(pcs_dir);
	mutex_lock(&pcs_lock);
	if (pcs_running)
		pcs_stop_all();
	mutex_unlock(&pcs_lock);
	vfree(pcs_buf);
}

module_init(pcs_init);
module_exit(pcs_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft benchmarks: in-guest hrtimer program-counter sampler");
