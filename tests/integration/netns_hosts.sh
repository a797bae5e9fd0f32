#!/bin/bash
# Integration: several logical hosts in one guest (network namespaces),
# cabled with veth, reach each other and only each other.  A check of the
# test machinery (tests/harness/guest-lib.sh), reported as harness/netns_hosts.
set -u
fail=0
weft_host_add alpha || exit 1
weft_host_add beta || exit 1
weft_host_add gamma || exit 1
weft_veth alpha 10.77.0.1/24 beta 10.77.0.2/24 || exit 1
weft_on alpha ping -c 2 -W 5 10.77.0.2 >/dev/null || { echo "netns_hosts: alpha cannot reach beta"; fail=1; }
weft_on beta ping -c 2 -W 5 10.77.0.1 >/dev/null || { echo "netns_hosts: beta cannot reach alpha"; fail=1; }
# gamma has no cable: it must not reach alpha.
if weft_on gamma ping -c 1 -W 1 10.77.0.1 >/dev/null 2>&1; then
	echo "netns_hosts: gamma reached alpha without a cable"
	fail=1
fi
# Each host has its own network stack: alpha holds its address and not beta's.
addrs=$(weft_on alpha ip -o -4 addr show)
[[ $addrs == *10.77.0.1/24* ]] || { echo "netns_hosts: alpha lacks 10.77.0.1: $addrs"; fail=1; }
[[ $addrs == *10.77.0.2/24* ]] && { echo "netns_hosts: alpha holds beta's 10.77.0.2"; fail=1; }
ip netns del alpha
ip netns del beta
ip netns del gamma
exit $fail
