#!/bin/bash
# Integration: Weft installed as a user installs it (Documentation/installing.md),
# on the test host's own root (the host's, under the guest's writable
# overlay: /lib/modules/<release> and /etc/modprobe.d are the real ones
# modprobe and depmod use, and nothing outlives the guest).  Twice:
#   1. make install (into /lib/modules/<release>/updates/weft), and
#   2. dkms install of the DKMS package built on the host by
#      tests/install/dkms-build.sh (Debian's dkms, dkms.conf; a TCG guest
#      is too slow to compile Weft itself), from build/dkms/.
# Run by `make check-install` (tests/install/check-install.sh), not by make
# check: each depmod reads every module of the kernel over 9p, some fifteen
# minutes in all on a loaded 2-core host.
# Each time: every production module installed, modinfo finds them, every
# module parameter described; modprobe by name alone loads the stack
# (weft_ipoib pulls in what it needs, "ib_uverbs" and "ib_umad" load
# Weft's), OpenSM brings the subnet up and IPoIB pings between two hosts;
# the modprobe.d file keeps the in-tree stack out (ib_core, rdma_rxe and
# ib_srp fail to load, "ib_srpt" means weft_srpt); then uninstall (make
# uninstall, dkms remove) and nothing is left: modinfo weft_hca fails,
# weft.conf and the module directory are gone, the module indexes name
# no Weft module, /lib/modules/<release> holds the files it held before,
# and ib_core resolves to the in-tree module again.
#
# The test host's own block list of the in-tree stack
# (/etc/modprobe.d/weft-test-host.conf, tests/harness/guest-init.sh) is
# moved aside meanwhile, so weft.conf alone is under test.
set -u
fail=0
bad() { echo "install: FAIL: $*"; fail=1; }
kver=$(uname -r)
lm=/lib/modules/$kver
conf=/etc/modprobe.d/weft.conf
hostconf=/etc/modprobe.d/weft-test-host.conf
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$WEFT_REPO/dkms.conf")
dkms_top=$WEFT_REPO/build/dkms
dkms_trees=(--dkmstree "$dkms_top/tree" --sourcetree "$dkms_top/src")
mods=$("$WEFT_REPO/scripts/weft-modules.sh" "$WEFT_MODDIR" | xargs -n1 basename | sed 's/\.ko$//' | sort)

mv $hostconf /tmp/weft-test-host.conf || exit 1
trap 'mv /tmp/weft-test-host.conf $hostconf' EXIT

# The state nothing must differ from after an uninstall.
snapshot() { (cd $lm && find . -path ./build -prune -o -path ./source -prune -o -print | sort); }
snapshot >/tmp/install.before

# Without Weft installed: nothing by name, the in-tree stack loadable.
modinfo weft_hca >/dev/null 2>&1 && bad "modinfo weft_hca before any install"
modprobe -n -v ib_core 2>&1 | grep -q 'insmod .*/ib_core\.ko' ||
	bad "before install, modprobe -n ib_core: $(modprobe -n -v ib_core 2>&1)"

# dkms.conf names every production module.
dkms_mods=$(sed -n 's/^BUILT_MODULE_NAME\[[0-9]*\]="\(.*\)"/\1/p' "$WEFT_REPO/dkms.conf" | sort)
[ "$dkms_mods" = "$mods" ] || bad "dkms.conf builds '$(echo $dkms_mods)', the production modules are '$(echo $mods)'"

# installed DIR: what an install must have done (modules in DIR).
installed() {
	local dir=$1 m f
	for m in $mods; do
		f=$(modinfo -n "$m" 2>/dev/null)
		[ "$f" = "$lm/$dir/$m.ko" ] || bad "modinfo -n $m: '$f', want $lm/$dir/$m.ko"
		# Every parameter with a type (parmtype=; module_param_cb has none)
		# has a description (parm=, MODULE_PARM_DESC).
		modinfo -F parmtype "$m" | cut -d: -f1 | sort >/tmp/install.types
		tr '\0' '\n' <"$f" | sed -n 's/^parm=\([^:]*\):.*/\1/p' | sort -u >/tmp/install.descs
		[ -z "$(comm -23 /tmp/install.types /tmp/install.descs)" ] ||
			bad "$m: parameters without MODULE_PARM_DESC: $(comm -23 /tmp/install.types /tmp/install.descs)"
	done
	[ -f $conf ] || bad "no $conf"
	# weft_ipoib's dependencies, as modprobe will load them.
	[ "$(modinfo -F depends weft_ipoib | tr ',' '\n' | sort | tr '\n' ' ')" = "weft_cm weft_mad weft_rt weft_verbs " ] ||
		bad "modinfo -F depends weft_ipoib: $(modinfo -F depends weft_ipoib)"
	modinfo -F depends weft_hca | grep -qw configfs || bad "weft_hca does not depend on configfs: $(modinfo -F depends weft_hca)"
}

