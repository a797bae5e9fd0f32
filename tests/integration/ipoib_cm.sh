#!/bin/bash
# Integration: IPoIB connected mode (RFC 4755) between two hosts of a Weft
# subnet managed by Debian's OpenSM: weft0's interface in the root
# namespace, weft1's moved into the namespace "h1" (as in ipoib.sh).
#   1. The C flag in both addresses; the mode file reads "datagram".
#   2. Both switched to connected: mode file, MTU 65520.
#   3. ping and ping -6 both ways; RC connections exist (ethtool -S);
#      don't-fragment pings at 65520 and one byte over; iperf3 TCP and UDP
#      both ways; scatter/gather used; receive pages reused.
#   4. Mode switches datagram <-> connected on both ends while iperf3 runs:
#      the stream lives on, ping works afterwards.
#   5. A datagram-mode peer takes our connection (the C flag stands, as
#      in-tree): large pings and TCP over it, its answers as datagrams.
#   5a. A peer without the C flag (a static neighbour entry with the flag
#      cleared): datagrams, ICMP "too big" for large packets, PMTU 2044,
#      TCP works.
#   5b. dest_idle_secs=2 at run time: idle connections go on both sides,
#      the next ping connects again.
#   5c. We in datagram mode, the peer's cable cut (no DREQ reaches us):
#      its connection to us goes after 2 x dest_idle_secs without
#      receives; pings after the cable is back.
#   6. rmmod weft_ipoib with connections up and under traffic: no splat,
#      no leak.
#   7. weft_ipoib with cm_enable=0: no C flag, the mode file refuses
#      "connected".
set -u
fail=0
bad() { echo "ipoib_cm: FAIL: $*"; fail=1; }
sys=/sys/class/infiniband
cfs=/sys/kernel/config/weft
ip4a=10.77.0.1 ip4b=10.77.0.2 ip6a=fd77::1 ip6b=fd77::2

# stat HOST IF NAME: one ethtool -S counter.
stat() { weft_on "$1" ethtool -S "$2" | sed -n "s/^ *$3: //p"; }
# settles HOST IF NAME OP VALUE: the counter satisfies "-OP VALUE" within
# 30 s (connections come and go in the interface's work item, after the
# packet or the mode switch that caused them).
settles() {
	local i v
	for i in $(seq 1 150); do
		v=$(stat "$1" "$2" "$3")
		[ "${v:-0}" "-$4" "$5" ] && return 0
		sleep 0.2
	done
	return 1
}
# mode HOST IF MODE: switch, then check the mode file.
mode() {
	weft_on "$1" sh -c "echo $3 >/sys/class/net/$2/mode" || return 1
	[ "$(weft_on "$1" cat /sys/class/net/"$2"/mode)" = "$3" ]
}
mtu_of() { weft_on "$1" cat /sys/class/net/"$2"/mtu; }
iperf() {
	local c=$1 s=$2 a=$3 out
	shift 3
	weft_iperf_server "$s" 5201 -1 || return 1
	out=$(weft_on "$c" timeout 60 iperf3 -c "$a" -p 5201 "$@" 2>&1)
	echo "$out" | tail -4
	grep -q "receiver" <<<"$out" || return 1
	echo "ipoib_cm: iperf3 $c -> $a $*: $(grep receiver <<<"$out" | tail -1 | grep -o '[0-9.]* [KMG]bits/sec')"
}

weft_kmemleak_clear
weft_load weft_hca:hcas=0 || exit 1
weft_star 2 || bad "switch, HCAs and cables"
weft_sm_start weft0
weft_wait_active weft0 weft1 || bad "ports not ACTIVE under OpenSM"

