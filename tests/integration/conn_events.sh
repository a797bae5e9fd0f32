#!/bin/bash
# Integration: the QP event glue of the connected ULPs (verbs::ConnEvents)
# on this kernel: weft_selftest_conn_events holds open the window between
# a CommEst handler's read of the CM Id and its use while the teardown
# detaches and destroys the Id, and fails to load if the Id was destroyed
# inside it (verbs/test_conn_events.h).  Only weft_rt and weft_verbs are
# needed: no device takes part.
set -u
fail=0
bad() { echo "conn_events: FAIL: $*"; fail=1; }
weft_insmod weft_rt && weft_insmod weft_verbs || bad "weft_rt, weft_verbs"
weft_insmod weft_selftest_conn_events ||
	bad "the Id was destroyed while a handler held it: $(dmesg | grep WEFT-CONN-EVENTS | tail -1)"
dmesg | grep WEFT-CONN-EVENTS | tail -1
rmmod weft_selftest_conn_events 2>/dev/null
rmmod weft_verbs weft_rt || bad "rmmod weft_verbs weft_rt"
exit $fail
