#!/bin/bash
# vm-run.sh: run a test script on a QEMU (TCG) test host.
#
#   vm-run.sh --kernel stock|debug --script FILE [--log FILE] [--timeout SEC]
#             [--mem MB] [--name NAME] [--kernel-dir DIR] [--share DIR]
#             [--interactive] [-- ARGS...]
#
# The guest boots the chosen kernel (stock: Debian's installed 6.1 kernel;
# debug: the cached KUnit/KASAN/lockdep kernel, tests/kernel/, or the one in
# --kernel-dir, a directory laid out as that cache's entries), mounts the
# host's root read-only over 9p under a tmpfs overlay (every host tool is
# there), blocks the in-tree RDMA modules, and runs FILE with bash, with the
# Weft modules built for that kernel in $WEFT_MODDIR and tests/harness/guest-lib.sh
# sourced.  --share DIR shares DIR writable (9p tag weftshare; the script
# mounts it).  --interactive puts the console on this terminal (stdin and
# stdout; Ctrl-a x ends QEMU) instead of only the log, for make shell.
# The exit status is the script's; it is non-zero as well when the
# guest never reported one (crash, hang, timeout) or when the console shows a
# kernel splat (tests/harness/splat.sh).  The full console log is kept.
# WEFT_VM_APPEND adds to the guest kernel's command line (profile=2 for
# readprofile, say); WEFT_VM_MONITOR=PATH puts QEMU's monitor on that unix
# socket (info registers, say, from outside the guest);
# WEFT_VM_JOB_DIR is a mktemp template for the job directory (/weft-job
# in the guest, writable), to find what the guest leaves there.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${WEFT_CACHE:-/var/cache/weft}

kernel=stock script= log= timeout=900 mem=2048 name= dk= share= interactive=
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=$2; shift 2 ;;
	--script) script=$2; shift 2 ;;
	--log) log=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--name) name=$2; shift 2 ;;
	--kernel-dir) dk=$2; shift 2 ;;
	--share) share=$(cd "$2" && pwd); shift 2 ;;
	--interactive) interactive=1; shift ;;
	--) shift; break ;;
	*) echo "vm-run: unknown argument $1" >&2; exit 2 ;;
	esac
done
[ -n "$script" ] && [ -f "$script" ] || { echo "vm-run: --script FILE required" >&2; exit 2; }
script=$(cd "$(dirname "$script")" && pwd)/$(basename "$script")
name=${name:-$(basename "$script" .sh)}

case "$kernel" in
stock)
	headers=$(ls -d /usr/src/linux-headers-*-amd64 | sort -V | tail -1)
	kver=$(sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' "$headers/include/generated/utsrelease.h")
	vmlinuz=/boot/vmlinuz-$kver
	kmods=/lib/modules/$kver
	;;
debug)
	[ -n "$dk" ] || dk=$("$repo/tests/kernel/build-debug-kernel.sh")
	kver=$(sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' "$dk/linux/include/generated/utsrelease.h")
	vmlinuz=$dk/linux/arch/x86/boot/bzImage
	kmods=$dk/modules/lib/modules/$kver
	;;
*) echo "vm-run: --kernel stock|debug" >&2; exit 2 ;;
esac
[ -r "$vmlinuz" ] || { echo "vm-run: no kernel image $vmlinuz" >&2; exit 1; }
moddir=$repo/build/$kver
[ -d "$moddir" ] || { echo "vm-run: Weft not built for $kver (make KDIR=...)" >&2; exit 1; }

mkdir -p "$repo/build/logs"
log=${log:-$repo/build/logs/$name-$kernel.log}
initrd=$("$here/mkinitramfs.sh" "$kver" "$kmods")

job=$(mktemp -d "${WEFT_VM_JOB_DIR:-/tmp/weft-job.XXXXXX}")
trap 'rm -rf "$job"' EXIT
cp "$script" "$job/job.sh"
cp "$here/guest-init.sh" "$here/guest-lib.sh" "$job/"
{
	printf 'WEFT_REPO=%q\n' "$repo"
	printf 'WEFT_MODDIR=%q\n' "$moddir"
	printf 'WEFT_KERNEL=%q\n' "$kernel"
	printf 'WEFT_KMODS=%q\n' "$kmods"
	printf 'WEFT_JOB_ARGS=('
	for a in "$@"; do printf '%q ' "$a"; done
	printf ')\n'
} >"$job/env"

monitor=none
[ -z "${WEFT_VM_MONITOR:-}" ] || monitor="unix:$WEFT_VM_MONITOR,server,nowait"
extra=()
[ -z "$share" ] || extra+=(-virtfs "local,path=$share,mount_tag=weftshare,security_model=none,multidevs=remap")
console=(-serial "file:$log")
if [ -n "$interactive" ]; then
	# The terminal and the log both see the console; Ctrl-C goes to the guest.
	console=(-chardev "stdio,id=con,mux=on,signal=off,logfile=$log" -serial chardev:con -mon chardev=con)
	monitor=none
fi
echo "vm-run: $name on $kernel kernel $kver (log: $log)" >&2
start=$(date +%s)
set +e
if [ -n "$interactive" ]; then exec 3<&0; else exec 3</dev/null; fi
timeout -k 10 ${interactive:+--foreground} "$timeout" qemu-system-x86_64 \
	-accel tcg -m "$mem" -smp 2 -nodefaults -no-reboot \
	-display none -monitor "$monitor" "${console[@]}" \
	-kernel "$vmlinuz" -initrd "$initrd" \
	-append "console=ttyS0 loglevel=${WEFT_VM_LOGLEVEL:-7} panic=-1 rdinit=/init ${WEFT_VM_APPEND:-}" \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
	-virtfs "local,path=$job,mount_tag=weftjob,security_model=none,multidevs=remap" \
	"${extra[@]}" <&3
qrc=$?
exec 3<&-
set -e
secs=$(( $(date +%s) - start ))

rc=1
if [ -f "$job/rc" ]; then
	rc=$(cat "$job/rc")
elif [ "$qrc" = 124 ]; then
	echo "vm-run: $name: timed out after ${timeout}s" >&2
else
	echo "vm-run: $name: guest ended without a result (qemu exit $qrc)" >&2
fi
if ! "$here/splat.sh" "$log"; then
	echo "vm-run: $name: kernel splat on the console (above)" >&2
	[ "$rc" = 0 ] && rc=1
fi
echo "vm-run: $name on $kernel: exit $rc after ${secs}s" >&2
exit "$rc"
