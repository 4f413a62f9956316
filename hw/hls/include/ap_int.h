// Arbitrary-precision integers for C simulation of the HLS kernels: `ap_uint<N>` and
// `ap_int<N>` (two's complement), N = 1..4096 bits (kernels use up to 1024).
//
// Written for this project from the documented behaviour of Vitis HLS's arbitrary precision
// types (UG1399, "Arbitrary Precision Data Types"): values are N-bit, assignment from any
// integer or ap value wraps (truncates) to N bits and extends by the SOURCE's signedness,
// bit select `x[i]`, part select `x.range(hi, lo)`, concatenation `(a, b)`, `to_uint64()`.
//
// Arithmetic rule of this header (stated because it differs in one respect from Xilinx's):
//   a OP b between ap values (or an ap value and a C integer, which counts as ap_[u]int of
//   its own width) has the result type ap_[u]int<W>, W = max(N, M), signed iff both operands
//   are signed. Both operands are first converted to that type (as C's usual arithmetic
//   conversions do) and the result wraps at W bits. Xilinx widens the result of + - * (N+1,
//   N+M bits); assigned back to an N-bit variable both give the same value, but an
//   expression such as `(a + b) >> 1` keeps the carry there and drops it here.
//   Comparisons compare the mathematical values (ap_int<8>(-1) < ap_uint<8>(1) is true).
//   Shift amounts are unsigned; shifting by >= N gives 0 (or all sign bits for >> of a
//   negative signed value). Unary minus and ~ keep the operand's type.
//   Conversion to C integers is explicit (to_uint64(), to_int64(), static_cast) so that
//   mixed expressions stay unambiguous.
#ifndef AF_AP_INT_H
#define AF_AP_INT_H

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <stdexcept>
#include <string>
#include <type_traits>

template <int N, bool S>
class ap_int_base;

