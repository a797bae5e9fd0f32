#!/bin/bash
# Guest side of `make shell` (scripts/run-shell.sh): the test host of
# `make run` set up (scripts/demo-lib.sh), the user's directory shared from
# the host mounted at the same path, then a login shell on the console.
# When it exits, Weft is unloaded and the host powers off.
# Job arguments: the terminal's rows and columns (optional).
set -u
. "$WEFT_REPO/scripts/demo-lib.sh"
work=$WEFT_REPO/shell-work
mkdir -p "$work" && mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 weftshare "$work" ||
	{ echo "weft-shell: cannot mount the shared directory at $work"; exit 1; }
echo "weft-shell: setting up: Weft, OpenSM, two hosts ..."
demo_setup || { echo "weft-shell: setup failed"; demo_teardown; exit 1; }
cat <<EOT

Weft test host ($(uname -r)), the setup of make run done:
  Weft loaded: $(grep -o '^weft_[a-z_]*' /proc/modules | sort | tr '\n' ' ')
  OpenSM on weft0 (pid $weft_sm_pid, log /tmp/opensm.log); weft0 and weft1 ACTIVE
  IPoIB: $A $demo_a here; $B $demo_b in namespace h1 (ip netns exec h1 ...)
  $work: shared with the host, writable (your programs, results)
  the host's root file system read-only underneath a scratch overlay
  the harness helpers of tests/harness/guest-lib.sh are defined (weft_sm_stop, ...)
  exit (or Ctrl-d) unloads Weft and powers the host off; Ctrl-a x kills it
EOT
cat >/tmp/weft-shell.rc <<EOT
. /etc/bash.bashrc 2>/dev/null
. /weft-job/guest-lib.sh
. $WEFT_REPO/scripts/demo-lib.sh
A=$A B=$B weft_sm_pid=$weft_sm_pid
PS1='weft-host:\w# '
cd $work
EOT
tty=/dev/ttyS0
[ $# -ge 2 ] && stty -F $tty rows "$1" cols "$2" 2>/dev/null
echo "weft-shell: ready"
# The console as the shell's controlling terminal (job control, Ctrl-C).
setsid -c -w bash --rcfile /tmp/weft-shell.rc -i <$tty >$tty 2>&1
echo "weft-shell: shell ended ($?); unloading Weft"
demo_teardown
weft_check_taint
