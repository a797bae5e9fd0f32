/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Typed wire fields.  IBA headers are big-endian (IBA 1.2 "byte ordering");
 * a be16/be32/be64 member stores the bytes exactly as on the wire, with
 * alignment 1 so that header structs can be laid over any packet buffer, and
 * converts only through get()/set().  Sub-word fields (a 24-bit PSN, a 4-bit
 * LVer) are read and written with bits<Shift, Width>() on the containing
 * word, never by shifting bytes at the call site.
 */
#ifndef WEFT_WIRE_H
#define WEFT_WIRE_H

#include <weft/base.h>

namespace weft {

namespace detail {
constexpr uint8_t bswap(uint8_t v) { return v; }
constexpr uint16_t bswap(uint16_t v) { return __builtin_bswap16(v); }
constexpr uint32_t bswap(uint32_t v) { return __builtin_bswap32(v); }
constexpr uint64_t bswap(uint64_t v) { return __builtin_bswap64(v); }
} // namespace detail

template <typename T> class Be {
public:
	using value_type = T;
	static constexpr unsigned bits_total = sizeof(T) * 8;

	constexpr Be() = default;
	static constexpr Be from(T v)
	{
		Be b;
		b.set(v);
		return b;
	}

	constexpr T get() const
	{
		T raw = 0;
		for (size_t i = 0; i < sizeof(T); i++)
			raw = static_cast<T>((raw << 8) | b_[i]);
		return raw;
	}
	constexpr void set(T v)
	{
		for (size_t i = sizeof(T); i-- > 0;) {
			b_[i] = static_cast<uint8_t>(v & 0xff);
			v = static_cast<T>(v >> 8);
		}
	}

	/* The Width-bit field whose least significant bit is bit Shift. */
	template <unsigned Shift, unsigned Width> constexpr T bits() const
	{
		static_assert(Width > 0 && Shift + Width <= bits_total, "field outside the word");
		return static_cast<T>((get() >> Shift) & mask<Width>());
	}
	/* Returns false (and leaves the word alone) if @v does not fit. */
	template <unsigned Shift, unsigned Width> constexpr bool set_bits(T v)
	{
		static_assert(Width > 0 && Shift + Width <= bits_total, "field outside the word");
		if (v & ~mask<Width>())
			return false;
		T w = get() & static_cast<T>(~(mask<Width>() << Shift));
		set(static_cast<T>(w | (v << Shift)));
		return true;
	}

	constexpr bool operator==(const Be &o) const { return get() == o.get(); }

private:
	template <unsigned Width> static constexpr T mask()
	{
		return Width >= bits_total ? static_cast<T>(~T(0)) : static_cast<T>((T(1) << Width) - 1);
	}
	uint8_t b_[sizeof(T)] = {};
};

using be8 = Be<uint8_t>;
using be16 = Be<uint16_t>;
using be32 = Be<uint32_t>;
using be64 = Be<uint64_t>;

static_assert(sizeof(be16) == 2 && alignof(be16) == 1);
static_assert(sizeof(be32) == 4 && alignof(be32) == 1);
static_assert(sizeof(be64) == 8 && alignof(be64) == 1);

/*
 * Little-endian wire fields: the few IBA fields sent least significant byte
 * first (the ICRC and VCRC, like Ethernet's FCS).
 */
template <typename T> class Le {
public:
	constexpr Le() = default;
	constexpr T get() const
	{
		T v = 0;
		for (size_t i = sizeof(T); i-- > 0;)
			v = static_cast<T>((v << 8) | b_[i]);
		return v;
	}
	constexpr void set(T v)
	{
		for (size_t i = 0; i < sizeof(T); i++) {
			b_[i] = static_cast<uint8_t>(v & 0xff);
			v = static_cast<T>(v >> 8);
		}
	}

private:
	uint8_t b_[sizeof(T)] = {};
};

using le16 = Le<uint16_t>;
using le32 = Le<uint32_t>;
static_assert(sizeof(le32) == 4 && alignof(le32) == 1);

/*
 * A named sub-field of a wire word, so that a header declares its layout once:
 *   using Psn = BitField<be32, 0, 24>;   Psn::get(bth.dw2); Psn::set(bth.dw2, psn);
 */
template <typename Word, unsigned Shift, unsigned Width> struct BitField {
	using T = typename Word::value_type;
	static constexpr T max = static_cast<T>(Width >= Word::bits_total ? ~T(0) : (T(1) << Width) - 1);
	static constexpr T get(const Word &w) { return w.template bits<Shift, Width>(); }
	static constexpr bool set(Word &w, T v) { return w.template set_bits<Shift, Width>(v); }
};

} // namespace weft

#endif