namespace af_ap {

constexpr int words_of(int bits) { return (bits + 63) / 64; }

// Storage: the smallest C integer for N <= 64 (so `ap_uint<32>*` walks memory in 4-byte
// steps like the m_axi port it models), whole 64-bit words above.
template <int N, typename = void>
struct store {
    static constexpr int K = words_of(N);
    uint64_t w[K];
    uint64_t get(int i) const { return w[i]; }
    void set(int i, uint64_t v) { w[i] = v; }
};
template <typename U>
struct small_store {
    U v;
    uint64_t get(int) const { return v; }
    void set(int, uint64_t x) { v = static_cast<U>(x); }
};
template <int N>
struct store<N, std::enable_if_t<(N <= 64)>>
    : small_store<std::conditional_t<
          (N <= 8), uint8_t,
          std::conditional_t<(N <= 16), uint16_t, std::conditional_t<(N <= 32), uint32_t, uint64_t>>>> {};

template <int K>
using words = std::array<uint64_t, K>;

template <int K>
words<K> add(const words<K>& a, const words<K>& b) {
    words<K> r{};
    uint64_t carry = 0;
    for (int i = 0; i < K; i++) {
        uint64_t s = a[i] + b[i];
        uint64_t c1 = s < a[i];
        r[i] = s + carry;
        carry = c1 | (r[i] < s);
    }
    return r;
}

template <int K>
words<K> bit_not(const words<K>& a) {
    words<K> r{};
    for (int i = 0; i < K; i++) r[i] = ~a[i];
    return r;
}

template <int K>
words<K> neg(const words<K>& a) {
    words<K> one{};
    one[0] = 1;
    return add<K>(bit_not<K>(a), one);
}

template <int K>
words<K> sub(const words<K>& a, const words<K>& b) { return add<K>(a, neg<K>(b)); }

template <int K>
words<K> mul(const words<K>& a, const words<K>& b) {
    words<K> r{};
    for (int i = 0; i < K; i++) {
        unsigned __int128 carry = 0;
        for (int j = 0; i + j < K; j++) {
            unsigned __int128 t = (unsigned __int128)a[i] * b[j] + r[i + j] + carry;
            r[i + j] = static_cast<uint64_t>(t);
            carry = t >> 64;
        }
    }
    return r;
}

template <int K>
words<K> shl(const words<K>& a, unsigned s) {
    words<K> r{};
    if (s >= 64u * K) return r;
    unsigned wsh = s / 64, bsh = s % 64;
    for (int i = K - 1; i >= static_cast<int>(wsh); i--) {
        uint64_t v = a[i - wsh] << bsh;
        if (bsh && i - static_cast<int>(wsh) - 1 >= 0) v |= a[i - wsh - 1] >> (64 - bsh);
        r[i] = v;
    }
    return r;
}

// Shift right with `fill` (0 or ~0) entering from the top.
template <int K>
words<K> shr(const words<K>& a, unsigned s, uint64_t fill) {
    words<K> r;
    r.fill(fill);
    if (s >= 64u * K) return r;
    unsigned wsh = s / 64, bsh = s % 64;
    for (int i = 0; i + static_cast<int>(wsh) < K; i++) {
        uint64_t lo = a[i + wsh];
        uint64_t hi = (i + wsh + 1 < static_cast<unsigned>(K)) ? a[i + wsh + 1] : fill;
        r[i] = bsh ? (lo >> bsh) | (hi << (64 - bsh)) : lo;
    }
    return r;
}

template <int K>
int cmp_unsigned(const words<K>& a, const words<K>& b) {
    for (int i = K - 1; i >= 0; i--) {
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    }
    return 0;
}

template <int K>
bool is_zero(const words<K>& a) {
    for (int i = 0; i < K; i++) {
        if (a[i]) return false;
    }
    return true;
}

// Unsigned long division, one bit per step (simulation only: clarity over speed).
template <int K>
void divmod_unsigned(const words<K>& a, const words<K>& b, words<K>& q, words<K>& r) {
    if (is_zero<K>(b)) throw std::domain_error("ap_int: division by zero");
    q = words<K>{};
    r = words<K>{};
    for (int bit = 64 * K - 1; bit >= 0; bit--) {
        r = shl<K>(r, 1);
        r[0] |= (a[bit / 64] >> (bit % 64)) & 1;
        if (cmp_unsigned<K>(r, b) >= 0) {
            r = sub<K>(r, b);
            q[bit / 64] |= uint64_t(1) << (bit % 64);
        }
    }
}

// a = a * m + add for a small multiplier (parsing digits).
template <int K>
void mul_add_small(words<K>& a, uint64_t m, uint64_t add) {
    unsigned __int128 carry = add;
    for (int i = 0; i < K; i++) {
        const unsigned __int128 t = (unsigned __int128)a[i] * m + carry;
        a[i] = static_cast<uint64_t>(t);
        carry = t >> 64;
    }
}

// a /= d for a small divisor; returns the remainder (printing digits).
template <int K>
uint64_t div_small(words<K>& a, uint64_t d) {
    unsigned __int128 rem = 0;
    for (int i = K - 1; i >= 0; i--) {
        const unsigned __int128 cur = (rem << 64) | a[i];
        a[i] = static_cast<uint64_t>(cur / d);
        rem = cur % d;
    }
    return static_cast<uint64_t>(rem);
}

constexpr int max_int(int a, int b) { return a > b ? a : b; }

// A C integer seen as an ap value of its own width and signedness.
template <typename I>
using int_as_ap = ap_int_base<std::is_same<I, bool>::value ? 1 : int(sizeof(I) * 8),
                              std::is_signed<I>::value>;

template <typename I>
using enable_int = std::enable_if_t<std::is_integral<I>::value, int>;

}  // namespace af_ap

template <int N, bool S>
class ap_bit_ref;
template <int N, bool S>
class ap_range_ref;
template <int N1, bool S1, int N2, bool S2>
class ap_concat_ref;

template <int N, bool S>
class ap_int_base {
    static_assert(N >= 1 && N <= 4096, "ap_int/ap_uint width must be 1..4096 bits");

public:
    static constexpr int width = N;
    static constexpr bool is_signed = S;
    static constexpr int K = af_ap::words_of(N);
    using words = af_ap::words<K>;

