/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test only: weft_selftest_rcm, a kernel ULP on the RDMA CM, as an echo
 * server (rcm_server.cpp) or a client run at load (rcm_client.cpp), in
 * the network namespace of the process that loads it.  Its C glue
 * (rcm_mod.c) turns parameters and counters into module parameters that
 * tests/integration/rdma_cm.sh reads.
 */
#ifndef WEFT_SELFTEST_RCM_H
#define WEFT_SELFTEST_RCM_H

#include <weft/rt/kapi.h>

WEFT_C_BEGIN

struct weft_rcm_test_params {
	char *addr;	 /* server: the address to listen on ("" or "any": the wildcard) */
	char *dst;	 /* client: the server's address */
	char *unreachable; /* client: an address nobody answers ARP/ND for */
	unsigned int port;
	unsigned int cycles;	 /* client: connect, echo, disconnect */
	unsigned int concurrent; /* client: connections up at once */
	unsigned int hold;	 /* client: connections kept up until unload */
	bool checks;		 /* client: reject, no listener, EADDRINUSE, unreachable */
	bool expect_route_error; /* client: no SM: resolve_route must fail */
	bool ud;		 /* client: SIDR in the UDP port space: the server's UD QPN and Q_Key */
};

/* Client counters and findings (read-only module parameters). */
struct weft_rcm_test_results {
	unsigned int cycles_done, concurrent_done, held, peer_disconnects;
	int reject_status, no_listener_status, addr_error, route_error, inuse_errno;
	unsigned int reject_pdata_ok, established_pdata_ok;
	unsigned int ud_qpn, ud_qkey; /* client: what SIDR resolved */
	/* Server. */
	unsigned int accepted, ud_accepted, rejected, established, disconnected, echoed, active, listening;
	unsigned int addr_changes; /* server: ADDR_CHANGE events, every Id */
	/* server: the last CONNECT_REQUEST's values (the listener's view) */
	unsigned int req_responder_resources, req_initiator_depth;
};
extern struct weft_rcm_test_results weft_rcm_test;

int weft_rcm_test_server_start(const struct weft_rcm_test_params *p);
void weft_rcm_test_server_stop(void);
int weft_rcm_test_client_run(const struct weft_rcm_test_params *p);
void weft_rcm_test_client_stop(void);
/* "10.0.0.1" or an IPv6 address into family and bytes; 0 or -EINVAL. */
int weft_rcm_test_parse_ip(const char *s, uint16_t *family, uint8_t *ip);

WEFT_C_END

#endif
