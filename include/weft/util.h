/* SPDX-License-Identifier: GPL-2.0 */
/* The handful of type utilities Weft needs in place of <utility>. */
#ifndef WEFT_UTIL_H
#define WEFT_UTIL_H

namespace weft {

template <typename T> struct remove_reference { using type = T; };
template <typename T> struct remove_reference<T &> { using type = T; };
template <typename T> struct remove_reference<T &&> { using type = T; };
template <typename T> using remove_reference_t = typename remove_reference<T>::type;

template <typename T> constexpr remove_reference_t<T> &&move(T &&v) noexcept
{
	return static_cast<remove_reference_t<T> &&>(v);
}

template <typename T> constexpr T &&forward(remove_reference_t<T> &v) noexcept
{
	return static_cast<T &&>(v);
}

template <typename T> constexpr T &&forward(remove_reference_t<T> &&v) noexcept
{
	return static_cast<T &&>(v);
}

template <typename T, typename U = T> constexpr T exchange(T &obj, U &&v)
{
	T old = move(obj);
	obj = forward<U>(v);
	return old;
}

template <typename T> constexpr void swap(T &a, T &b) noexcept
{
	T tmp = move(a);
	a = move(b);
	b = move(tmp);
}

template <typename T> constexpr const T &min(const T &a, const T &b) { return b < a ? b : a; }
template <typename T> constexpr const T &max(const T &a, const T &b) { return a < b ? b : a; }

/* The smallest k with 2^k >= n (0 for n <= 1). */
constexpr uint32_t log2_ceil(uint64_t n)
{
	uint32_t k = 0;
	while (k < 63 && (uint64_t(1) << k) < n)
		k++;
	return k;
}

template <typename A, typename B> struct is_same { static constexpr bool value = false; };
template <typename A> struct is_same<A, A> { static constexpr bool value = true; };

/* The object that holds @member, from a pointer to that member. */
template <typename T, typename M> T *container_of(M *member, M T::*field)
{
	const size_t off = reinterpret_cast<size_t>(&(static_cast<T *>(nullptr)->*field));
	return reinterpret_cast<T *>(reinterpret_cast<char *>(member) - off);
}

/* Opaque, correctly aligned storage for a kernel object that C++ embeds. */
template <size_t Size, size_t Align> struct alignas(Align) Opaque {
	unsigned char bytes[Size > 0 ? Size : 1];
	void *get() { return bytes; }
};

} // namespace weft

#endif
