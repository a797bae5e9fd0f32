/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module glue both RDMA CM test modules share (included once by
 * rcm_server_mod.c and once by rcm_client_mod.c): parameters and counters.
 */
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/socket.h>

#include "rcm_selftest.h"

static struct weft_rcm_test_params p = {
	.addr = "any",
	.dst = "",
	.unreachable = "",
	.port = 7471,
};
module_param_named(addr, p.addr, charp, 0444);
MODULE_PARM_DESC(addr, "server: address to listen on (any: the wildcard)");
module_param_named(dst, p.dst, charp, 0444);
MODULE_PARM_DESC(dst, "client: the server's IPv4 or IPv6 address");
module_param_named(unreachable, p.unreachable, charp, 0444);
MODULE_PARM_DESC(unreachable, "client: an address nobody has (ADDR_ERROR expected)");
module_param_named(port, p.port, uint, 0444);
module_param_named(cycles, p.cycles, uint, 0444);
module_param_named(concurrent, p.concurrent, uint, 0444);
module_param_named(hold, p.hold, uint, 0444);
module_param_named(checks, p.checks, bool, 0444);
MODULE_PARM_DESC(checks, "client: reject with private data, no listener, EADDRINUSE");
module_param_named(expect_route_error, p.expect_route_error, bool, 0444);
module_param_named(ud, p.ud, bool, 0444);
MODULE_PARM_DESC(ud, "client: resolve the server's UD QP by SIDR (UDP port space)");
module_param_named(ud_qpn, weft_rcm_test.ud_qpn, uint, 0444);
module_param_named(ud_qkey, weft_rcm_test.ud_qkey, uint, 0444);
module_param_named(ud_accepted, weft_rcm_test.ud_accepted, uint, 0444);

struct weft_rcm_test_results weft_rcm_test;
module_param_named(cycles_done, weft_rcm_test.cycles_done, uint, 0444);
module_param_named(concurrent_done, weft_rcm_test.concurrent_done, uint, 0444);
module_param_named(held, weft_rcm_test.held, uint, 0444);
module_param_named(peer_disconnects, weft_rcm_test.peer_disconnects, uint, 0444);
module_param_named(reject_status, weft_rcm_test.reject_status, int, 0444);
module_param_named(no_listener_status, weft_rcm_test.no_listener_status, int, 0444);
module_param_named(addr_error, weft_rcm_test.addr_error, int, 0444);
module_param_named(route_error, weft_rcm_test.route_error, int, 0444);
module_param_named(inuse_errno, weft_rcm_test.inuse_errno, int, 0444);
module_param_named(reject_pdata_ok, weft_rcm_test.reject_pdata_ok, uint, 0444);
module_param_named(established_pdata_ok, weft_rcm_test.established_pdata_ok, uint, 0444);
module_param_named(accepted, weft_rcm_test.accepted, uint, 0444);
module_param_named(rejected, weft_rcm_test.rejected, uint, 0444);
module_param_named(established, weft_rcm_test.established, uint, 0444);
module_param_named(disconnected, weft_rcm_test.disconnected, uint, 0444);
module_param_named(echoed, weft_rcm_test.echoed, uint, 0444);
module_param_named(active, weft_rcm_test.active, uint, 0444);
module_param_named(listening, weft_rcm_test.listening, uint, 0444);
module_param_named(addr_changes, weft_rcm_test.addr_changes, uint, 0444);
module_param_named(req_responder_resources, weft_rcm_test.req_responder_resources, uint, 0444);
module_param_named(req_initiator_depth, weft_rcm_test.req_initiator_depth, uint, 0444);

int weft_rcm_test_parse_ip(const char *s, uint16_t *family, uint8_t *ip)
{
	memset(ip, 0, 16);
	if (in4_pton(s, -1, ip, -1, NULL)) {
		*family = AF_INET;
		return 0;
	}
	if (in6_pton(s, -1, ip, -1, NULL)) {
		*family = AF_INET6;
		return 0;
	}
	return -EINVAL;
}

