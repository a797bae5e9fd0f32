#!/bin/bash
# Integration: the kernel SA client's InformInfo subscriptions (IBA
# 13.4.8.3, 15.2.5.12; core/mad/sa_inform.h) against OpenSM (issue 27).
# On the default subnet under OpenSM, with weft_selftest_sa watching
# weft0's GID events as a kernel consumer:
#   1. OpenSM's InformInfo table (saquery -I) lists weft0's subscriptions
#      to traps 64 and 65, which weft0's SA client made on its own once
#      the port was ACTIVE;
#   2. disabling weft1's switch port (ibportstate) takes weft1 out of the
#      subnet: OpenSM reports trap 65 for weft1's GID, and the watcher is
#      told (its gid_out counter and its SA-WATCH line with weft1's GID);
#   3. enabling it again brings trap 64 (gid_in);
#   4. at unload the SA client's counters show the subscriptions and the
#      Reports, each acknowledged (OpenSM's InformInfo stays: no Report
#      went unanswered);
#   5. a third HCA made through configfs and cabled to the switch
#      subscribes too; removing it (rmdir, its cable still up) stops its
#      SA client, which tells the SA with InformInfo Subscribe 0 for both
#      traps (seen on the SM's port in a capture), and OpenSM's table no
#      longer lists its subscriptions.
set -u
fail=0
bad() { echo "sa_inform: FAIL: $*"; fail=1; }
sys=/sys/class/infiniband
param=/sys/module/weft_selftest_sa/parameters
# wait_at_least FILE N: FILE's number reaches N within 30 s.
wait_at_least() {
	local _
	for _ in $(seq 1 300); do
		[ "$(cat "$1" 2>/dev/null || echo 0)" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}
short() { python3 -c 'import ipaddress, sys; print(ipaddress.IPv6Address(sys.argv[1]))' "$1"; }

weft_load weft_hca:autoconf=0 || exit 1
weft_insmod weft_selftest_sa watch=weft0 || bad "weft_selftest_sa watch=weft0 did not load"
echo "force_log_flush TRUE" >/tmp/opensm-inform.conf
weft_sm_start weft0 5 "-F /tmp/opensm-inform.conf"
weft_wait_active weft0 weft1 || bad "ports not ACTIVE under OpenSM: $(cat /tmp/opensm.out)"
weft_wait_line /tmp/opensm.log "SUBNET UP" 30 || bad "no SUBNET UP"
gid0=$(short "$(cat $sys/weft0/ports/1/gids/0)")
gid1=$(short "$(cat $sys/weft1/ports/1/gids/0)")
echo "weft0 GID $gid0, weft1 GID $gid1"

# 1. The subscriptions, in the SA's table.
subs=0
for _ in $(seq 1 30); do
	saquery -C weft0 -P 1 -I >/tmp/iir.out 2>&1
	subs=$(grep -c "SubscriberGID\.*$gid0\$" /tmp/iir.out)
	[ "$subs" -ge 2 ] && break
	sleep 1
done
grep -E "SubscriberGID|trap_num" /tmp/iir.out
[ "$subs" -ge 2 ] || bad "OpenSM lists $subs InformInfo subscriptions of weft0, want 2 (64, 65): $(head -30 /tmp/iir.out)"

# 2. weft1 out of the subnet: trap 65 for its GID.
swlid=$(saquery -C weft0 -P 1 NR | awk -F. '/^[[:space:]]*lid\./ {l = $NF} /node_type.*Switch/ {print l; exit}')
[ -n "$swlid" ] && swlid=$((swlid))
[ -n "$swlid" ] || bad "no switch LID"
ibportstate -C weft0 -P 1 "${swlid:-0}" 2 disable >/dev/null || bad "ibportstate disable of weftsw0 port 2 failed"
wait_at_least $param/gid_out 1 || bad "no GID out of service event at weft0 (OpenSM: $(grep -i "report\|inform" /tmp/opensm.log | tail -3))"
dmesg | grep "SA-WATCH" | tail -3
id1=$(cat $sys/weft1/ports/1/gids/0 | tr -d : | cut -c17-32)
dmesg | grep "SA-WATCH weft0 port 1: GID [0-9a-f]*:$id1 out of service" >/dev/null ||
	bad "no out-of-service event for weft1's GID (interface ID $id1)"

# 3. Back: trap 64.
in0=$(cat $param/gid_in)
ibportstate -C weft0 -P 1 "${swlid:-0}" 2 enable >/dev/null || bad "ibportstate enable of weftsw0 port 2 failed"
wait_at_least $param/gid_in $((in0 + 1)) || bad "no GID in service event at weft0 after weft1 came back"
dmesg | grep "SA-WATCH weft0 port 1: GID [0-9a-f]*:$id1 in service" >/dev/null ||
	bad "no in-service event for weft1's GID"

# 4. The SA client's own counters, printed at the watcher's unload.
rmmod weft_selftest_sa || bad "rmmod weft_selftest_sa"
stats=$(dmesg | grep "SA-WATCH stats" | tail -1)
echo "$stats"
[[ "$stats" =~ subscribed\ 1\ subscriptions\ ([0-9]+)\ gid_in\ ([0-9]+)\ gid_out\ ([0-9]+) ]] ||
	bad "no subscribed SA client stats: $stats"
[ "${BASH_REMATCH[1]:-0}" -ge 2 ] || bad "fewer than 2 subscriptions accepted"
[ "${BASH_REMATCH[3]:-0}" -ge 1 ] || bad "no Report of trap 65 counted"
# 5. Unsubscribing when the SA client stops: a port made and removed.
cfs=/sys/kernel/config/weft
mkdir $cfs/hcas/x && echo 1 >$cfs/hcas/x/enable && weft_cable cx "$(cat $cfs/hcas/x/device):1" weftsw0:3 ||
	bad "making a third HCA on weftsw0 port 3"
dx=$(cat $cfs/hcas/x/device)
weft_wait_active "$dx" || bad "$dx not ACTIVE under OpenSM"
gidx=$(short "$(cat $sys/$dx/ports/1/gids/0)")
lidx=$(($(cat $sys/$dx/ports/1/lid)))
subs=0
for _ in $(seq 1 30); do
	subs=$(saquery -C weft0 -P 1 -I 2>/dev/null | grep -c "SubscriberGID\.*$gidx\$")
	[ "$subs" -ge 2 ] && break
	sleep 1
done
[ "$subs" -ge 2 ] || bad "OpenSM lists $subs InformInfo subscriptions of $dx, want 2"
cat /sys/kernel/debug/weft/weft0/port1/capture >/tmp/unsub.pcap &
cap=$!
sleep 1
rmdir $cfs/hcas/x || bad "removing $dx"
sleep 1
kill $cap 2>/dev/null
wait $cap 2>/dev/null
# SubnAdmSet(InformInfo) from its LID with Subscribe 0, by trap number.
unsub=$(python3 - /tmp/unsub.pcap "$lidx" <<'PY'
import struct, sys
data, lid = open(sys.argv[1], "rb").read(), int(sys.argv[2])
at, traps = 24, set()
while at + 16 <= len(data):
    incl = struct.unpack_from("<I", data, at + 8)[0]
    pkt, at = data[at + 16:at + 16 + incl], at + 16 + incl
    # LRH, BTH, DETH, no GRH; the SA record at the MAD's byte 56.
    if len(pkt) < 28 + 84 or pkt[1] & 3 != 2 or struct.unpack_from(">H", pkt, 6)[0] != lid:
        continue
    mad = pkt[28:]
    if mad[1] == 0x03 and mad[3] == 0x02 and struct.unpack_from(">H", mad, 16)[0] == 0x0003 and mad[56 + 23] == 0:
        traps.add(struct.unpack_from(">H", mad, 56 + 26)[0])
print(*sorted(traps))
PY
)
echo "InformInfo Subscribe 0 from $dx (LID $lidx) for traps: ${unsub:-none}"
[ "$unsub" = "64 65" ] || bad "no unsubscription of traps 64 and 65 from $dx on the wire: '${unsub}'"
subs=$(saquery -C weft0 -P 1 -I 2>/dev/null | grep -c "SubscriberGID\.*$gidx\$")
[ "$subs" = 0 ] || bad "OpenSM still lists $subs subscriptions of the removed $dx"
rmdir $cfs/cables/cx 2>/dev/null
weft_sm_stop
weft_unload || fail=1
weft_check_taint || fail=1
exit $fail
