#!/bin/bash
# Integration: the LIO iSER transport weft_isert alone (issue 26, target
# side; the initiator's end-to-end checks are iser.sh).  weft0's ib
# interface in namespace h0 (10.77.0.1), weft1's in h1 (10.77.0.2),
# OpenSM managing the subnet; targetcli run in h1 through nsenter (ip
# netns exec would remount /sys and hide configfs):
#   1. targetcli's "enable_iser true" on portal 10.77.0.2:3260 takes
#      weft_isert as LIO's InfiniBand transport: configfs reads iser 1,
#      the RDMA CM has one more Id and a listener;
#   2. rmmod weft_isert is refused while the portal has iSER;
#   3. rping (not iSER) connects to port 3260 from h0 (so the listener is
#      in h1's namespace): the target accepts with the iSER CM header
#      (IBTA A12: ZBVA not used, Send with Invalidate used since rping's
#      REQ private data does not refuse it, 0x80, as in-tree, in the
#      REP's private data, and RNR retry count 7, in a capture of
#      weft0's port), counts rping's message as dropped (too short for an
#      iSER PDU), and frees the connection once rping is gone (LIO's
#      login fails);
#   4. iser 0 (what "enable_iser false" writes): no listener left, rping
#      is refused, and rmmod weft_isert succeeds;
#   5. iser 1 again: refused from the root namespace (no 10.77.0.2
#      there), taken from h1; then weft1 removed (rmdir in configfs): the listener
#      takes DEVICE_REMOVAL without holding the removal up and its Id goes.
set -u
fail=0
bad() { echo "isert: FAIL: $*"; fail=1; }
rcm=/sys/module/weft_rdma_cm/parameters
ist=/sys/module/weft_isert/parameters
iqn=iqn.2026-12.org.weft:isert
np=/sys/kernel/config/target/iscsi/$iqn/tpgt_1/np/10.77.0.2:3260
param() { cat "$1/$2" 2>/dev/null; }
tc() { nsenter --net=/run/netns/h1 targetcli >>/tmp/isert-tc.out 2>&1; }

dmesg0=$(dmesg | wc -l)
weft_load weft_hca:hcas=0 || exit 1
weft_star 2 || bad "switch, HCAs and cables"
weft_sm_start weft0 2
weft_wait_active weft0 weft1 || bad "ports not ACTIVE under OpenSM"
A=$(weft_ib_netdev weft0) B=$(weft_ib_netdev weft1)
weft_host_add h0 && weft_host_add h1 || exit 1
ip link set "$A" netns h0 && ip link set "$B" netns h1 || exit 1
weft_on h0 ip addr add 10.77.0.1/24 dev "$A"
weft_on h1 ip addr add 10.77.0.2/24 dev "$B"
weft_on h0 ip link set "$A" up && weft_on h1 ip link set "$B" up
weft_carrier h0 "$A" 1 && weft_carrier h1 "$B" 1 || bad "no carrier"
weft_on h0 ping -c 1 -W 10 10.77.0.2 >/dev/null || bad "IPoIB: h0 cannot ping h1"
weft_insmod weft_isert || bad "weft_isert did not load"
ids0=$(param $rcm ids) lis0=$(param $rcm listeners)

# 1: targetcli, unchanged, in h1.
weft_targetcli_prep || bad "targetcli"
: >/tmp/isert-tc.out
tc <<EOF
/backstores/ramdisk create isert0 16M
/iscsi create $iqn
/iscsi/$iqn/tpg1/luns create /backstores/ramdisk/isert0
/iscsi/$iqn/tpg1/portals delete 0.0.0.0 3260
/iscsi/$iqn/tpg1/portals create 10.77.0.2 3260
/iscsi/$iqn/tpg1 set attribute generate_node_acls=1 demo_mode_write_protect=0
/iscsi/$iqn/tpg1/portals/10.77.0.2:3260 enable_iser true
exit
EOF
[ "$(cat $np/iser 2>/dev/null)" = 1 ] || bad "portal's iser reads '$(cat $np/iser 2>&1)': $(tail -5 /tmp/isert-tc.out)"
[ "$(param $rcm ids)" -gt "$ids0" ] || bad "no RDMA CM Id for the iSER portal"
[ "$(param $rcm listeners)" -gt "$lis0" ] || bad "no IB CM listener for the iSER portal"

# 2: LIO holds the transport's module while the portal has iSER.
if rmmod weft_isert 2>/tmp/isert-rmmod.err; then
	bad "rmmod weft_isert succeeded with an iSER portal"
	weft_insmod weft_isert
else
	grep -qi "in use\|busy" /tmp/isert-rmmod.err || bad "rmmod weft_isert: $(cat /tmp/isert-rmmod.err)"
fi

