#!/bin/bash
# install.sh install|uninstall KVER BUILD: make install / make uninstall.
# install.sh conf-install|conf-remove: DKMS's hooks (dkms.conf).
#
# install: Weft's production modules built in BUILD (build/<KVER>) into
# $DESTDIR/lib/modules/KVER/$INSTALL_MOD_DIR/ (default updates/weft: a
# directory of Weft's alone, searched before the kernel's own), the
# modprobe.d file dist/weft.conf into $DESTDIR/etc/modprobe.d/, then depmod
# so that "modprobe weft_ipoib" loads what it needs.
# uninstall: that directory and depmod's entries for it go; weft.conf goes
# with the last Weft installed (by make install or by DKMS) on any kernel.
# DESTDIR (default /) installs into another root, as packagers and the
# tests do; depmod then works on that root (depmod -b).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cmd=${1:-} kver=${2:-} build=${3:-}
root=${DESTDIR:-}
dir=${INSTALL_MOD_DIR:-updates/weft}
case "$dir" in /* | *..* | "" | updates | extra) echo "install.sh: INSTALL_MOD_DIR=$dir: not a directory of Weft's own" >&2; exit 2 ;; esac
moddir=$root/lib/modules/$kver
conf=$root/etc/modprobe.d/weft.conf

depmod_root() {
	# depmod needs the kernel's own module list; a scratch root without one
	# only gets an index of what is installed there.
	if [ -n "$root" ]; then depmod -b "$root" "$kver"; else depmod "$kver"; fi
}

# Weft installed for some kernel, by make install or by DKMS.
others() {
	ls "$root"/lib/modules/*/"$dir"/weft_*.ko* "$root"/lib/modules/*/updates/dkms/weft_*.ko* >/dev/null 2>&1
}

case "$cmd" in
install)
	[ -f "$build/modules.order" ] || { echo "install.sh: nothing built in $build: run make first" >&2; exit 1; }
	mods=$("$repo/scripts/weft-modules.sh" "$build")
	rm -rf "${moddir:?}/$dir"
	for m in $mods; do
		install -D -m 644 "$build/$m" "$moddir/$dir/$(basename "$m")"
	done
	install -D -m 644 "$repo/dist/weft.conf" "$conf"
	depmod_root
	echo "Installed for $kver: $(ls "$moddir/$dir" | tr '\n' ' ')into $moddir/$dir, and $conf"
	;;
uninstall)
	rm -rf "${moddir:?}/$dir"
	# updates/ when the install made it (Debian's kernels ship none).
	[ "$(dirname "$dir")" = . ] || rmdir --ignore-fail-on-non-empty "$moddir/$(dirname "$dir")" 2>/dev/null || true
	[ -d "$moddir" ] && depmod_root
	# Another kernel's Weft (make install or DKMS) still needs the file.
	if others; then
		echo "Removed Weft for $kver; $conf stays for the Weft installed for other kernels"
	else
		rm -f "$conf"
		echo "Removed Weft for $kver and $conf"
	fi
	;;
# DKMS's POST_INSTALL and POST_REMOVE (dkms.conf): the modprobe.d file.
conf-install) install -D -m 644 "$repo/dist/weft.conf" "$conf" ;;
conf-remove) others || rm -f "$conf" ;;
*) echo "usage: install.sh install|uninstall KVER [BUILD] | conf-install|conf-remove" >&2; exit 2 ;;
esac
