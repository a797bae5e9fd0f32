#!/bin/bash
# dkms-build.sh [KVER]: the host's half of tests/integration/install.sh's
# DKMS check.  A TCG test host would take most of an hour to compile Weft,
# so Debian's dkms builds it here, for the test host's kernel (default: the
# newest Debian 6.1 headers), in scratch trees under build/dkms/: the
# sources as "make dkms-install" stages them (build/dkms/src/weft-<version>),
# DKMS's own tree (build/dkms/tree).  The test host then runs "dkms install"
# and "dkms remove" on that tree against its real /lib/modules.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
command -v dkms >/dev/null || { echo "dkms-build: dkms is not installed (scripts/deps.sh)" >&2; exit 1; }
headers=$(ls -d /usr/src/linux-headers-*-amd64 | sort -V | tail -1)
kver=${1:-$(sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' "$headers/include/generated/utsrelease.h")}
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
top=$repo/build/dkms
rm -rf "$top"
mkdir -p "$top/src/weft-$version" "$top/tree"
tar --exclude=./build --exclude=./shell-work --exclude=./.git -cf - . | tar -C "$top/src/weft-$version" -xf -
trees=(--dkmstree "$top/tree" --sourcetree "$top/src")
dkms add weft/"$version" "${trees[@]}" >"$top/dkms.log" 2>&1 &&
	dkms build weft/"$version" -k "$kver" "${trees[@]}" >>"$top/dkms.log" 2>&1 ||
	{ cat "$top/dkms.log"; find "$top/tree" -name make.log -exec tail -30 {} \;; exit 1; }
dkms status "${trees[@]}"
