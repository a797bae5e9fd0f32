// SPDX-License-Identifier: GPL-2.0
/* weft_selftest_cm_client: module glue of the CM client (cm_client.cpp). */
#include <linux/module.h>
#include <linux/moduleparam.h>

#include "cm_selftest.h"

static struct weft_cm_client_params p = {
	.dev = "weft0",
	.dest = "weft1",
	.service = 0x1000000000000c0eULL,
};
module_param_named(dev, p.dev, charp, 0444);
MODULE_PARM_DESC(dev, "device to connect from (port 1)");
module_param_named(dest, p.dest, charp, 0444);
MODULE_PARM_DESC(dest, "device whose port 1 GID to connect to (the path comes from the SA)");
module_param_named(service, p.service, ullong, 0444);
module_param_named(cycles, p.cycles, uint, 0444);
MODULE_PARM_DESC(cycles, "connect/echo/disconnect cycles to run at load");
module_param_named(concurrent, p.concurrent, uint, 0444);
MODULE_PARM_DESC(concurrent, "connections to set up at once, echo over and release");
module_param_named(hold, p.hold, uint, 0444);
MODULE_PARM_DESC(hold, "connections to keep up until unload");
module_param_named(unreach_lid, p.unreach_lid, uint, 0444);
MODULE_PARM_DESC(unreach_lid, "a LID nobody has: the connect must end in Unreachable");
module_param_named(reject_check, p.reject_check, bool, 0444);
MODULE_PARM_DESC(reject_check, "connect to an unserved service: the connect must be rejected");
module_param_named(pdata, p.pdata, charp, 0444);
MODULE_PARM_DESC(pdata, "hex private data of a REQ to service, which must be rejected (a ULP's login)");

module_param_named(login, p.login, charp, 0444);
MODULE_PARM_DESC(login, "hex private data of a REQ to service which must be accepted (an SRP login); then ius");
module_param_named(ius, p.ius, charp, 0444);
MODULE_PARM_DESC(ius, "comma-separated hex IUs sent on the login's connection, each followed by probe");
module_param_named(probe, p.probe, charp, 0444);
MODULE_PARM_DESC(probe, "hex request sent after each IU, which must be answered (its tag: bytes 8-15)");

char weft_cm_client_iu_replies[512];
module_param_string(iu_replies, weft_cm_client_iu_replies, sizeof(weft_cm_client_iu_replies), 0444);
MODULE_PARM_DESC(iu_replies, "per IU: SRP_RSP status.response code or - (no answer), / the probe's status (read only)");

unsigned int weft_cm_client_cycles_done, weft_cm_client_concurrent_done, weft_cm_client_held,
	weft_cm_client_peer_disconnects, weft_cm_client_reject_reason, weft_cm_client_reject_ms,
	weft_cm_client_unreach_ms, weft_cm_client_lost, weft_cm_client_reject_word;
module_param_named(cycles_done, weft_cm_client_cycles_done, uint, 0444);
module_param_named(concurrent_done, weft_cm_client_concurrent_done, uint, 0444);
module_param_named(held, weft_cm_client_held, uint, 0444);
module_param_named(peer_disconnects, weft_cm_client_peer_disconnects, uint, 0444);
module_param_named(reject_reason, weft_cm_client_reject_reason, uint, 0444);
module_param_named(reject_ms, weft_cm_client_reject_ms, uint, 0444);
module_param_named(reject_word, weft_cm_client_reject_word, uint, 0444);
MODULE_PARM_DESC(reject_word, "bytes 4-7 of the REJ's private data, big-endian (SRP_LOGIN_REJ: its reason)");
module_param_named(unreach_ms, weft_cm_client_unreach_ms, uint, 0444);
module_param_named(lost, weft_cm_client_lost, uint, 0444);
MODULE_PARM_DESC(lost, "held connections released because the device was removed (read only)");

static int __init weft_selftest_cm_client_init(void)
{
	return weft_selftest_cm_client_run(&p);
}

static void __exit weft_selftest_cm_client_exit(void)
{
	weft_selftest_cm_client_stop();
}

module_init(weft_selftest_cm_client_init);
module_exit(weft_selftest_cm_client_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Weft test only: a CM client run at load (tests/integration/cm.sh)");
