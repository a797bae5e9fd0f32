#!/bin/sh
# weft-modules.sh BUILD: Weft's production modules built in BUILD (a
# build/<kernel release> directory), one path relative to it a line, in
# load order (weft_rt first, as kbuild ordered them); test, self-test and
# benchmark modules left out.  What make install installs and what test
# hosts load.
set -eu
dir=$(cd "$1" && pwd)
sed "s|^$dir/||; s/\.o\$/.ko/" "$1/modules.order" |
	grep -vE '(^|/)(tests|selftest)/|_test\.ko$|weft_kunit\.ko$'
