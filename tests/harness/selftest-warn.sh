#!/bin/bash
# Test-host job for the harness self-test: load a module that WARNs at init.
# The job itself succeeds; vm-run.sh must still fail the run because of the
# splat on the console (tests/run-all.sh checks that it does).
weft_insmod weft_selftest_warn || exit 1
rmmod weft_selftest_warn || exit 1
exit 0
