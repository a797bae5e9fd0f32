#!/bin/sh
# deps.sh: install the Debian packages that building and testing Weft need
# (only those missing).  Needs root; apt only.
set -eu
pkgs="build-essential gcc-12 g++-12 make bc flex bison libelf-dev libssl-dev dwarves
	kmod cpio xz-utils rsync linux-headers-amd64 linux-image-amd64 linux-source-6.1
	qemu-system-x86 busybox-static sparse iproute2 iputils-ping python3 tshark
	infiniband-diags perftest ibverbs-providers ibverbs-utils python3-pyverbs rdmacm-utils opensm iperf3 ethtool
	targetcli-fb dbus srptools open-iscsi openmpi-bin libopenmpi-dev libucx0 ucx-utils fio sg3-utils lsscsi e2fsprogs dkms
	clang libclang-rt-14-dev linux-libc-dev"
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends $missing >&2