    ap_int_base() { set_words(words{}); }
    ap_int_base(const ap_int_base&) = default;
    ap_int_base& operator=(const ap_int_base&) = default;

    template <int M, bool T>
    ap_int_base(const ap_int_base<M, T>& o) {
        set_words(o.template extended<K>());
    }

    template <typename I, af_ap::enable_int<I> = 0>
    ap_int_base(I v) {
        words w;
        bool negative = false;
        if constexpr (std::is_signed<I>::value) negative = v < 0;
        w.fill(negative ? ~uint64_t(0) : 0);
        w[0] = static_cast<uint64_t>(static_cast<std::conditional_t<std::is_signed<I>::value, int64_t, uint64_t>>(v));
        set_words(w);
    }

    template <int M, bool T>
    ap_int_base(const ap_range_ref<M, T>& r) : ap_int_base(r.get()) {}
    template <int N1, bool S1, int N2, bool S2>
    ap_int_base(const ap_concat_ref<N1, S1, N2, S2>& c) : ap_int_base(c.get()) {}

    // "0x..." hex, "0b..." binary, "0o..." octal or decimal, optional leading '-'; `radix`
    // forces a base for digits without a prefix.
    explicit ap_int_base(const char* s, int radix = 0) { set_words(parse(s, radix)); }
    explicit ap_int_base(const std::string& s, int radix = 0) : ap_int_base(s.c_str(), radix) {}

    // ---- raw words, full-width two's complement (bits above N: sign or zero fill)
    words get_words() const {
        words w;
        for (int i = 0; i < K; i++) w[i] = st_.get(i);
        constexpr int top = N % 64;
        if constexpr (S && top != 0) {
            if ((w[K - 1] >> (top - 1)) & 1) w[K - 1] |= ~uint64_t(0) << top;
        }
        return w;
    }
    void set_words(const words& w) {
        for (int i = 0; i < K; i++) st_.set(i, w[i]);
        constexpr int top = N % 64;
        if constexpr (top != 0) st_.set(K - 1, st_.get(K - 1) & ((uint64_t(1) << top) - 1));
    }
    // The value extended (by this type's signedness) or truncated to D words.
    template <int D>
    af_ap::words<D> extended() const {
        const words w = get_words();
        af_ap::words<D> r;
        r.fill(negative() ? ~uint64_t(0) : 0);
        for (int i = 0; i < K && i < D; i++) r[i] = w[i];
        return r;
    }
    static ap_int_base from_words(const words& w) {
        ap_int_base r;
        r.set_words(w);
        return r;
    }

    bool negative() const { return S && get_bit(N - 1); }
    static constexpr int length() { return N; }

    // ---- conversions
    uint64_t to_uint64() const { return get_words()[0]; }
    int64_t to_int64() const { return static_cast<int64_t>(extended<1>()[0]); }
    unsigned to_uint() const { return static_cast<unsigned>(to_uint64()); }
    int to_int() const { return static_cast<int>(to_int64()); }
    bool to_bool() const { return !af_ap::is_zero<K>(get_words()); }
    explicit operator bool() const { return to_bool(); }
    template <typename I, af_ap::enable_int<I> = 0>
    explicit operator I() const {
        return static_cast<I>(std::is_signed<I>::value ? static_cast<uint64_t>(to_int64()) : to_uint64());
    }
    std::string to_string(int radix = 10) const;

    // ---- bits
    bool get_bit(int i) const { return check_bit(i), (st_.get(i / 64) >> (i % 64)) & 1; }
    void set_bit(int i, bool v) {
        check_bit(i);
        uint64_t w = st_.get(i / 64);
        const uint64_t m = uint64_t(1) << (i % 64);
        st_.set(i / 64, v ? (w | m) : (w & ~m));
    }
    bool test(int i) const { return get_bit(i); }
    void set(int i) { set_bit(i, true); }
    void clear(int i) { set_bit(i, false); }
    bool operator[](int i) const { return get_bit(i); }
    ap_bit_ref<N, S> operator[](int i) { return ap_bit_ref<N, S>(*this, i); }

