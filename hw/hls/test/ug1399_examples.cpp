// AMD's arbitrary-precision types (the vendor headers of HLS C simulation) against the worked
// examples of UG1399 (Vitis HLS User Guide, v2023.2), with the results the guide states:
//   - "Arbitrary Precision Data Types" > "C++ Arbitrary Precision Integer Types" > "Class
//     Methods and Operators" > "Concatenation": (Val2, Val1) = 0x1B5, Val1.concat(Val2) =
//     0x2B6, (Val1, Val2) = 0xAB gives 1 and 43;
//   - "... Binary Arithmetic Operators": the widths of + - * / (a sum one bit wider than the
//     wider operand, two if that one is unsigned and the other signed; a product as wide as
//     both together), seen in the types the operators return;
//   - "C++ Arbitrary Precision Fixed-Point Types" > "Quantization Modes" and "Overflow
//     Modes" (tables "Quantization Modes" / "Overflow Modes" with their examples):
//     ap_fixed<3, 2, MODE, AP_SAT> assigned 1.25 / -1.25 (0.75 for AP_RND_CONV), and
//     ap_fixed<4, 4, AP_RND, MODE> assigned 19.0 / -19.0 (31.0 for AP_WRAP);
//   - "HLS Shift Register Class" (ap_shift_reg): shift(din, addr) returns the element at
//     addr before the shift, read(addr) the element at addr, addr 0 the newest.
#include <ap_fixed.h>
#include <ap_int.h>
#include <ap_shift_reg.h>

#include <cstdio>
#include <type_traits>

static int failures = 0;

static void expect(bool ok, const char* what) {
    std::printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    failures += ok ? 0 : 1;
}

template <typename T>
constexpr bool is(int width, bool sign) {
    return T::width == width && std::is_base_of<ap_int_base<T::width, false>, T>::value == !sign;
}

static void concatenation() {
    ap_uint<10> Rslt;
    ap_int<3> Val1 = -3;
    ap_int<7> Val2 = 54;

    Rslt = (Val2, Val1);
    expect(Rslt == 0x1B5, "Rslt = (Val2, Val1) yields 0x1B5");
    Rslt = Val1.concat(Val2);
    expect(Rslt == 0x2B6, "Rslt = Val1.concat(Val2) yields 0x2B6");
    (Val1, Val2) = 0xAB;
    expect(Val1 == 1 && Val2 == 43, "(Val1, Val2) = 0xAB yields Val1 == 1, Val2 == 43");
    expect(Val1.length() == 3 && Rslt.length() == 10, "length() is the declared width");
}

static void widening() {
    ap_uint<8> u8 = 255;
    ap_int<8> s8 = -128;
    ap_uint<4> u4 = 15;
    using sum_uu = decltype(u8 + u8);
    using sum_us = decltype(u8 + s8);
    using diff_uu = decltype(u8 - u8);
    using prod_us = decltype(u8 * u4);
    using quot_su = decltype(s8 / u4);
    expect(is<sum_uu>(9, false) && (u8 + u8) == 510, "ap_uint<8> + ap_uint<8>: 9 bits, 255 + 255 = 510");
    expect(is<sum_us>(10, true) && (u8 + s8) == 127, "ap_uint<8> + ap_int<8>: 10 bits signed, 255 + -128 = 127");
    expect(is<diff_uu>(9, true) && (u4 - u8) == -240, "ap_uint - ap_uint: signed, one bit wider; 15 - 255 = -240");
    expect(is<prod_us>(12, false) && (u8 * u4) == 3825, "ap_uint<8> * ap_uint<4>: 12 bits, 255 * 15 = 3825");
    expect(is<quot_su>(8, true) && (s8 / u4) == -8, "ap_int<8> / ap_uint<4>: the dividend's 8 bits, -128 / 15 = -8");
    ap_uint<8> back = u8 + u8;
    expect(back == 254, "assigning the 9-bit sum 510 to ap_uint<8> keeps the low 8 bits: 254");
    expect(((u8 + u8) >> 1) == 255, "(a + b) >> 1 on the widened sum: 255, the carry kept");
}

template <ap_q_mode Q>
static void quantization(double in, double want, const char* what) {
    ap_fixed<3, 2, Q, AP_SAT> v = in;
    const bool ok = v.to_double() == want;
    std::printf("%s %s: %g -> %g (UG1399: %g)\n", ok ? "ok  " : "FAIL", what, in, v.to_double(), want);
    failures += ok ? 0 : 1;
}

template <ap_o_mode O>
static void overflow(double in, double want, const char* what) {
    ap_fixed<4, 4, AP_RND, O> v = in;
    const bool ok = v.to_double() == want;
    std::printf("%s %s: %g -> %g (UG1399: %g)\n", ok ? "ok  " : "FAIL", what, in, v.to_double(), want);
    failures += ok ? 0 : 1;
}

static void fixed_point() {
    quantization<AP_RND>(1.25, 1.5, "AP_RND");
    quantization<AP_RND>(-1.25, -1.0, "AP_RND");
    quantization<AP_RND_ZERO>(1.25, 1.0, "AP_RND_ZERO");
    quantization<AP_RND_ZERO>(-1.25, -1.0, "AP_RND_ZERO");
    quantization<AP_RND_MIN_INF>(1.25, 1.0, "AP_RND_MIN_INF");
    quantization<AP_RND_MIN_INF>(-1.25, -1.5, "AP_RND_MIN_INF");
    quantization<AP_RND_INF>(1.25, 1.5, "AP_RND_INF");
    quantization<AP_RND_INF>(-1.25, -1.5, "AP_RND_INF");
    quantization<AP_RND_CONV>(0.75, 1.0, "AP_RND_CONV");
    quantization<AP_RND_CONV>(-1.25, -1.0, "AP_RND_CONV");
    quantization<AP_TRN>(1.25, 1.0, "AP_TRN");
    quantization<AP_TRN>(-1.25, -1.5, "AP_TRN");
    quantization<AP_TRN_ZERO>(1.25, 1.0, "AP_TRN_ZERO");
    quantization<AP_TRN_ZERO>(-1.25, -1.0, "AP_TRN_ZERO");
    overflow<AP_SAT>(19.0, 7.0, "AP_SAT");
    overflow<AP_SAT>(-19.0, -8.0, "AP_SAT");
    overflow<AP_SAT_ZERO>(19.0, 0.0, "AP_SAT_ZERO");
    overflow<AP_SAT_ZERO>(-19.0, 0.0, "AP_SAT_ZERO");
    overflow<AP_SAT_SYM>(19.0, 7.0, "AP_SAT_SYM");
    overflow<AP_SAT_SYM>(-19.0, -7.0, "AP_SAT_SYM");
    overflow<AP_WRAP>(31.0, -1.0, "AP_WRAP");
    overflow<AP_WRAP>(-19.0, -3.0, "AP_WRAP");
}

static void shift_register() {
    ap_shift_reg<int, 4> sreg;
    for (int i = 1; i <= 4; i++) sreg.shift(i);
    expect(sreg.read(0) == 4 && sreg.read(3) == 1, "after shifting in 1..4: read(0) = 4 (newest), read(3) = 1");
    const int out = sreg.shift(5, 3);
    expect(out == 1 && sreg.read(0) == 5 && sreg.read(3) == 2, "shift(5, 3) returns 1, the element at 3 before the shift");
    const int held = sreg.shift(6, 0, false);
    expect(held == 5 && sreg.read(0) == 5, "shift with enable = false reads without shifting");
}

int main() {
    concatenation();
    widening();
    fixed_point();
    shift_register();
    return failures ? 1 : 0;
}
