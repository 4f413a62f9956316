// The worked examples of UG1399 (Vitis HLS User Guide, 2020.2, "Other Class Methods,
// Operators, and Data Members" > Concatenation), with the results the guide states.
#include <ap_int.h>

#include <cstdio>

static int failures = 0;

static void expect(bool ok, const char* what) {
    std::printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    failures += ok ? 0 : 1;
}

int main() {
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
    return failures ? 1 : 0;
}
