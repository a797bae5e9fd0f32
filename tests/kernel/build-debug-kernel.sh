#!/bin/bash
# Build (or reuse) a Weft test kernel: Debian's linux-source-6.1 with
# x86_64_defconfig + kvm_guest.config + tests/kernel/<flavour>.config.
#
#   build-debug-kernel.sh          the debug kernel (KASAN, lockdep, kmemleak)
#   build-debug-kernel.sh race     the race kernel (KCSAN, lockdep): KCSAN and
#                                  KASAN exclude each other, so it is a second
#                                  cached kernel (make check-race)
#
# The result lives outside the repository, in $WEFT_CACHE (default
# /var/cache/weft), keyed by the source package version and the config
# fragment, and is rebuilt only when either changes.  Prints the cache
# directory on stdout; it holds:
#   linux/           the built tree (bzImage, and the KDIR for out-of-tree modules)
#   modules/         INSTALL_MOD_PATH of the kernel's own modules
#   ready            stamp written last
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
flavour=${1:-debug}
case "$flavour" in debug|race) ;; *) echo "build-debug-kernel: flavour debug|race" >&2; exit 2 ;; esac
frag=$here/$flavour.config
cache_root=${WEFT_CACHE:-/var/cache/weft}
tarball=/usr/src/linux-source-6.1.tar.xz

log() { echo "build-debug-kernel: $*" >&2; }

[ -r "$tarball" ] || { log "missing $tarball (apt-get install linux-source-6.1)"; exit 1; }
srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
# The key covers what decides the kernel's contents: source version, fragment,
# and the recipe below (this script).
key=$( { echo "$srcver"; cat "$frag"; sed -n '/^# recipe:/,$p' "$0"; } | sha256sum | cut -c1-16)
out=$cache_root/$flavour-kernel/$key
mkdir -p "$cache_root/$flavour-kernel"

exec 9>"$cache_root/$flavour-kernel/.lock"
flock 9
if [ -f "$out/ready" ]; then
	log "cached: $out"
	echo "$out"
	exit 0
fi

# A new kernel is due: older ones (other keys) are 2-3 GB each and unused.
find "$cache_root/$flavour-kernel" -mindepth 1 -maxdepth 1 -type d ! -name "$key" -exec rm -rf {} +

# recipe: everything below decides the build output
rm -rf "$out.tmp"
mkdir -p "$out.tmp"
log "unpacking linux-source $srcver into $out.tmp"
tar -C "$out.tmp" -xf "$tarball"
mv "$out.tmp/linux-source-6.1" "$out.tmp/linux"
cd "$out.tmp/linux"
make -s x86_64_defconfig >&2
scripts/kconfig/merge_config.sh -m .config kernel/configs/kvm_guest.config "$frag" >&2
make -s olddefconfig >&2

# Every option the fragment asks for must have stuck: a silently dropped
# option (missing dependency) would give a kernel that checks less than we think.
bad=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*)
		opt=${line%%=*}
		want=${line#*=}
		got=$(grep -E "^$opt=" .config | cut -d= -f2- || true)
		[ "$got" = "$want" ] || { log "option $opt: want $want, got '${got:-unset}'"; bad=1; }
		;;
	"# CONFIG_"*" is not set")
		opt=${line#\# }
		opt=${opt%% *}
		! grep -qE "^$opt=[ym]" .config || { log "option $opt: want unset"; bad=1; }
		;;
	esac
done <"$frag"
[ "$bad" = 0 ] || exit 1

jobs=$(( $(nproc) + 1 ))
log "building with -j$jobs (about 20 minutes on 2 cores)"
start=$(date +%s)
make -j"$jobs" bzImage modules >"$out.tmp/build.log" 2>&1 || { tail -50 "$out.tmp/build.log" >&2; exit 1; }
make -s INSTALL_MOD_PATH="$out.tmp/modules" INSTALL_MOD_STRIP=1 modules_install >&2
log "built in $(( $(date +%s) - start )) s"
mv "$out.tmp" "$out"
touch "$out/ready"
echo "$out"