# loaded_by_name [fabric]: the stack by modprobe alone; with "fabric" also
# OpenSM and IPoIB between two hosts (once: the test host is slow).
loaded_by_name() {
	local A B
	modprobe weft_ipoib || { bad "modprobe weft_ipoib"; return; }
	for m in weft_rt weft_verbs weft_mad weft_cm weft_ipoib; do
		grep -q "^$m " /proc/modules || bad "modprobe weft_ipoib did not load $m"
	done
	modprobe weft_hca autoconf=0 || bad "modprobe weft_hca"
	modprobe ib_umad || bad "modprobe ib_umad"
	modprobe ib_uverbs || bad "modprobe ib_uverbs"
	grep -q '^weft_umad ' /proc/modules && grep -q '^weft_uverbs ' /proc/modules ||
		bad "ib_umad/ib_uverbs did not load weft_umad/weft_uverbs: $(grep -o '^[a-z_]*' /proc/modules | tr '\n' ' ')"
	# The in-tree stack is kept out, also as a dependency of another module.
	for m in ib_core rdma_rxe ib_srp; do
		modprobe $m 2>/dev/null && bad "modprobe $m succeeded with Weft installed"
	done
	[ "$(modprobe -R ib_srpt 2>/dev/null)" = weft_srpt ] || bad "ib_srpt resolves to '$(modprobe -R ib_srpt 2>&1)', want weft_srpt"
	[ "$(modprobe -R ib_ipoib 2>/dev/null)" = weft_ipoib ] || bad "ib_ipoib resolves to '$(modprobe -R ib_ipoib 2>&1)'"
	grep -qE '^(ib_core|rdma_rxe|ib_uverbs|ib_umad|ib_ipoib) ' /proc/modules && bad "an in-tree RDMA module loaded"
	if [ "${1:-}" = fabric ]; then
		weft_sm_start weft0
		weft_wait_active weft0 weft1 || bad "ports not ACTIVE under OpenSM"
		A=$(weft_ib_netdev weft0) B=$(weft_ib_netdev weft1)
		if [ -n "$A" ] && [ -n "$B" ] && weft_host_add h1 && ip link set "$B" netns h1 &&
			ip addr add 10.77.0.1/24 dev "$A" && ip link set "$A" up &&
			weft_on h1 ip addr add 10.77.0.2/24 dev "$B" && weft_on h1 ip link set "$B" up; then
			weft_pings - 10.77.0.2 >/dev/null || bad "no ping over IPoIB"
		else
			bad "IPoIB hosts ($A, $B)"
		fi
		ip netns del h1 2>/dev/null
		weft_sm_stop
	fi
	weft_fabric_clear
	# Each by name, users first (modprobe -r takes a dependency along only
	# when nothing else uses it yet).
	for m in weft_ipoib weft_uverbs weft_umad weft_hca weft_cm weft_mad weft_verbs weft_rt; do
		grep -q "^$m " /proc/modules && { modprobe -r $m || bad "modprobe -r $m"; }
	done
	grep '^weft_' /proc/modules && bad "Weft modules left loaded after modprobe -r"
}

# nothing_left DIR: after an uninstall.
nothing_left() {
	modinfo weft_hca >/dev/null 2>&1 && bad "modinfo weft_hca still finds $(modinfo -n weft_hca)"
	[ -e $conf ] && bad "$conf left behind"
	[ -e "$lm/$1" ] && bad "$lm/$1 left behind"
	grep -l weft $lm/modules.dep $lm/modules.alias $lm/modules.symbols 2>/dev/null && bad "module indexes still name Weft"
	snapshot | diff /tmp/install.before - || bad "$lm differs from before the install (above)"
	modprobe -n -v ib_core 2>&1 | grep -q 'insmod .*/ib_core\.ko' ||
		bad "after uninstall, ib_core does not resolve to the in-tree module: $(modprobe -n -v ib_core 2>&1)"
}

echo "install: make install"
make -s -C "$WEFT_REPO" install || bad "make install"
installed updates/weft
loaded_by_name fabric
make -s -C "$WEFT_REPO" uninstall || bad "make uninstall"
nothing_left updates/weft

echo "install: dkms install (built on the host by tests/install/dkms-build.sh)"
if [ -d "$dkms_top/tree/weft/$version/$kver" ]; then
	dkms install weft/"$version" -k "$kver" "${dkms_trees[@]}" >/tmp/dkms.out 2>&1 ||
		{ cat /tmp/dkms.out; bad "dkms install"; }
	installed updates/dkms
	loaded_by_name fabric
	dkms remove weft/"$version" -k "$kver" "${dkms_trees[@]}" >/tmp/dkms.out 2>&1 ||
		{ cat /tmp/dkms.out; bad "dkms remove"; }
	nothing_left updates/dkms
else
	bad "no DKMS build for $kver in $dkms_top (tests/install/dkms-build.sh runs before the test host)"
fi
weft_check_taint || fail=1
exit $fail
