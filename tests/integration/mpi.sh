#!/bin/bash
# Integration: Open MPI over UCX on Weft (issue 23), Debian's openmpi-bin
# and libucx0 unchanged.  Two ranks on one host, rank N bound to weftN port
# 1 (UCX_NET_DEVICES), UCX limited to its verbs transports (rc_verbs,
# ud_verbs; no shared memory, no TCP), so every byte between the ranks
# crosses the soft fabric: a small allreduce, then four 4 MiB allreduces
# checked element by element (mpi_allreduce.c).  Both ports' PortXmitData
# must grow by at least the vector's size, which they would not if UCX
# had found another way.
set -u
fail=0
bad() { echo "mpi: FAIL: $*"; fail=1; }
here=$WEFT_REPO/tests/integration
log=/tmp/mpi
mkdir -p $log

weft_load weft_hca:autoconf=0 || exit 1
weft_sm_start weft0
weft_wait_active weft0 weft1 || bad "ports not ACTIVE under OpenSM"

# UCX lists both devices' verbs transports.
ucx_info -d >$log/ucx_info 2>&1
for d in weft0 weft1; do
	for tl in rc_verbs ud_verbs; do
		awk -v d="$d:1" -v tl="$tl" '/Transport:/ { t = $3 } /Device:/ && $3 == d && t == tl { f = 1 } END { exit !f }' \
			$log/ucx_info || bad "ucx_info -d does not list $tl on $d:1"
	done
done

mpicc -O2 -o $log/allreduce "$here/mpi_allreduce.c" || bad "mpicc failed"
cat >$log/rank.sh <<'EOS'
#!/bin/sh
UCX_NET_DEVICES=weft${OMPI_COMM_WORLD_RANK}:1 exec "$@"
EOS
chmod +x $log/rank.sh

xmit() { cat /sys/class/infiniband/$1/ports/1/counters/port_xmit_data; }
x0=$(xmit weft0) x1=$(xmit weft1)
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
	timeout -s KILL 300 mpirun -np 2 --oversubscribe --mca pml ucx --mca btl self \
	-x UCX_TLS=rc_v,ud_v,self "$log/rank.sh" "$log/allreduce" >$log/run 2>&1
rc=$?
cat $log/run
[ $rc = 0 ] || bad "mpirun exit status $rc"
grep -q "^rank 0 of 2 on weft0:1: sum of ranks 1" $log/run || bad "rank 0 not on weft0"
grep -q "^rank 1 of 2 on weft1:1: sum of ranks 1" $log/run || bad "rank 1 not on weft1"
[ "$(grep -c '^rank [01]: 4 rounds of 1048576 ints, 0 wrong' $log/run)" = 2 ] ||
	bad "the 4 MiB allreduces were not right on both ranks"
# PortXmitData counts 4-octet words: each port sent at least one vector.
d0=$(( $(xmit weft0) - x0 )) d1=$(( $(xmit weft1) - x1 ))
echo "mpi: PortXmitData grew by $d0 (weft0) and $d1 (weft1) words"
[ $d0 -ge $((1 << 20)) ] && [ $d1 -ge $((1 << 20)) ] ||
	bad "the ranks' data did not cross the fabric ($d0, $d1 words)"

weft_sm_stop
weft_unload || bad "unload failed"
exit $fail
