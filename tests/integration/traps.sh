#!/bin/bash
# Integration: traps from CA ports (IBA 13.4.9, 14.2.5.1; drivers/hca/trap.cpp)
# reach OpenSM, which represses them (issue 27).  On the default subnet
# under OpenSM (weft0 the SM's port, M_Key protection level 2, a sweep only
# every 60 s, so nothing but the trap can put it in the log):
#   1. trap 144: holding weft1's issm sets IsSM in its CapabilityMask and
#      letting go clears it: each change is one notice from weft1's LID,
#      with its own TID, logged once (the SM's TrapRepress stops the
#      repeats);
#   2. trap 256: a PortInfo Get to weft1 without the M_Key is refused and
#      reported as a Bad M_Key notice from weft1's LID (one for the Get
#      and each retry smpquery makes after the repress), none repeated;
#   3. trap 257: three MADs from weft0's QP1 in partition 0x8002, which
#      weft1 is not in, are dropped at weft1 and reported as Bad P_Key
#      notices from weft1's LID (one, or a new one for a packet that came
#      after the repress), none repeated;
#   4. trap 256 from the switch: a PortInfo Get to weftsw0's port 0
#      without the M_Key is refused, counted in port 0's M_KeyViolations
#      (read back with the key) and reported as a Bad M_Key notice from the
#      switch's LID, none repeated;
#   5. traps 258 and 257 from GSIs: a MAD to weft1's QP1 with a wrong Q_Key
#      is a Bad Q_Key notice from weft1 (Q_KeyViolations counted); to the
#      switch's QP1 (its port 0) in partition 0x8002 a Bad P_Key and with a
#      wrong Q_Key a Bad Q_Key notice from the switch's LID, each counted in
#      port 0's violation counters.
# How long each took from the event to OpenSM's log is printed (never
# asserted: the bound is the test's time, not the host's speed), split by
# trap_latency.py into the time to the SM's wire (a capture of weft0's
# port), to OpenSM's log line (its own timestamp) and to the test seeing it.
set -u
fail=0
bad() { echo "traps: FAIL: $*"; fail=1; }
sys=/sys/class/infiniband
now() { date +%s%3N; }
# wait_log PATTERN COUNT: the log holds COUNT lines matching PATTERN within 30 s.
wait_log() {
	local _
	for _ in $(seq 1 300); do
		[ "$(grep -c "$1" /tmp/opensm.log)" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}
# repressed NUM T0 WHAT MAX [LID]: trap NUM from LID (weft1's by default) in
# the log (the time since T0 printed); after 2 s (a repeat comes after 1 s),
# at most MAX notices (one per event), each TID logged once: repressed, not
# repeated.
repressed() {
	local from=${5:-$lid1}
	local pat="num:$1 .* from LID:$from " t
	if wait_log "$pat" 1; then
		echo "$1-$from $1 $from $2 $(now)" >>/tmp/trap-events
		echo "traps: $1 from LID $from in OpenSM's log $(( $(now) - $2 )) ms after $3"
	else
		bad "no trap $1 from LID $from: $(grep -i "notice\|trap" /tmp/opensm.log | tail -3)"
	fi
	sleep 2
	t=$(tids "$pat")
	[ "$(wc -l <<<"$t")" -le "$4" ] || bad "trap $1 logged $(wc -l <<<"$t") times, want at most $4"
	[ "$(uniq -d <<<"$t")" = "" ] || bad "trap $1 repeated after the TrapRepress: TIDs $(tr "\n" " " <<<"$t")"
}
# gsi_send LID PKEY_INDEX QKEY: three Get(ClassPortInfo) MADs of class 0x09
# from weft0's QP1 to LID's QP1 with weft0's P_Key at PKEY_INDEX and QKEY
# (IB_USER_MAD_ENABLE_PKEY, then the in-tree header); prints when it sent
# them (ms since the epoch), the event's time.
gsi_send() {
	python3 - "${umad:-/dev/null}" "$@" <<'PY'
import fcntl, os, struct, sys, time
dev, lid, idx, qkey = sys.argv[1], int(sys.argv[2]), int(sys.argv[3] or 0), int(sys.argv[4], 0)
fd = os.open(dev, os.O_RDWR)
fcntl.ioctl(fd, 0x1b03)
reg = bytearray(struct.pack("<I QQ BBB 3s B x", 0, 0, 0, 1, 0x09, 1, bytes(3), 0))
fcntl.ioctl(fd, 0xc01c1b01, reg, True)
hdr = struct.pack("<5I", struct.unpack_from("<I", reg)[0], 0, 0, 0, 0)
hdr += struct.pack(">IIH", 1, qkey, lid) + bytes(26) + struct.pack("<H", idx) + bytes(6)
mad = struct.pack(">4BHHQHHI", 1, 0x09, 1, 0x01, 0, 0, 0x257, 0x0001, 0, 0) + bytes(232)
print(int(time.time() * 1000))
for _ in range(3):
    os.write(fd, hdr + mad)
os.close(fd)
PY
}
# tids PATTERN: the TIDs of the notices matching PATTERN, one a line, sorted.
tids() { grep "$1" /tmp/opensm.log | sed -n 's/.*TID:\(0x[0-9a-f]*\).*/\1/p' | sort; }

weft_load weft_hca:autoconf=0 || exit 1
guid=$(ibstat -p weft0 | head -1)
cat >/tmp/partitions-traps.conf <<CONF
Default=0x7fff, ipoib : ALL=full ;
Only0=0x8002 : $guid=full ;
CONF
cat >/tmp/opensm-traps.conf <<CONF
force_log_flush TRUE
m_key 0x0000000000007472
m_key_protection_level 2
CONF
rm -f /tmp/opensm.log
opensm -F /tmp/opensm-traps.conf -P /tmp/partitions-traps.conf -g "$guid" -f /tmp/opensm.log -s 60 \
	>/tmp/opensm.out 2>&1 &
# shellcheck disable=SC2034 # weft_sm_stop (guest-lib.sh) reads it
weft_sm_pid=$!
weft_wait_active weft0 weft1 || bad "ports not ACTIVE under OpenSM: $(cat /tmp/opensm.out)"
wait_log "SUBNET UP" 1 || bad "no SUBNET UP"
sleep 2
lid1=$(($(cat $sys/weft1/ports/1/lid)))
echo "weft1 LID $lid1, cap_mask $(cat $sys/weft1/ports/1/cap_mask)"
[ $(($(cat $sys/weft1/ports/1/cap_mask) & 8)) = 8 ] || bad "weft1 does not announce IsTrapSupported"
# What reaches the SM's port, with the time it arrived (trap_latency.py).
rm -f /tmp/trap-events
cat /sys/kernel/debug/weft/weft0/port1/capture >/tmp/traps.pcap &
cap=$!

# 1. Trap 144, twice.
issm=
for d in /sys/class/infiniband_mad/issm*; do
	[ "$(cat "$d/ibdev")" = weft1 ] && [ "$(cat "$d/port")" = 1 ] && issm=/dev/infiniband/${d##*/}
done
[ -n "$issm" ] || bad "no issm device for weft1 port 1"
n144="num:144 .* from LID:$lid1 "
t0=$(now)
exec 3<"${issm:-/dev/null}"
if wait_log "$n144" 1; then
	echo "144-set 144 $lid1 $t0 $(now)" >>/tmp/trap-events
	echo "traps: 144 (IsSM set) in OpenSM's log $(( $(now) - t0 )) ms after the change"
else
	bad "no trap 144 from LID $lid1 after IsSM was set: $(grep -i "notice\|trap" /tmp/opensm.log | tail -3)"
fi
[ $(($(cat $sys/weft1/ports/1/cap_mask) & 2)) = 2 ] || bad "IsSM not set on weft1 while issm is held"
t0=$(now)
exec 3<&-
if wait_log "$n144" 2; then
	echo "144-cleared 144 $lid1 $t0 $(now)" >>/tmp/trap-events
	echo "traps: 144 (IsSM cleared) in OpenSM's log $(( $(now) - t0 )) ms after the change"
else
	bad "no second trap 144 after IsSM was cleared"
fi
# Repressed: no repeat (one a second, with the same TID, if it were not).
sleep 3
t=$(tids "$n144")
echo "trap 144 TIDs: $(tr "\n" " " <<<"$t")"
[ "$(wc -l <<<"$t")" = 2 ] || bad "trap 144 logged $(wc -l <<<"$t") times, want 2 (repeated after the TrapRepress?)"
[ "$(uniq <<<"$t" | wc -l)" = 2 ] || bad "the two traps 144 share a TID"

# 2. Trap 256: a Get without the key at protection level 2.
t0=$(now)
timeout 30 smpquery -C weft0 -P 1 portinfo "$lid1" 1 >/tmp/smpquery.out 2>&1 &
q=$!
# smpquery sends the Get again on its timeouts: a notice for each after a repress.
repressed 256 "$t0" "the Get was sent" 4
wait $q && bad "PortInfo Get without the M_Key answered at protection level 2"

# 3. Trap 257: GSI MADs in a partition weft1 is not in.
idx=$(grep -lx 0x8002 $sys/weft0/ports/1/pkeys/* | head -1)
[ -n "$idx" ] || bad "0x8002 not in weft0's P_Key table: $(cat $sys/weft0/ports/1/pkeys/* | tr "\n" " ")"
umad=
for d in /sys/class/infiniband_mad/umad*; do
	[ "$(cat "$d/ibdev")" = weft0 ] && umad=/dev/infiniband/${d##*/}
done
t0=$(gsi_send "$lid1" "${idx##*/}" 0x80010000) || bad "sending in partition 0x8002 failed"
# Three packets: one notice, or a new one for a packet after the repress.
repressed 257 "${t0:-0}" "the MADs were sent" 3

# 4. Trap 256 from the switch's port 0, whose key guards the whole switch (IBA 14.2.4).
# Its LID from the SA's NodeRecords (discovery by SMPs is refused without the key at level 2).
swlid=$(saquery -C weft0 -P 1 NR | awk -F. '/^[[:space:]]*lid\./ {l = $NF} /node_type.*Switch/ {print l; exit}')
[ -n "$swlid" ] && swlid=$((swlid))
[ -n "$swlid" ] || bad "no switch LID: $(saquery -C weft0 -P 1 NR 2>&1 | head -20)"
viol() { smpquery -C weft0 -P 1 -y 0x7472 portinfo "${swlid:-0}" 0 | sed -n 's/^MkeyViolations:\.*//p'; }
v0=$(viol)
t0=$(now)
timeout 30 smpquery -C weft0 -P 1 portinfo "${swlid:-0}" 0 >/tmp/smpquery-sw.out 2>&1 &
q=$!
repressed 256 "$t0" "the Get was sent to the switch" 4 "${swlid:-0}"
wait $q && bad "switch PortInfo Get without the M_Key answered at protection level 2"
v1=$(viol)
echo "switch port 0 M_KeyViolations: ${v0:-?} -> ${v1:-?}"
[ -n "$v0" ] && [ -n "$v1" ] && [ "$v1" -gt "$v0" ] || bad "switch M_KeyViolations did not move: ${v0:-?} -> ${v1:-?}"

# 5. Traps 258 (weft1, the switch) and 257 (the switch) from a GSI.
qv() { # LID PORT: PortInfo's P_KeyViolations and Q_KeyViolations
	smpquery -C weft0 -P 1 -y 0x7472 portinfo "$1" "$2" | sed -n 's/^[PQ]keyViolations:\.*//p' | tr "\n" " "
}
v0=$(qv "$lid1" 1)
t0=$(gsi_send "$lid1" 0 0x12345678) || bad "sending with a wrong Q_Key failed"
repressed 258 "${t0:-0}" "the MADs were sent" 3
v1=$(qv "$lid1" 1)
echo "weft1 P_Key/Q_Key violations: $v0-> $v1"
[ "${v1#* }" != "${v0#* }" ] || bad "weft1's Q_KeyViolations did not move: $v0-> $v1"
v0=$(qv "${swlid:-0}" 0)
t0=$(gsi_send "${swlid:-0}" "${idx##*/}" 0x80010000) || bad "sending to the switch in partition 0x8002 failed"
repressed 257 "${t0:-0}" "the MADs were sent to the switch" 3 "${swlid:-0}"
t0=$(gsi_send "${swlid:-0}" 0 0x12345678) || bad "sending to the switch with a wrong Q_Key failed"
repressed 258 "${t0:-0}" "the MADs were sent to the switch" 3 "${swlid:-0}"
v1=$(qv "${swlid:-0}" 0)
echo "switch port 0 P_Key/Q_Key violations: $v0-> $v1"
[ "${v1% * }" != "${v0% * }" ] && [ "${v1#* }" != "${v0#* }" ] ||
	bad "switch port 0's P_Key/Q_Key violations did not both move: $v0-> $v1"
kill $cap 2>/dev/null
wait $cap 2>/dev/null
python3 "$WEFT_REPO/tests/integration/trap_latency.py" /tmp/traps.pcap /tmp/opensm.log /tmp/trap-events ||
	bad "trap_latency.py failed"
grep "num:1[0-9][0-9] \|num:2[0-9][0-9] " /tmp/opensm.log | cut -c1-200
weft_sm_stop
weft_unload || fail=1
weft_check_taint || fail=1
exit $fail
