// SPDX-License-Identifier: GPL-2.0
/* The C entry points of ucma_kapi.h into File (file.h). */
#include <weft/log.h>

#include "file.h"

using weft::Gfp;
using weft::Order;
using weft::ucma::File;

int weft_ucma_file_open(struct weft_ucma_waiter *w, void **file)
{
	auto *f = new (Gfp::Sleep) File(w);
	if (!f)
		return -weft::err::ENOMEM;
	*file = f;
	return 0;
}

void weft_ucma_file_release(void *file)
{
	auto *f = static_cast<File *>(file);
	f->close();
	delete f;
}

long weft_ucma_file_write(void *file, const void *buf, size_t len, bool nonblock)
{
	auto r = static_cast<File *>(file)->write(buf, len, nonblock);
	return r ? static_cast<long>(r.value()) : static_cast<long>(r.to_errno());
}

unsigned int weft_ucma_file_poll(void *file)
{
	return static_cast<File *>(file)->poll();
}

int weft_ucma_stats_show(char *buf, size_t len)
{
	auto &s = weft::ucma::stats();
	return static_cast<int>(weft::format(buf, len,
			    "files %u\nids %u\nevents %u\nmulticasts %u\n"
			    "rejected_backlog %llu\ndropped_nomem %llu\n",
			    s.files.load(Order::Relaxed), s.ctxs.load(Order::Relaxed),
			    s.events.load(Order::Relaxed), s.multicasts.load(Order::Relaxed),
			    static_cast<unsigned long long>(s.rejected_backlog.load(Order::Relaxed)),
			    static_cast<unsigned long long>(s.dropped_nomem.load(Order::Relaxed))));
}
