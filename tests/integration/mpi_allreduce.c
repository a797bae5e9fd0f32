// SPDX-License-Identifier: GPL-2.0
/*
 * An MPI program for tests/integration/mpi.sh: each rank names the host
 * and the UCX device it runs on, then allreduces a vector of 1 Mi ints
 * (4 MiB) several times and checks every element of the result, so that
 * a transport that loses, reorders or corrupts data fails the run.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	const int n = 1 << 20, rounds = 4;
	int rank, size, bad = 0, sum = 0;
	const char *dev = getenv("UCX_NET_DEVICES");

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	printf("rank %d of %d on %s: sum of ranks %d\n", rank, size, dev ? dev : "?", sum);

	int *in = malloc(sizeof(int) * n), *out = malloc(sizeof(int) * n);
	if (!in || !out)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < n; i++)
			in[i] = i * (rank + 1) + r;
		MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		/* sum over ranks k of i*(k+1)+r */
		for (int i = 0; i < n; i++) {
			long want = (long)i * size * (size + 1) / 2 + (long)r * size;
			if (out[i] != (int)want)
				bad++;
		}
	}
	printf("rank %d: %d rounds of %d ints, %d wrong\n", rank, rounds, n, bad);
	free(in);
	free(out);
	MPI_Finalize();
	return bad || sum != size * (size - 1) / 2;
}
