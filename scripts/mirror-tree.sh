#!/bin/sh
# mirror-tree.sh SRC DEST DIR...: mirror the source files under each DIR of
# SRC into DEST as symlinks.  Kbuild writes objects next to the sources of
# an external module, so each kernel gets its own mirror (build/<release>/)
# and builds for several kernels never overwrite each other.
set -eu
src=$1
dest=$2
shift 2
mkdir -p "$dest"
cd "$src"
find "$@" -type f ! -name '*.o' ! -name '*.ko' ! -name '.*' | while IFS= read -r f; do
	[ -L "$dest/$f" ] && continue
	mkdir -p "$dest/$(dirname "$f")"
	ln -sf "$src/$f" "$dest/$f"
done
# Sources deleted upstream leave dangling links behind: drop them.
find "$dest" -xtype l -delete