# 1. The netdevs offer connected mode.
A=$(weft_ib_netdev weft0)
B=$(weft_ib_netdev weft1)
[ -n "$A" ] && [ -n "$B" ] || { bad "no IPoIB netdevs: $(ls /sys/class/net)"; weft_unload; exit 1; }
echo "ipoib_cm: weft0 -> $A, weft1 -> $B"
addr=$(tr -d ':\n' </sys/class/net/$A/address)
[ "${addr:0:2}" = 80 ] || bad "$A address $addr: no RFC 4755 C flag (0x80)"
weft_expect /sys/class/net/$A/mode $'datagram\n' || bad "$A mode is not datagram at creation"
echo bogus >/sys/class/net/$A/mode 2>/dev/null && bad "mode file took 'bogus'"
weft_host_add h1 || bad "netns h1"
ip link set "$B" netns h1 || bad "moving $B into h1"
ip addr add $ip4a/24 dev "$A" && ip addr add $ip6a/64 dev "$A" nodad && ip link set "$A" up || bad "$A up"
weft_on h1 ip addr add $ip4b/24 dev "$B" && weft_on h1 ip addr add $ip6b/64 dev "$B" nodad &&
	weft_on h1 ip link set "$B" up || bad "$B up"
weft_carrier - "$A" 1 || bad "$A: no carrier"
weft_carrier h1 "$B" 1 || bad "$B: no carrier"
[ "$(mtu_of - "$A")" = 2044 ] || bad "$A datagram MTU $(mtu_of - "$A")"

# 2. Connected mode on both.
mode - "$A" connected || bad "$A: mode connected"
mode h1 "$B" connected || bad "$B: mode connected"
[ "$(mtu_of - "$A")" = 65520 ] || bad "$A connected MTU $(mtu_of - "$A"), want 65520"
[ "$(mtu_of h1 "$B")" = 65520 ] || bad "$B connected MTU $(mtu_of h1 "$B"), want 65520"
ip link set "$A" mtu 65521 2>/dev/null && bad "MTU 65521 accepted"

# 3. Traffic over RC connections.
weft_pings - $ip4b || bad "ping $ip4b"
weft_pings h1 $ip4a || bad "ping $ip4a from h1"
weft_pings - $ip6b -6 || bad "ping -6 $ip6b"
weft_pings h1 $ip6a -6 || bad "ping -6 $ip6a from h1"
settles - "$A" cm_connections ge 1 || bad "$A: no connection up: $(ethtool -S "$A" | grep cm_)"
settles h1 "$B" cm_accepts ge 1 || bad "$B accepted no connection"
weft_pings - $ip4b -M do -s $((65520 - 28)) || bad "don't-fragment ping of $((65520 - 28)) bytes"
weft_pings h1 $ip4a -M do -s $((65520 - 28)) || bad "don't-fragment ping of $((65520 - 28)) bytes from h1"
# Those could only go over connections (pings before them may have gone as
# datagrams while the connections came up).
[ "$(stat - "$A" cm_tx_packets)" -ge 3 ] || bad "$A: nothing sent on a connection"
[ "$(stat - "$A" cm_rx_packets)" -ge 3 ] || bad "$A: nothing received on a connection"
ping -c 1 -W 2 -M do -s $((65520 - 27)) $ip4b >/dev/null 2>&1 && bad "don't-fragment ping of $((65520 - 27)) went through"
weft_pings - $ip6b -6 -M do -s $((65520 - 48)) || bad "IPv6 ping of $((65520 - 48)) bytes"
ping -6 -c 1 -W 2 -M do -s $((65520 - 47)) $ip6b >/dev/null 2>&1 && bad "IPv6 ping of $((65520 - 47)) went through"
rtt=$(ping -c 10 -i 0.2 -q $ip4b 2>&1 | sed -n 's|.*= [0-9.]*/\([0-9.]*\)/.*|\1|p')
echo "ipoib_cm: ping RTT avg ${rtt:-?} ms"
iperf - h1 $ip4b -t 8 || bad "iperf3 TCP root -> h1"
iperf h1 - $ip4a -t 8 || bad "iperf3 TCP h1 -> root"
iperf - h1 $ip4b -t 5 -u -b 200M || bad "iperf3 UDP root -> h1"
iperf h1 - $ip4a -t 5 -u -b 200M -l 30000 || bad "iperf3 UDP h1 -> root (30000-byte datagrams)"
ethtool -S "$A" | grep -E 'cm_|tx_|rx_'
# Scatter/gather: TCP's paged 64 KiB skbs went out as gather lists, not
# copied flat first; with it switched off none does.
ethtool -k "$A" | grep -qx "scatter-gather: on" || bad "ethtool -k $A: scatter-gather not on"
[ "$(stat - "$A" tx_gathered)" -gt 0 ] || bad "ethtool -S $A: tx_gathered $(stat - "$A" tx_gathered)"
ethtool -K "$A" sg off || bad "ethtool -K $A sg off"
before=$(stat - "$A" tx_gathered)
iperf - h1 $ip4b -t 3 || bad "iperf3 TCP with scatter/gather off"
[ "$(stat - "$A" tx_gathered)" = "$before" ] || bad "tx_gathered grew with scatter/gather off"
ethtool -K "$A" sg on || bad "ethtool -K $A sg on"
# Segmentation offload is datagram mode's: a connected-mode packet is one RC message.
ethtool -k "$A" | grep -q "^	tx-tcp-segmentation: off" || bad "ethtool -k $A: TSO not off in connected mode"
# The HCA inserted the checksums of connected-mode TCP too.
[ "$(stat - "$A" tx_csum_offload)" -gt 100 ] || bad "$A: tx_csum_offload $(stat - "$A" tx_csum_offload)"
# The receivers' pages came back from the stack and were used again.
[ "$(stat h1 "$B" cm_rx_pages_reused)" -gt 0 ] || bad "$B: no receive page reused"
[ "$(stat - "$A" cm_rx_pages_reused)" -gt 0 ] || bad "$A: no receive page reused"

