#!/bin/bash
# Integration: the RDMA CM (weft_rdma_cm) between two hosts, weft0's ib
# interface in namespace h0 (10.77.0.1, fd77::1) and weft1's in h1
# (10.77.0.2, fd77::2), OpenSM managing the subnet, driven by the test
# ULPs weft_selftest_rcm_server (in h1) and weft_selftest_rcm_client (in
# h0), each in the namespace it was loaded in:
#   0. one connection captured on weft0's port: tshark decodes the REQ's
#      private data as the RDMA IP CM header (IBA A11.6) with both
#      addresses and the client's port, and flags no CM MAD;
#   1. checks: REJ with the server's private data (status 28), a port
#      nobody listens on (REJ 8), EADDRINUSE, ADDR_ERROR for an address
#      nobody answers ARP for; SIDR in the UDP port space gives the
#      server's UD QPN and Q_Key 0x01234567;
#   2. connect/echo/disconnect cycles by IPv4 (1,000 on the stock kernel),
#      then 16 connections at once, then cycles by IPv6;
#   3. a server listening on one address only: reached there, not on a
#      second address of its interface;
#   4. 8 connections held: removing an address they do not use tells them
#      nothing; removing theirs (and adding it back), twice, gives each Id
#      ADDR_CHANGE both times; then a cable cut (a second and a half),
#      then the client unloaded: the server sees 8 disconnects;
#   5. no SM: resolving a route nobody answers gives ROUTE_ERROR;
#   6. every Id and IB CM listener gone after the ULPs unload.
set -u
fail=0
bad() { echo "rdma_cm: FAIL: $*"; fail=1; }
cfs=/sys/kernel/config/weft
rcm=/sys/module/weft_rdma_cm/parameters
srv=/sys/module/weft_selftest_rcm_server/parameters
cli=/sys/module/weft_selftest_rcm_client/parameters
cycles=${WEFT_RCM_CYCLES:-1000}
ko() { find "$WEFT_MODDIR" -name "$1.ko" | head -1; }
server() { weft_on h1 insmod "$(ko weft_selftest_rcm_server)" "$@"; }
client() { weft_on h0 insmod "$(ko weft_selftest_rcm_client)" "$@"; }
param() { cat "$1/$2" 2>/dev/null; }

weft_load weft_hca:hcas=0 || exit 1
weft_star 2 || bad "switch, HCAs and cables"
weft_sm_start weft0 2
weft_wait_active weft0 weft1 || bad "ports not ACTIVE under OpenSM"
A=$(weft_ib_netdev weft0) B=$(weft_ib_netdev weft1)
weft_host_add h0 && weft_host_add h1 || exit 1
ip link set "$A" netns h0 && ip link set "$B" netns h1 || exit 1
weft_on h0 ip addr add 10.77.0.1/24 dev "$A"
weft_on h1 ip addr add 10.77.0.2/24 dev "$B"
weft_on h1 ip addr add 10.77.0.3/24 dev "$B"
weft_on h0 ip addr add fd77::1/64 dev "$A" nodad
weft_on h1 ip addr add fd77::2/64 dev "$B" nodad
weft_on h0 ip link set "$A" up && weft_on h1 ip link set "$B" up
weft_carrier h0 "$A" 1 && weft_carrier h1 "$B" 1 || bad "no carrier"
weft_on h0 ping -c 1 -W 10 10.77.0.2 >/dev/null || bad "IPoIB: h0 cannot ping h1"
ids0=$(param $rcm ids)

# 0, 1, 2: the wildcard listener.
server port=7471 || bad "server did not load"
tmp=$(mktemp -d)
# The capture's decoding is no kernel checker's business: the debug kernel (tshark under KASAN takes minutes) skips it.
if [ "${WEFT_KERNEL:-stock}" != debug ]; then
ts() { weft_ib_tshark "$@" 2>>"$tmp/tshark.err"; }
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
cat /sys/kernel/debug/weft/weft0/port1/capture >"$tmp/c.pcap" &
cap=$!
sleep 0.5
client dst=10.77.0.2 port=7471 cycles=1 || bad "captured connection failed"
rmmod weft_selftest_rcm_client
sleep 0.5
kill "$cap"
wait "$cap" 2>/dev/null
weft_pcap_user0 "$tmp/c.pcap" "$tmp/c147.pcap" || bad "capture is not a pcap"
cmf='infiniband.mad.mgmtclass == 0x07 && (_ws.malformed || _ws.expert.severity >= warning)'
flagged=$(ts -r "$tmp/c147.pcap" -Y "$cmf" | wc -l)
[ "$flagged" = 0 ] || bad "tshark flags $flagged CM MADs"
req=$(ts -r "$tmp/c147.pcap" -Y 'infiniband.cm.req.ip_cm' -T fields -E separator=' ' \
	-e infiniband.cm.req.ip_cm.ipv -e infiniband.cm.req.ip_cm.sport \
	-e infiniband.cm.req.ip_cm.sip4 -e infiniband.cm.req.ip_cm.dip4 | head -1)
echo "rdma_cm: REQ's RDMA IP CM header as tshark decodes it: $req"
read -r ipv sport sip dip <<<"$req"
[ "$((ipv))" = 4 ] && [ "$sip" = 10.77.0.1 ] && [ "$dip" = 10.77.0.2 ] && [ "$((sport))" -gt 0 ] ||
	bad "REQ's IP CM header: '$req' (want IP version 4, 10.77.0.1 -> 10.77.0.2, a source port)"
