/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reading an SA response (IBA Vol 1 15.2.1.1, 15.4): its status and its
 * records, from one MAD or a reassembled RMPP message.  No kernel object
 * in it, so the host fuzzes it as it is (tests/fuzz/sa.cpp).
 */
#ifndef WEFT_MAD_SA_RECORDS_H
#define WEFT_MAD_SA_RECORDS_H

#include <weft/iba/sa.h>
#include <weft/result.h>

namespace weft::mad::sa {

/* A response's MAD status as an errno: 0, ENOENT (the SA has no such record), or EREMOTEIO. */
int status_errno(uint16_t status);

/* IBA 15.2.1.1: the records after the SA header of a response. */
class Records {
public:
	/* @msg: @len bytes, the common, RMPP and SA headers first; EBADMSG if shorter than those. */
	static Result<Records> of(const uint8_t *msg, size_t len);

	/* The one record of a Get/Set/Delete response, @size bytes; EBADMSG if it carries less. */
	Result<void> first(void *out, size_t size) const;
	/* GetTable: how many whole records, each AttributeOffset 8-byte words (none at offset 0). */
	size_t count() const;
	/* Record @i (below count()) into @out: what fits of its stride, the rest zeroed. */
	void copy(size_t i, void *out, size_t size) const;

private:
	Records(const uint8_t *data, size_t len, size_t stride) : data_(data), len_(len), stride_(stride) {}
	const uint8_t *data_; /* the first record */
	size_t len_;	      /* bytes from there to the message's end */
	size_t stride_;
};

} // namespace weft::mad::sa

#endif