# 4. Mode switches while a TCP stream runs.
weft_iperf_server h1 5203 -1 || bad "no iperf3 server in h1 on 5203"
timeout 90 iperf3 -c $ip4b -p 5203 -t 24 >/tmp/cm-iperf.out 2>&1 &
load=$!
sleep 3
mode - "$A" datagram || bad "$A: mode datagram under traffic"
[ "$(mtu_of - "$A")" = 2044 ] || bad "$A MTU $(mtu_of - "$A") after datagram, want 2044"
sleep 3
mode - "$A" connected || bad "$A: mode connected under traffic"
sleep 3
mode h1 "$B" datagram || bad "$B: mode datagram under traffic"
sleep 3
mode h1 "$B" connected || bad "$B: mode connected under traffic"
wait $load
tail -4 /tmp/cm-iperf.out
grep -q receiver /tmp/cm-iperf.out || bad "TCP stream did not survive the mode switches"
weft_pings - $ip4b || bad "ping after the mode switches"
weft_pings h1 $ip4a || bad "ping from h1 after the mode switches"
weft_pings - $ip6b -6 -s 20000 || bad "ping -6 of 20000 bytes after the mode switches"

# 5. A datagram-mode peer still takes connections (its C flag stands, as
# in-tree): ours to it comes up and carries large packets whole, its
# answers come back as datagrams.
mode h1 "$B" datagram || bad "$B: mode datagram"
weft_on h1 ethtool -k "$B" | grep -qx "	tx-tcp-segmentation: on" || bad "ethtool -k $B: TSO not back on in datagram mode"
ip route flush cache
weft_pings - $ip4b -s 3000 || bad "3000-byte ping to a datagram-mode peer"
settles - "$A" cm_connections ge 1 || bad "$A: no connection to the datagram-mode peer"
settles h1 "$B" cm_passive ge 1 || bad "$B (datagram mode): no passive connection"
settles h1 "$B" cm_connections eq 0 || bad "$B (datagram mode) kept sending connections"
ip route get $ip4b | grep -q "mtu 2044" && bad "PMTU 2044 towards a peer that took the connection"
iperf - h1 $ip4b -t 5 || bad "iperf3 TCP to a datagram-mode peer"
iperf h1 - $ip4a -t 5 || bad "iperf3 TCP from a datagram-mode peer"

