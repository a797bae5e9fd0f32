/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every Weft fuzz target shares (tests/fuzz/README.md): the libFuzzer
 * entry point, and checks of a parser's promises that abort (a finding)
 * when broken.  Targets are built with Weft's freestanding flags against
 * the host runtime (host/runtime.c), so they include no host header.
 */
#ifndef WEFT_FUZZ_H
#define WEFT_FUZZ_H

#include <weft/span.h>

#define WEFT_FUZZ_TARGET(...) extern "C" int LLVMFuzzerTestOneInput(__VA_ARGS__)
WEFT_FUZZ_TARGET(const uint8_t *data, size_t size);

/* host/runtime.c: let @ms of virtual time pass, running the work that falls due. */
extern "C" void weft_host_advance(unsigned int ms);

namespace weft::fuzz {

/* A broken promise is a finding: report it like a crash. */
inline void check(bool ok, const char *what)
{
	if (!ok)
		weft_warn("fuzz", 0, what);
}

/* @h, when set, lies wholly inside @buf. */
template <typename H> void inside(ConstBytes buf, const H *h)
{
	if (!h)
		return;
	const uint8_t *p = reinterpret_cast<const uint8_t *>(h);
	check(p >= buf.data() && p + sizeof(H) <= buf.data() + buf.size(), "header inside the buffer");
}

/* Splits an input into records: a 2-byte length, then that many bytes (a sequence of MADs, ...). */
class Records {
public:
	Records(const uint8_t *d, size_t n) : d_(d), n_(n) {}
	/* The next record, up to @max bytes; false at the end. */
	bool next(ConstBytes &out, size_t max)
	{
		if (n_ < 2)
			return false;
		size_t len = (size_t(d_[0]) << 8 | d_[1]) % (max + 1);
		d_ += 2;
		n_ -= 2;
		if (len > n_)
			len = n_;
		out = ConstBytes(d_, len);
		d_ += len;
		n_ -= len;
		return true;
	}
	/* One byte of the input (0 past its end): for choices. */
	uint8_t byte()
	{
		if (!n_)
			return 0;
		--n_;
		return *d_++;
	}

private:
	const uint8_t *d_;
	size_t n_;
};

} // namespace weft::fuzz

#endif
