#!/bin/bash
# Integration: IPoIB's umcast (IFLA_IPOIB_UMCAST, sysfs umcast), as
# in-tree: with it set, an IP multicast group the stack listens to that
# another consumer of the port already joined through the SA client is
# left to that consumer (not joined, not attached: its traffic is not
# taken by IPoIB).  Two hosts under OpenSM; weft_selftest_sa holds weft1's
# full membership of 239.77.0.9's group as the other consumer.
#   1. h0 sends to 239.77.0.9 (its send-only join makes the group).
#   2. umcast 1 on h1's interface, the group held by the test module: a
#      listener on h1 receives nothing, mcast_umcast_skipped counts.
#   3. umcast 0: a new listener joins (sharing the held membership) and
#      receives.
set -u
fail=0
bad() { echo "ipoib_umcast: FAIL: $*"; fail=1; }
group=239.77.0.9

# listen SECONDS: datagrams h1 receives on $group while h0 sends one every 0.2 s.
listen() {
	rm -f /tmp/umcast.out
	weft_on h1 timeout $(($1 + 10)) python3 - 10.77.0.2 "$group" "$1" >/tmp/umcast.out 2>&1 <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[2], 5401))
s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
             socket.inet_aton(sys.argv[2]) + socket.inet_aton(sys.argv[1]))
s.settimeout(0.5)
n, end = 0, time.time() + float(sys.argv[3])
while time.time() < end:
    try:
        data, _ = s.recvfrom(100)
        n += data == b"weft-umcast"
    except socket.timeout:
        pass
print("received", n)
PY
	local rx=$!
	send $(($1 * 5))
	wait $rx
}

# send N: N datagrams from h0 to $group, 0.2 s apart.
send() {
	weft_on h0 python3 - 10.77.0.1 "$group" "$1" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(sys.argv[1]))
for _ in range(int(sys.argv[3])):
    s.sendto(b"weft-umcast", (sys.argv[2], 5401))
    time.sleep(0.2)
PY
}

stat() { weft_on "$1" ethtool -S "$2" | sed -n "s/^ *$3: //p"; }

weft_kmemleak_clear
weft_ipoib_hosts || { bad "IPoIB hosts"; weft_unload; exit 1; }
for _ in $(seq 1 60); do
	weft_on h0 ping -c 1 -W 1 10.77.0.2 >/dev/null 2>&1 && break
done

# 1. The group exists once h0 has sent to it.
send 5
# 2. Held by another consumer of weft1's port; h1 leaves it to it.
weft_on h1 sh -c "echo 1 >/sys/class/net/$B/umcast"
[ "$(weft_on h1 cat "/sys/class/net/$B/umcast")" = 1 ] || bad "umcast not set"
weft_insmod weft_selftest_sa hold=weft1 group=$((0xef4d0009)) || bad "the test module could not hold $group's group"
skipped0=$(stat h1 "$B" mcast_umcast_skipped)
listen 8
echo "ipoib_umcast: umcast 1, group held elsewhere: $(cat /tmp/umcast.out)"
grep -q "^received 0$" /tmp/umcast.out || bad "umcast 1: h1 took the held group's traffic: $(cat /tmp/umcast.out)"
[ "$(stat h1 "$B" mcast_umcast_skipped)" -gt "${skipped0:-0}" ] || bad "mcast_umcast_skipped did not count"
# 3. umcast 0: IPoIB joins (the held membership is shared) and receives.
weft_on h1 sh -c "echo 0 >/sys/class/net/$B/umcast"
listen 8
echo "ipoib_umcast: umcast 0: $(cat /tmp/umcast.out)"
n=$(sed -n 's/^received //p' /tmp/umcast.out)
[ "${n:-0}" -ge 5 ] || bad "umcast 0: h1 received ${n:-0} datagrams of $group"

rmmod weft_selftest_sa || bad "rmmod weft_selftest_sa"
ip netns del h0
ip netns del h1
weft_sm_stop
sleep 1
weft_unload || bad "unload"
weft_kmemleak_check || fail=1
weft_check_taint || fail=1
exit $fail
