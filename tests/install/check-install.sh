#!/bin/bash
# make check-install: Weft installed as a user installs it, on a stock-kernel
# test host (tests/install/install.sh): make install, then dkms install of
# the DKMS package that Debian's dkms builds here first.  Apart from make
# check because its depmods over 9p cost about a quarter of an hour.
set -u
cd "$(dirname "$0")/../.." || exit 1
mkdir -p build/logs
echo "check-install: building the DKMS package (tests/install/dkms-build.sh)"
tests/install/dkms-build.sh >build/logs/dkms-build.log 2>&1 ||
	{ tail -20 build/logs/dkms-build.log; echo "check-install: FAIL (DKMS build)"; exit 1; }
if tests/harness/vm-run.sh --kernel stock --script tests/install/install.sh \
	--log build/logs/install.log --timeout 3600 --mem 3072; then
	echo "check-install: PASS (log: build/logs/install.log)"
else
	echo "check-install: FAIL (log: build/logs/install.log)"
	exit 1
fi
