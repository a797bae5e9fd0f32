// SPDX-License-Identifier: GPL-2.0
/* weft_selftest_sa: module glue of the SA client check (sa.cpp). */
#include <linux/module.h>

int weft_selftest_sa_run(void);
int weft_selftest_sa_hold(const char *dev, u32 group);
void weft_selftest_sa_release(void);
int weft_selftest_sa_watch(const char *dev);
extern unsigned int weft_selftest_sa_gid_in, weft_selftest_sa_gid_out;

static char *hold;
module_param(hold, charp, 0444);
MODULE_PARM_DESC(hold, "hold a membership on this device's port 1 instead of running the check");
static unsigned int group;
module_param(group, uint, 0444);
MODULE_PARM_DESC(group, "with hold: the IPv4 multicast address (as a number) whose IPoIB group to join");

static char *watch;
module_param(watch, charp, 0444);
MODULE_PARM_DESC(watch, "watch GID in/out of service events of this device's port 1 until unload");
module_param_named(gid_in, weft_selftest_sa_gid_in, uint, 0444);
MODULE_PARM_DESC(gid_in, "with watch: GID in service events seen");
module_param_named(gid_out, weft_selftest_sa_gid_out, uint, 0444);
MODULE_PARM_DESC(gid_out, "with watch: GID out of service events seen");

static int __init weft_selftest_sa_init(void)
{
	if (watch)
		return weft_selftest_sa_watch(watch);
	if (hold)
		return weft_selftest_sa_hold(hold, group);
	return weft_selftest_sa_run();
}

static void __exit weft_selftest_sa_exit(void)
{
	weft_selftest_sa_release();
}

module_init(weft_selftest_sa_init);
module_exit(weft_selftest_sa_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft test only: the kernel SA client against OpenSM's SA at load");