    ap_int_base<N, false> range(int hi, int lo) const {
        check_range(hi, lo);
        const words w = af_ap::shr<K>(get_words(), lo, 0);
        ap_int_base<N, false> r = ap_int_base<N, false>::from_words(w);
        return r & mask(hi - lo + 1);
    }
    ap_range_ref<N, S> range(int hi, int lo) { return ap_range_ref<N, S>(*this, hi, lo); }
    ap_int_base<N, false> range() const { return range(N - 1, 0); }
    ap_int_base<N, false> operator()(int hi, int lo) const { return range(hi, lo); }
    ap_range_ref<N, S> operator()(int hi, int lo) { return range(hi, lo); }
    void set_range(int hi, int lo, const ap_int_base<N, false>& v) {
        check_range(hi, lo);
        const ap_int_base<N, false> m = mask(hi - lo + 1);
        const words keep = af_ap::bit_not<K>(af_ap::shl<K>(m.get_words(), lo));
        const words put = af_ap::shl<K>((v & m).get_words(), lo);
        words w = get_words();
        for (int i = 0; i < K; i++) w[i] = (w[i] & keep[i]) | put[i];
        set_words(w);
    }

    template <int M, bool T>
    ap_int_base<N + M, false> concat(const ap_int_base<M, T>& low) const {
        using R = ap_int_base<N + M, false>;
        const R hi = R(ap_int_base<N, false>(*this)) << M;
        return hi | R(ap_int_base<M, false>(low));
    }

    // ---- shifts (result: this type)
    ap_int_base operator<<(unsigned s) const {
        return s >= unsigned(N) ? ap_int_base() : from_words(af_ap::shl<K>(get_words(), s));
    }
    ap_int_base operator>>(unsigned s) const {
        const uint64_t fill = negative() ? ~uint64_t(0) : 0;
        return from_words(af_ap::shr<K>(get_words(), s >= unsigned(N) ? unsigned(64 * K) : s, fill));
    }
    template <int M, bool T>
    ap_int_base operator<<(const ap_int_base<M, T>& s) const { return *this << shift_amount(s); }
    template <int M, bool T>
    ap_int_base operator>>(const ap_int_base<M, T>& s) const { return *this >> shift_amount(s); }
    template <typename A>
    ap_int_base& operator<<=(const A& s) { return *this = *this << s; }
    template <typename A>
    ap_int_base& operator>>=(const A& s) { return *this = *this >> s; }

    // ---- unary
    ap_int_base operator~() const { return from_words(af_ap::bit_not<K>(get_words())); }
    ap_int_base operator-() const { return from_words(af_ap::neg<K>(get_words())); }
    ap_int_base operator+() const { return *this; }
    bool operator!() const { return !to_bool(); }
    ap_int_base& operator++() { return *this = *this + ap_int_base(1); }
    ap_int_base& operator--() { return *this = *this - ap_int_base(1); }
    ap_int_base operator++(int) { ap_int_base t = *this; ++*this; return t; }
    ap_int_base operator--(int) { ap_int_base t = *this; --*this; return t; }

    // ---- compound assignment: the result is converted back to this type
    template <typename A> ap_int_base& operator+=(const A& b) { return *this = *this + b; }
    template <typename A> ap_int_base& operator-=(const A& b) { return *this = *this - b; }
    template <typename A> ap_int_base& operator*=(const A& b) { return *this = *this * b; }
    template <typename A> ap_int_base& operator/=(const A& b) { return *this = *this / b; }
    template <typename A> ap_int_base& operator%=(const A& b) { return *this = *this % b; }
    template <typename A> ap_int_base& operator&=(const A& b) { return *this = *this & b; }
    template <typename A> ap_int_base& operator|=(const A& b) { return *this = *this | b; }
    template <typename A> ap_int_base& operator^=(const A& b) { return *this = *this ^ b; }

    static ap_int_base<N, false> mask(int bits) {
        return bits >= N ? ~ap_int_base<N, false>() : (ap_int_base<N, false>(1) << unsigned(bits)) - ap_int_base<N, false>(1);
    }

private:
    af_ap::store<N> st_;

