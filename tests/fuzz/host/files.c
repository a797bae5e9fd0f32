// SPDX-License-Identifier: GPL-2.0
/* File output for the seed generator (seeds.cpp), which includes no host header. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int weft_fuzz_write(const char *dir, const char *name, const void *data, size_t len);
int weft_fuzz_write(const char *dir, const char *name, const void *data, size_t len)
{
	char path[4096];
	FILE *f;

	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(data, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
	return 0;
}