# 5a. A peer without the C flag (what a cm_enable=0 host or another stack
# would advertise: B's second address, whose neighbour entry on our side
# carries its hardware address with the flag cleared): datagrams only, a
# packet too big for them gets ICMP "too big" (PMTU 2044).
ip4c=10.77.0.3 ip6c=fd77::3
weft_on h1 ip addr add $ip4c/24 dev "$B"
weft_on h1 ip addr add $ip6c/64 dev "$B" nodad
nocm=00$(weft_on h1 cat /sys/class/net/"$B"/address | cut -c3-)
ip neigh replace $ip4c lladdr "$nocm" dev "$A" nud permanent || bad "static neighbour $ip4c"
ip -6 neigh replace $ip6c lladdr "$nocm" dev "$A" nud permanent || bad "static neighbour $ip6c"
big0=$(stat - "$A" cm_too_big)
# The first large packet comes back as ICMP "too big" (ping reports it), the next ones are fragmented.
ping -c 1 -W 2 -s 3000 $ip4c 2>&1 | grep -q "mtu = 2044" || bad "no ICMP frag needed (mtu 2044) from a large ping"
ping -6 -c 1 -W 2 -s 3000 $ip6c 2>&1 | grep -q "mtu=2044" || bad "no ICMPv6 packet too big (mtu 2044) from a large ping"
[ "$(stat - "$A" cm_too_big)" -ge $((big0 + 2)) ] || bad "cm_too_big did not count both"
ip route get $ip4c | grep -q "mtu 2044" || bad "no PMTU 2044 towards the peer without the C flag: $(ip route get $ip4c)"
weft_pings - $ip4c -s 3000 || bad "3000-byte ping to a peer without the C flag"
weft_pings - $ip6c -6 -s 3000 || bad "3000-byte ping -6 to a peer without the C flag"
iperf - h1 $ip4c -t 5 || bad "iperf3 TCP to a peer without the C flag (PMTU)"
ethtool -S "$A" | grep cm_
ip neigh del $ip4c dev "$A"
ip -6 neigh del $ip6c dev "$A"
weft_on h1 ip addr del $ip4c/24 dev "$B"
weft_on h1 ip addr del $ip6c/64 dev "$B"
mode h1 "$B" connected || bad "$B: mode connected again"

# 5b. Idle connections age out (dest_idle_secs, writable at run time):
# both sending sides release theirs, and the next packets connect again.
for _ in $(seq 1 60); do
	ping -c 1 -W 1 $ip4b >/dev/null 2>&1
	[ "$(stat - "$A" cm_connections)" -ge 1 ] && break
	sleep 0.5
done
[ "$(stat - "$A" cm_connections)" -ge 1 ] || bad "$A: no connection to age"
aged0=$(stat - "$A" cm_aged) conn0=$(stat - "$A" cm_connects)
echo 2 >/sys/module/weft_ipoib/parameters/dest_idle_secs
idle=
for _ in $(seq 1 60); do
	[ "$(stat - "$A" cm_connections)" = 0 ] && [ "$(stat h1 "$B" cm_connections)" = 0 ] && { idle=1; break; }
	sleep 0.5
done
echo 60 >/sys/module/weft_ipoib/parameters/dest_idle_secs
echo "ipoib_cm: aging: $A cm_aged $(stat - "$A" cm_aged) (was $aged0), $B cm_aged $(stat h1 "$B" cm_aged)"
[ -n "$idle" ] || bad "connections still up after 30 s idle with dest_idle_secs=2: $(stat - "$A" cm_connections) $(stat h1 "$B" cm_connections)"
[ "$(stat - "$A" cm_aged)" -gt "$aged0" ] || bad "$A: cm_aged did not count"
weft_pings - $ip4b -s 3000 || bad "ping after the connections aged"
[ "$(stat - "$A" cm_connects)" -gt "$conn0" ] || bad "$A: no new connection after aging"