    static void check_bit(int i) {
        if (i < 0 || i >= N) throw std::out_of_range("ap_int: bit " + std::to_string(i) + " of a " + std::to_string(N) + "-bit value");
    }
    static void check_range(int hi, int lo) {
        if (lo < 0 || hi >= N || hi < lo)
            throw std::out_of_range("ap_int: range(" + std::to_string(hi) + ", " + std::to_string(lo) + ") of a " + std::to_string(N) + "-bit value");
    }
    template <int M, bool T>
    static unsigned shift_amount(const ap_int_base<M, T>& s) {
        const auto w = s.get_words();
        for (int i = 1; i < ap_int_base<M, T>::K; i++) {
            if (w[i]) return ~0u;
        }
        return w[0] > 0xffffffffu ? ~0u : static_cast<unsigned>(w[0]);
    }
    static words parse(const char* s, int radix) {
        if (!s) throw std::invalid_argument("ap_int: null string");
        bool minus = false;
        if (*s == '-') minus = true, s++;
        if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) radix = 16, s += 2;
        else if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) radix = 2, s += 2;
        else if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O')) radix = 8, s += 2;
        if (radix == 0) radix = 10;
        words acc{};
        if (!*s) throw std::invalid_argument("ap_int: no digits");
        for (; *s; s++) {
            const char c = *s;
            if (c == '_' || c == '\'') continue;
            int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'z') ? c - 'a' + 10 : (c >= 'A' && c <= 'Z') ? c - 'A' + 10 : 99;
            if (d >= radix) throw std::invalid_argument(std::string("ap_int: bad digit '") + c + "'");
            af_ap::mul_add_small<K>(acc, static_cast<uint64_t>(radix), static_cast<uint64_t>(d));
        }
        return minus ? af_ap::neg<K>(acc) : acc;
    }
};

template <int N>
using ap_uint = ap_int_base<N, false>;
template <int N>
using ap_int = ap_int_base<N, true>;

// ---- proxies for x[i] and x.range(hi, lo) on the left of an assignment
template <int N, bool S>
class ap_bit_ref {
public:
    ap_bit_ref(ap_int_base<N, S>& v, int i) : v_(v), i_(i) {}
    operator bool() const { return v_.get_bit(i_); }
    ap_bit_ref& operator=(bool b) { v_.set_bit(i_, b); return *this; }
    ap_bit_ref& operator=(const ap_bit_ref& o) { return *this = bool(o); }
    bool operator~() const { return !bool(*this); }

private:
    ap_int_base<N, S>& v_;
    int i_;
};

template <int N, bool S>
class ap_range_ref {
public:
    ap_range_ref(ap_int_base<N, S>& v, int hi, int lo) : v_(v), hi_(hi), lo_(lo) {
        static_cast<const ap_int_base<N, S>&>(v).range(hi, lo);  // bounds check
    }
    ap_uint<N> get() const { return static_cast<const ap_int_base<N, S>&>(v_).range(hi_, lo_); }
    operator ap_uint<N>() const { return get(); }
    uint64_t to_uint64() const { return get().to_uint64(); }
    unsigned to_uint() const { return get().to_uint(); }
    int length() const { return hi_ - lo_ + 1; }
    template <int M, bool T>
    ap_range_ref& operator=(const ap_int_base<M, T>& x) {
        v_.set_range(hi_, lo_, ap_uint<N>(x));
        return *this;
    }
    template <typename I, af_ap::enable_int<I> = 0>
    ap_range_ref& operator=(I x) { return *this = af_ap::int_as_ap<I>(x); }
    ap_range_ref& operator=(const ap_range_ref& o) { return *this = o.get(); }
    template <int M, bool T>
    bool operator==(const ap_int_base<M, T>& x) const { return get() == x; }
    template <int M, bool T>
    bool operator!=(const ap_int_base<M, T>& x) const { return get() != x; }

private:
    ap_int_base<N, S>& v_;
    int hi_, lo_;
};

