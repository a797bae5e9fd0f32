// SPDX-License-Identifier: GPL-2.0
/* weft_selftest_cm_server: module glue of the CM echo server (cm_server.cpp). */
#include <linux/module.h>
#include <linux/moduleparam.h>

#include "cm_selftest.h"

static char *dev = "weft1";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "device to listen on (port 1)");
static unsigned long long service = 0x1000000000000c0eULL;
module_param(service, ullong, 0444);
MODULE_PARM_DESC(service, "service ID to listen on");

unsigned int weft_cm_server_accepted, weft_cm_server_established, weft_cm_server_disconnected,
	weft_cm_server_echoed, weft_cm_server_active, weft_cm_server_lost, weft_cm_server_listening;
module_param_named(accepted, weft_cm_server_accepted, uint, 0444);
module_param_named(established, weft_cm_server_established, uint, 0444);
module_param_named(disconnected, weft_cm_server_disconnected, uint, 0444);
module_param_named(echoed, weft_cm_server_echoed, uint, 0444);
module_param_named(active, weft_cm_server_active, uint, 0444);
module_param_named(lost, weft_cm_server_lost, uint, 0444);
MODULE_PARM_DESC(lost, "connections released because their device was removed (read only)");
module_param_named(listening, weft_cm_server_listening, uint, 0444);
MODULE_PARM_DESC(listening, "1 while listening; 0 while the device is away (read only)");

static int __init weft_selftest_cm_server_init(void)
{
	return weft_selftest_cm_server_start(dev, service);
}

static void __exit weft_selftest_cm_server_exit(void)
{
	weft_selftest_cm_server_stop();
}

module_init(weft_selftest_cm_server_init);
module_exit(weft_selftest_cm_server_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft test only: a CM echo server (tests/integration/cm.sh)");