# 5c. A peer that goes away without a DREQ (its cable cut: it flushes its
# own side, nothing reaches us): our side of its connection receives
# nothing and goes after 2 x dest_idle_secs (cm_passive_aged).  We are
# in datagram mode meanwhile: passive connections live (and age) in both.
mode - "$A" datagram || bad "$A: mode datagram before the cable cut"
weft_pings h1 $ip4a -s 3000 || bad "ping from h1 before its cable is cut"
settles - "$A" cm_passive ge 1 || bad "$A: no passive connection from $B (cm_passive $(stat - "$A" cm_passive))"
paged0=$(stat - "$A" cm_passive_aged)
echo 0 >$cfs/cables/c1/up || bad "cutting c1"
weft_carrier h1 "$B" 0 10 || bad "$B kept its carrier with the cable cut"
echo 1 >/sys/module/weft_ipoib/parameters/dest_idle_secs
gone=
for _ in $(seq 1 40); do
	[ "$(stat - "$A" cm_passive)" = 0 ] && { gone=1; break; }
	sleep 0.5
done
echo 60 >/sys/module/weft_ipoib/parameters/dest_idle_secs
echo "ipoib_cm: peer gone: $A cm_passive $(stat - "$A" cm_passive), cm_passive_aged $(stat - "$A" cm_passive_aged) (was $paged0)"
[ -n "$gone" ] || bad "$A kept the connection of a peer gone for 20 s (2 x dest_idle_secs = 2 s)"
[ "$(stat - "$A" cm_passive_aged)" -gt "$paged0" ] || bad "$A: cm_passive_aged did not count"
echo 1 >$cfs/cables/c1/up || bad "re-making c1"
weft_wait_active weft1 || bad "weft1 not ACTIVE after the cable came back"
weft_carrier h1 "$B" 1 || bad "$B: no carrier after the cable came back"
mode - "$A" connected || bad "$A: mode connected after the cable cut"
weft_pings h1 $ip4a -s 3000 || bad "ping from h1 after the cable came back"
weft_pings - $ip4b -s 3000 || bad "ping to h1 after the cable came back"

# 6. rmmod weft_ipoib with connections up, under traffic.
weft_pings h1 $ip4a || bad "ping from h1 before unload"
weft_iperf_server h1 5202 || bad "no iperf3 server in h1"
timeout 60 iperf3 -c $ip4b -p 5202 -t 30 >/dev/null 2>&1 &
load=$!
weft_on h1 ping -f -w 30 -s 30000 $ip4a >/dev/null 2>&1 &
flood=$!
sleep 4
echo "ipoib_cm: before rmmod: $A cm_connections $(stat - "$A" cm_connections), $B accepts $(stat h1 "$B" cm_accepts)"
timeout 60 rmmod weft_ipoib || bad "rmmod weft_ipoib under connected-mode traffic"
[ -e /sys/class/net/"$A" ] && bad "$A still there after rmmod"
kill $load $flood 2>/dev/null
wait $load $flood 2>/dev/null
weft_on h1 pkill -x iperf3

# 7. Without connected mode (cm_enable=0): no C flag, "connected" refused.
insmod "$WEFT_MODDIR/ulp/ipoib/weft_ipoib.ko" cm_enable=0 || bad "insmod weft_ipoib cm_enable=0"
sleep 1
A=$(weft_ib_netdev weft0)
if [ -n "$A" ]; then
	addr=$(tr -d ':\n' </sys/class/net/$A/address)
	[ "${addr:0:2}" = 00 ] || bad "cm_enable=0: $A address $addr has the C flag"
	weft_expect /sys/class/net/$A/mode $'datagram\n' || bad "cm_enable=0: $A mode"
	echo connected >/sys/class/net/$A/mode 2>/dev/null && bad "cm_enable=0: mode connected accepted"
	weft_expect /sys/class/net/$A/mode $'datagram\n' || bad "cm_enable=0: $A mode changed"
else
	bad "no netdev with cm_enable=0: $(ls /sys/class/net)"
fi
ip netns del h1
weft_sm_stop
weft_unload || bad "unload"
weft_check_taint || fail=1
weft_kmemleak_check || bad "kmemleak found leaks"
[ $fail = 0 ] && echo "ipoib_cm: PASS"
exit $fail