fi
rm -rf "$tmp"
if client dst=10.77.0.2 port=7471 checks=1 ud=1 unreachable=10.77.0.99 cycles="$cycles" concurrent=16; then
	[ "$(param $cli reject_status)" = 28 ] || bad "REJ status $(param $cli reject_status), want 28"
	[ "$(param $cli reject_pdata_ok)" = 1 ] || bad "REJ without the server's private data"
	[ "$(param $cli no_listener_status)" = 8 ] || bad "no listener: status $(param $cli no_listener_status), want 8"
	[ "$(param $cli inuse_errno)" = 98 ] || bad "second bind: errno $(param $cli inuse_errno), want EADDRINUSE"
	[ "$(param $cli addr_error)" -lt 0 ] || bad "unreachable address: no ADDR_ERROR"
	[ "$(param $cli cycles_done)" = "$cycles" ] || bad "cycles: $(param $cli cycles_done) of $cycles"
	[ "$(param $cli concurrent_done)" = 16 ] || bad "concurrent: $(param $cli concurrent_done) of 16"
	[ "$(param $cli established_pdata_ok)" = 1 ] || bad "ESTABLISHED without the server's private data"
	# The client offers responder resources 2 and initiator depth 6: the
	# server's CONNECT_REQUEST says what it may give, 6 and 2 (in-tree's view).
	[ "$(param $srv req_responder_resources)/$(param $srv req_initiator_depth)" = 6/2 ] ||
		bad "CONNECT_REQUEST: responder resources/initiator depth $(param $srv req_responder_resources)/$(param $srv req_initiator_depth), want 6/2"
	[ "$(param $cli ud_qkey)" = $((0x01234567)) ] || bad "SIDR: Q_Key $(param $cli ud_qkey)"
	[ "$(param $srv ud_accepted)" = 1 ] || bad "SIDR: server answered $(param $srv ud_accepted) requests"
else
	bad "IPv4 client run failed: $(dmesg | grep RCM-RESULT | tail -1)"
fi
rmmod weft_selftest_rcm_client
client dst=fd77::2 port=7471 cycles=20 || bad "IPv6 client run failed: $(dmesg | grep RCM-RESULT | tail -1)"
rmmod weft_selftest_rcm_client
echoed=$(param $srv echoed)
[ "${echoed:-0}" -ge $((cycles + 16 + 20)) ] || bad "server echoed $echoed messages"

# 3: one address only.
rmmod weft_selftest_rcm_server
server addr=10.77.0.2 port=7471 || bad "server on 10.77.0.2 did not load"
client dst=10.77.0.2 port=7471 cycles=3 || bad "client to the bound address failed"
rmmod weft_selftest_rcm_client
if client dst=10.77.0.3 port=7471 cycles=1; then
	bad "a server bound to 10.77.0.2 took a connection for 10.77.0.3"
	rmmod weft_selftest_rcm_client
fi

# 4: held connections across a cable cut, then the client goes.
client dst=10.77.0.2 port=7471 hold=8 || bad "hold: $(dmesg | grep RCM-RESULT | tail -1)"
# Address changes (the in-tree ADDR_CHANGE): each removal of the address
# the 8 connections use reaches every one of them, each time.
weft_on h1 ip addr del 10.77.0.3/24 dev "$B"
sleep 1
[ "$(param $srv addr_changes)" = 0 ] || bad "an unused address's removal gave $(param $srv addr_changes) ADDR_CHANGE"
for round in 1 2; do
	weft_on h1 ip addr del 10.77.0.2/24 dev "$B"
	weft_on h1 ip addr add 10.77.0.2/24 dev "$B"
	weft_until 30 '[ "$(param $srv addr_changes)" -ge $((8 * round)) ]' ||
		bad "round $round: $(param $srv addr_changes) ADDR_CHANGE events, want 8 per round"
done
disc0=$(param $srv disconnected)
echo 0 >$cfs/cables/c1/up
sleep 1.5
echo 1 >$cfs/cables/c1/up
weft_wait_active weft1 || bad "weft1 not ACTIVE after the cut"
rmmod weft_selftest_rcm_client || bad "client unload"
weft_until 30 '[ "$(param $srv disconnected)" -ge $((disc0 + 8)) ]' ||
	bad "server saw $(( $(param $srv disconnected) - disc0 )) of 8 disconnects"
weft_until 30 '[ "$(param $srv active)" = 0 ]' || bad "server still holds $(param $srv active) connections"
rmmod weft_selftest_rcm_server

# 5: no SM: a route to a GID the SA was never asked about (this host's own).
weft_sm_stop
if client dst=10.77.0.1 port=7471 expect_route_error=1; then
	rmmod weft_selftest_rcm_client
else
	bad "no ROUTE_ERROR without an SM: $(dmesg | grep RCM-RESULT | tail -1)"
fi

# 6: nothing left.
weft_until 30 '[ "$(param $rcm ids)" = "$ids0" ]' || bad "RDMA CM ids: $(param $rcm ids), want $ids0"
[ "$(param $rcm listeners)" = 0 ] || bad "IB CM listeners left: $(param $rcm listeners)"
dmesg | grep RCM-RESULT
ip netns del h0
ip netns del h1
# The tests after this one in the same guest load the stack again.
weft_unload || bad "unload failed"
exit $fail
