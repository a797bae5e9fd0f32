#!/bin/bash
# Integration (issue 22): a MAD flood from user space.  On the default
# fabric (weft0, weft1, weftsw0) under OpenSM on weft0, four writers on
# umad0 and umad1 at once (two each, blocking writes, mad_flood.py) send
# 10,000 random and mutated MADs, round-robin at weft1's QP0 and QP1 and the
# switch's QP0 and QP1 (weft1's own writers' MADs come back to it through
# the switch, and so do its SMA's answers to them).  Meanwhile `smpquery nodeinfo` and `perfquery` of weft1 and of the
# switch (from weft0) and `saquery` (from weft1, to the SA on weft0) keep
# being answered (each probe may be retried: the flood shares the links);
# after it every probe is answered at the first try.  Every MAD routed to
# weft1 by LID arrived at its port (counters/port_rcv_packets), and what
# its QP0/QP1 had no receive buffer for is counted in
# hw_counters/out_of_buffer (the only place an arrival can be lost before
# the MAD layer); the console has no splat (vm-run).
set -u
fail=0
bad() { echo "mad_flood: FAIL: $*"; fail=1; }
sys=/sys/class/infiniband
dir=$(dirname "${BASH_SOURCE[0]}")
writers=4 per_writer=2500
oob() { cat "$sys/$1/ports/1/hw_counters/out_of_buffer"; }
rcv() { cat "$sys/$1/ports/1/counters/port_rcv_packets"; }
lid_of() { echo $(($(cat "$sys/$1/ports/1/lid"))); }

weft_load || exit 1
weft_sm_start weft0
weft_wait_active weft0 weft1 || bad "ports not ACTIVE under OpenSM: $(cat /tmp/opensm.out)"
lid0=$(lid_of weft0) lid1=$(lid_of weft1)
sw_lid=
for _ in $(seq 1 60); do
	sw_lid=$(ibswitches 2>/dev/null | sed -n 's/^Switch.* base port 0 lid \([0-9]*\) .*/\1/p' | head -1)
	[ -n "$sw_lid" ] && [ "$sw_lid" -gt 0 ] && saquery -C weft1 -P 1 >/dev/null 2>&1 && break
	sleep 0.5
done
if [ "$lid1" -le 0 ] || [ -z "$sw_lid" ]; then
	bad "no LIDs: weft1 '$lid1', switch '$sw_lid'"
	weft_sm_stop
	weft_unload
	exit 1
fi
echo "weft0 $lid0 weft1 $lid1 switch $sw_lid"

# probe NAME: one query; its output in /tmp/mad_flood.probe.
probe() {
	case $1 in
	smp1) smpquery -C weft0 -P 1 nodeinfo "$lid1" ;;
	smpsw) smpquery -C weft0 -P 1 nodeinfo "$sw_lid" ;;
	pma1) perfquery -C weft0 -P 1 "$lid1" 1 ;;
	pmasw) perfquery -C weft0 -P 1 "$sw_lid" 1 ;;
	sa) saquery -C weft1 -P 1 NodeRecord ;;
	esac >/tmp/mad_flood.probe 2>&1
}
probes="smp1 smpsw pma1 pmasw sa"
# answered NAME: the probe's output is an answer (not just a zero exit).
answered() {
	case $1 in
	smp*) grep -q "^PortGuid:" /tmp/mad_flood.probe ;;
	pma*) grep -q "^PortXmitData:" /tmp/mad_flood.probe ;;
	sa) [ "$(grep -c 'NodeRecord dump' /tmp/mad_flood.probe)" = 3 ] ;;
	esac
}
first_try() { probe "$1" && answered "$1"; }

for p in $probes; do
	first_try "$p" || bad "$p before the flood: $(cat /tmp/mad_flood.probe)"
done
oob0=$(oob weft0) oob1=$(oob weft1) rcv1=$(rcv weft1)
start=$(date +%s.%N)

for w in $(seq 1 $writers); do
	timeout 300 python3 "$dir/mad_flood.py" /dev/infiniband/umad$((w % 2)) "$w" $per_writer "$lid1" "$sw_lid" \
		>"/tmp/mad_flood.w$w" 2>&1 &
	pids[w]=$!
done
# Probes while any writer runs: each answered within 10 tries (a try is the
# tool's own timeout and retries; the flood's replies share weft0's QP0).
during=0 retried=0
alive() { local p; for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }
while alive; do
	for p in $probes; do
		alive || break
		for try in $(seq 1 10); do
			first_try "$p" && break
			retried=$((retried + 1))
			[ "$try" = 10 ] && bad "$p during the flood: not answered in 10 tries: $(cat /tmp/mad_flood.probe)"
		done
		during=$((during + 1))
	done
done
sent=0 refused=0 to1=0
for w in $(seq 1 $writers); do
	wait "${pids[$w]}" || bad "writer $w: $(cat "/tmp/mad_flood.w$w")"
	read -r _ s _ r _ f <"/tmp/mad_flood.w$w"
	sent=$((sent + ${s:-0})) refused=$((refused + ${r:-0})) to1=$((to1 + ${f:-0}))
done
echo "sent $sent ($to1 by LID to weft1), refused by the sender $refused, in $(echo "$(date +%s.%N) - $start" | bc) s;" \
	"$during probes during the flood ($retried retries)"
[ $((sent + refused)) = $((writers * per_writer)) ] || bad "writers sent $sent + refused $refused"
[ "$sent" -ge $((writers * per_writer * 3 / 4)) ] || bad "only $sent MADs sent"
[ "$during" -gt 0 ] || bad "no probe ran during the flood"

# After it: every probe answered at the first try.
for p in $probes; do
	first_try "$p" || bad "$p after the flood: $(cat /tmp/mad_flood.probe)"
done
d0=$(($(oob weft0) - oob0)) d1=$(($(oob weft1) - oob1)) r1=$(($(rcv weft1) - rcv1))
echo "weft1: port_rcv_packets +$r1; hw_counters/out_of_buffer: weft0 +$d0, weft1 +$d1"
[ "$r1" -ge "$to1" ] || bad "weft1 received $r1 packets, fewer than the $to1 MADs routed to it"
# Arrivals dropped at weft1 are counted there, and can be no more than arrived.
[ "$d1" -le "$r1" ] || bad "weft1 counted $d1 arrivals without a buffer of $r1"
weft_sm_stop
weft_unload || bad "unload"
exit $fail