// ---- binary arithmetic and bitwise operators (see the rule at the top of this file)
template <int N1, bool S1, int N2, bool S2>
using ap_arith_t = ap_int_base<af_ap::max_int(N1, N2), S1 && S2>;

#define AF_AP_BINARY_OP(OP, ...)                                                               \
    template <int N1, bool S1, int N2, bool S2>                                                \
    ap_arith_t<N1, S1, N2, S2> operator OP(const ap_int_base<N1, S1>& x, const ap_int_base<N2, S2>& y) { \
        using R = ap_arith_t<N1, S1, N2, S2>;                                                  \
        constexpr int K = R::K;                                                                \
        const af_ap::words<K> a = R(x).get_words();                                            \
        const af_ap::words<K> b = R(y).get_words();                                            \
        __VA_ARGS__                                                                            \
    }                                                                                          \
    template <int N, bool S, typename I, af_ap::enable_int<I> = 0>                             \
    auto operator OP(const ap_int_base<N, S>& x, I y) { return x OP af_ap::int_as_ap<I>(y); }  \
    template <int N, bool S, typename I, af_ap::enable_int<I> = 0>                             \
    auto operator OP(I x, const ap_int_base<N, S>& y) { return af_ap::int_as_ap<I>(x) OP y; }

AF_AP_BINARY_OP(+, return R::from_words(af_ap::add<K>(a, b));)
AF_AP_BINARY_OP(-, return R::from_words(af_ap::sub<K>(a, b));)
AF_AP_BINARY_OP(*, return R::from_words(af_ap::mul<K>(a, b));)
AF_AP_BINARY_OP(&, af_ap::words<K> r; for (int i = 0; i < K; i++) r[i] = a[i] & b[i]; return R::from_words(r);)
AF_AP_BINARY_OP(|, af_ap::words<K> r; for (int i = 0; i < K; i++) r[i] = a[i] | b[i]; return R::from_words(r);)
AF_AP_BINARY_OP(^, af_ap::words<K> r; for (int i = 0; i < K; i++) r[i] = a[i] ^ b[i]; return R::from_words(r);)
// C semantics: the quotient truncates toward zero, the remainder takes the dividend's sign.
AF_AP_BINARY_OP(/, {
    const bool na = R::is_signed && R(x).negative(), nb = R::is_signed && R(y).negative();
    af_ap::words<K> q, r;
    af_ap::divmod_unsigned<K>(na ? af_ap::neg<K>(a) : a, nb ? af_ap::neg<K>(b) : b, q, r);
    return R::from_words(na != nb ? af_ap::neg<K>(q) : q);
})
AF_AP_BINARY_OP(%, {
    const bool na = R::is_signed && R(x).negative(), nb = R::is_signed && R(y).negative();
    af_ap::words<K> q, r;
    af_ap::divmod_unsigned<K>(na ? af_ap::neg<K>(a) : a, nb ? af_ap::neg<K>(b) : b, q, r);
    return R::from_words(na ? af_ap::neg<K>(r) : r);
})
#undef AF_AP_BINARY_OP

// ---- comparisons of the mathematical values: both sides widened by one bit, signed
namespace af_ap {
template <int N1, bool S1, int N2, bool S2>
int compare(const ap_int_base<N1, S1>& x, const ap_int_base<N2, S2>& y) {
    constexpr int K = words_of(max_int(N1, N2) + 1);
    const words<K> a = x.template extended<K>();
    const words<K> b = y.template extended<K>();
    const int64_t ta = static_cast<int64_t>(a[K - 1]), tb = static_cast<int64_t>(b[K - 1]);
    if (ta != tb) return ta < tb ? -1 : 1;
    for (int i = K - 2; i >= 0; i--) {
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    }
    return 0;
}
}  // namespace af_ap