echo "isert: portal set up at $(date +%s)"
# 3: a client that is not iSER.
acc0=$(param $ist accepted) drop0=$(param $ist dropped)
tmp=$(mktemp -d)
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
cat /sys/kernel/debug/weft/weft0/port1/capture >"$tmp/c.pcap" &
cap=$!
sleep 0.5
# rping waits for an answer that never comes: stopped once its message was dropped.
weft_on h0 rping -c -a 10.77.0.2 -p 3260 -C 1 >"$tmp/rping.out" 2>&1 &
rp=$!
weft_until 60 '[ "$(param $ist accepted)" -gt "$acc0" ]' || bad "no connection accepted: $(cat "$tmp/rping.out")"
weft_until 30 '[ "$(param $ist dropped)" -gt "$drop0" ]' || bad "rping's 16-byte message not counted as dropped"
kill "$rp" 2>/dev/null
wait "$rp" 2>/dev/null
sleep 0.5
kill "$cap"
wait "$cap" 2>/dev/null
weft_until 60 '[ "$(param $ist conns)" = 0 ]' || bad "$(param $ist conns) connections left after rping exited"
# The REP (IBA 12.6.8): the CM MAD (class 7, attribute 0x0013) of a UD
# packet (LRH 8, a GRH 40 if LNH says so, BTH 12, DETH 8 bytes); RNR retry count in the
# top 3 bits of REP byte 27, private data from byte 36 (tshark would take
# half a minute to start under TCG for two fields).
rep=$(python3 - "$tmp/c.pcap" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
off = 24
while off + 16 <= len(d):
    incl = struct.unpack("<I", d[off + 8:off + 12])[0]
    pkt = d[off + 16:off + 16 + incl]
    off += 16 + incl
    lrh = 8 + (40 if len(pkt) > 1 and pkt[1] & 3 == 3 else 0)
    mad = pkt[lrh + 20:]
    if len(mad) >= 24 + 40 and mad[1] == 7 and mad[16:18] == b"\x00\x13":
        rep = mad[24:]
        print(rep[36:40].hex(), rep[27] >> 5)
        break
PY
)
echo "isert: REP's first private data bytes and RNR retry count: $rep"
read -r pd rnr <<<"$rep"
[ "$pd" = 80000000 ] || bad "REP private data '$pd', want the iSER CM header 80000000"
[ "$rnr" = 7 ] || bad "REP RNR retry count '$rnr', want 7"
rm -rf "$tmp"
echo "isert: rping checked at $(date +%s)"

# 4: iSER off: the listener goes, the module is free.
# (configfs directly: the same file targetcli writes, without its start-up time)
echo 0 >$np/iser || bad "enable_iser false"
[ "$(cat $np/iser 2>/dev/null)" = 0 ] || bad "portal's iser reads '$(cat $np/iser 2>&1)' after enable_iser false"
weft_until 10 '[ "$(param $rcm ids)" = "$ids0" ]' || bad "RDMA CM ids $(param $rcm ids), want $ids0"
acc0=$(param $ist accepted)
weft_on h0 timeout 30 rping -c -a 10.77.0.2 -p 3260 -C 1 >/dev/null 2>&1 && bad "rping connected to a portal without iSER"
[ "$(param $ist accepted)" = "$acc0" ] || bad "a connection was accepted without iSER"
rmmod weft_isert || bad "rmmod weft_isert after enable_iser false"

# 5: the portal's device removed (DEVICE_REMOVAL on the listener bound to
# its address): it stops listening without holding the removal up, and its
# Id goes.
weft_insmod weft_isert || bad "weft_isert did not load again"
# From the root namespace, where nobody has 10.77.0.2: refused.
echo 1 2>/dev/null >$np/iser && bad "iser 1 from the root namespace worked (want EADDRNOTAVAIL)"
nsenter --net=/run/netns/h1 sh -c "echo 1 >$np/iser" || bad "iser 1 again in h1"
[ "$(param $rcm ids)" -gt "$ids0" ] || bad "no RDMA CM Id for the iSER portal again"
timeout 120 rmdir /sys/kernel/config/weft/hcas/h1 || bad "rmdir hcas/h1 with an iSER portal failed or hung"
weft_until 30 '[ "$(param $rcm ids)" = "$ids0" ]' || bad "RDMA CM ids $(param $rcm ids) after the device went, want $ids0"
echo 0 >$np/iser || bad "iser 0 after the device went"
rmmod weft_isert || bad "rmmod weft_isert after the device went"
dmesg | tail -n +"$((dmesg0 + 1))" | grep -E "WARNING:|BUG:|Oops" && bad "kernel warnings"

weft_lio_clear
weft_sm_stop
ip netns del h0
ip netns del h1
weft_unload || bad "unload failed"
exit $fail
