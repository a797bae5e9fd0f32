#!/bin/bash
# mkinitramfs.sh KVER KMODS: print the path of a (cached) initramfs for a
# test host: static busybox, the virtio/9p/overlay modules the kernel lacks
# built in (from KMODS, in load order), and an /init that mounts the host
# root over 9p under a tmpfs overlay and hands over to the job's guest-init.sh.
set -euo pipefail
kver=$1
kmods=$2
here=$(cd "$(dirname "$0")" && pwd)
cache=${WEFT_CACHE:-/var/cache/weft}/initramfs
mkdir -p "$cache"

# What the test host needs before it can reach its root over 9p; the kernel
# may have any of it built in.
wanted="virtio_pci 9pnet_virtio 9p overlay"
key=$( { echo "$kver $kmods"; cat "$0"; ls -l /bin/busybox; cat "$kmods/modules.dep" 2>/dev/null; } |
	sha256sum | cut -c1-16)
out=$cache/$kver-$key.cpio.gz
if [ -f "$out" ]; then
	echo "$out"
	exit 0
fi

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,dev,proc,sys,lower,upper,newroot,mods}
cp /bin/busybox "$root/bin/busybox"
: >"$root/modules.list"
# modprobe orders each module after its dependencies (KMODS is
# <base>/lib/modules/KVER, as modprobe -d wants it).
base=${kmods%/lib/modules/$kver}
for m in $wanted; do
	modprobe -d "${base:-/}" -S "$kver" --show-depends "$m" 2>/dev/null | awk '$1 == "insmod" { print $2 }'
done | awk '!seen[$0]++' | while read -r f; do
	m=$(basename "$f")
	m=${m%%.ko*}
	case "$f" in
	*.xz) xz -dc "$f" >"$root/mods/$m.ko" ;;
	*.zst) zstd -qdc "$f" >"$root/mods/$m.ko" ;;
	*) cp "$f" "$root/mods/$m.ko" ;;
	esac
	echo "$m" >>"$root/modules.list"
done
cat >"$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
fatal() {
	echo "initramfs: $*; powering off"
	echo o >/proc/sysrq-trigger
	sleep 30
}
for m in $(cat /modules.list); do
	insmod /mods/$m.ko || echo "initramfs: insmod $m failed"
done
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=262144 hostroot /lower || fatal "cannot mount the host root"
mount -t tmpfs -o size=70% tmpfs /upper
mkdir -p /upper/rw /upper/work
mount -t overlay -o lowerdir=/lower,upperdir=/upper/rw,workdir=/upper/work overlay /newroot || fatal "cannot mount the overlay"
mkdir -p /newroot/weft-job
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 weftjob /newroot/weft-job || fatal "cannot mount the job share"
umount /proc /sys
mount --move /dev /newroot/dev
exec switch_root /newroot /bin/bash /weft-job/guest-init.sh
INIT
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out.tmp"
mv "$out.tmp" "$out"
echo "$out"