#define AF_AP_COMPARE_OP(OP)                                                                     \
    template <int N1, bool S1, int N2, bool S2>                                                  \
    bool operator OP(const ap_int_base<N1, S1>& x, const ap_int_base<N2, S2>& y) {               \
        return af_ap::compare(x, y) OP 0;                                                        \
    }                                                                                            \
    template <int N, bool S, typename I, af_ap::enable_int<I> = 0>                               \
    bool operator OP(const ap_int_base<N, S>& x, I y) { return af_ap::compare(x, af_ap::int_as_ap<I>(y)) OP 0; } \
    template <int N, bool S, typename I, af_ap::enable_int<I> = 0>                               \
    bool operator OP(I x, const ap_int_base<N, S>& y) { return af_ap::compare(af_ap::int_as_ap<I>(x), y) OP 0; }

AF_AP_COMPARE_OP(==)
AF_AP_COMPARE_OP(!=)
AF_AP_COMPARE_OP(<)
AF_AP_COMPARE_OP(<=)
AF_AP_COMPARE_OP(>)
AF_AP_COMPARE_OP(>=)
#undef AF_AP_COMPARE_OP

// ---- concatenation: (hi, lo) is ap_uint<N + M>, as in UG1399. On two variables it is also
// assignable: `(hi, lo) = v` puts the top N bits of v into hi and the low M bits into lo.
template <int N1, bool S1, int N2, bool S2>
ap_uint<N1 + N2> operator,(const ap_int_base<N1, S1>& hi, const ap_int_base<N2, S2>& lo) {
    return hi.concat(lo);
}

template <int N1, bool S1, int N2, bool S2>
class ap_concat_ref {
public:
    ap_concat_ref(ap_int_base<N1, S1>& hi, ap_int_base<N2, S2>& lo) : hi_(hi), lo_(lo) {}
    ap_uint<N1 + N2> get() const { return static_cast<const ap_int_base<N1, S1>&>(hi_).concat(lo_); }
    operator ap_uint<N1 + N2>() const { return get(); }
    uint64_t to_uint64() const { return get().to_uint64(); }
    template <int M, bool T>
    ap_concat_ref& operator=(const ap_int_base<M, T>& x) {
        const ap_uint<N1 + N2> v = x;  // wraps / extends to the concatenated width
        lo_ = ap_uint<N2>(v);
        hi_ = ap_uint<N1>(v >> unsigned(N2));
        return *this;
    }
    template <typename I, af_ap::enable_int<I> = 0>
    ap_concat_ref& operator=(I x) { return *this = af_ap::int_as_ap<I>(x); }
    ap_concat_ref& operator=(const ap_concat_ref& o) { return *this = o.get(); }

private:
    ap_int_base<N1, S1>& hi_;
    ap_int_base<N2, S2>& lo_;
};

template <int N1, bool S1, int N2, bool S2>
ap_concat_ref<N1, S1, N2, S2> operator,(ap_int_base<N1, S1>& hi, ap_int_base<N2, S2>& lo) {
    return ap_concat_ref<N1, S1, N2, S2>(hi, lo);
}

template <int N, bool S>
std::string ap_int_base<N, S>::to_string(int radix) const {
    if (radix != 2 && radix != 8 && radix != 10 && radix != 16) throw std::invalid_argument("ap_int: radix must be 2, 8, 10 or 16");
    const bool minus = radix == 10 && negative();
    constexpr int KW = af_ap::words_of(N + 1);
    af_ap::words<KW> v = extended<KW>();
    if (minus) v = af_ap::neg<KW>(v);
    if (!minus) {  // the N-bit pattern for 2/8/16, the value for unsigned decimal
        const af_ap::words<KW> m = ap_int_base<N + 1, false>::mask(N).get_words();
        for (int i = 0; i < KW; i++) v[i] &= m[i];
    }
    std::string digits;
    do {
        digits.push_back("0123456789abcdef"[af_ap::div_small<KW>(v, static_cast<uint64_t>(radix))]);
    } while (!af_ap::is_zero<KW>(v));
    std::reverse(digits.begin(), digits.end());
    const char* prefix = radix == 16 ? "0x" : radix == 8 ? "0o" : radix == 2 ? "0b" : "";
    return (minus ? "-" : "") + std::string(prefix) + digits;
}

template <int N, bool S>
std::ostream& operator<<(std::ostream& os, const ap_int_base<N, S>& v) {
    return os << v.to_string(10);
}

#endif  // AF_AP_INT_H
