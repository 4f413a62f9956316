"""Reference vectors for AMD's ap_int / ap_uint (the vendor headers of HLS C simulation),
computed with Python's arbitrary-precision integers from the semantics UG1399 (Vitis HLS User
Guide, v2023.2, "Arbitrary Precision Data Types" > "C++ Arbitrary Precision Integer Types" >
"Class Methods and Operators") documents:

- Binary arithmetic widens, so the result is the exact mathematical value, in a type of
  documented width and signedness ("Binary Arithmetic Operators"):
    +  one bit more than the wider operand, two more if the wider is unsigned and the other
       signed; signed if either operand is;
    -  as +, but always signed;
    *  the sum of the widths; signed if either operand is;
    /  the dividend's width, one more if the divisor is signed; signed if either is;
       truncation toward zero;
    %  (same signedness) the narrower width, the dividend's signedness.
- Bitwise & | ^ give the exact two's complement result of the two values (Python's ints are
  two's complement of infinite width); unary minus is exact.
- Comparisons, / and % are checked for operands of the same signedness, where the
  mathematical result is the only reading. With one signed and one unsigned operand UG1399
  states no value, and AMD's headers follow C's conversions there at some widths (e.g.
  ap_int<32>(-1) < ap_uint<32>(0) is false, as for int and unsigned), so no case claims one.
- Assignment to an N-bit type keeps the low N bits ("wraps"); << and >> keep the left
  operand's type (>> is arithmetic for signed); range(hi, lo), bit select, concatenation
  (the first operand in the high bits) as in "Bit-Level Operations".

Writes one line per case: `<op> <types...> <operands...> <expected>`. Operands are the hex bit
patterns of their N-bit types; an expected value is a hex pattern, `W[su]:pattern` (a widened
result: width, signedness and the pattern at that width), a decimal string or 0/1.
Usage: ap_int_vectors.py OUT [SEED]
"""

import os
import random
import sys

WIDTHS = [1, 7, 8, 32, 63, 64, 65, 128, 200, 512, 1024]
MIXED = [(7, 64), (64, 7), (65, 32), (32, 65), (128, 1024), (1024, 128), (200, 63), (512, 8)]
SIGNS = [(False, False), (True, True), (True, False), (False, True)]
COMPARE = ["eq", "ne", "lt", "le", "gt", "ge"]


def wrap(v, n, signed):
    v &= (1 << n) - 1
    if signed and v >> (n - 1):
        v -= 1 << n
    return v


def pattern(v, n):
    return v & ((1 << n) - 1)


def ty(n, s):
    return "{}{}".format("s" if s else "u", n)


def widened(value, w, s):
    """`W[su]:pattern`: a result of width w and signedness s that must hold `value` exactly."""
    assert wrap(value, w, s) == value, (value, w, s)
    return "{}{}:{}".format(w, "s" if s else "u", hex(pattern(value, w)))


def result_type(op, n, s, m, t):
    """(width, signed) of `a op b` for a of (n, s), b of (m, t), as UG1399 states it."""
    if op in ("add", "sub"):
        # equal widths: "the wider" is unsigned and "the other" signed iff the signs differ
        wider, wider_signed, other_signed = (n, s, t) if n > m else (m, t, s) if m > n else (n, s and t, s or t)
        w = wider + (2 if (not wider_signed and other_signed) else 1)
        return w, (s or t) if op == "add" else True
    if op == "mul":
        return n + m, s or t
    if op == "div":
        return n + (1 if t else 0), s or t
    if op == "mod":
        return min(n, m), s
    raise ValueError(op)


def samples(rng, n):
    full = (1 << n) - 1
    values = [0, 1, full, full >> 1, 1 << (n - 1), rng.getrandbits(n), rng.getrandbits(n)]
    values.append(rng.getrandbits(min(n, 5)))
    return [pattern(v, n) for v in values]


def trunc_div(a, b):
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def trunc_mod(a, b):
    r = abs(a) % abs(b)
    return -r if a < 0 else r


ARITH = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
         "div": trunc_div, "mod": trunc_mod}
LOGIC = {"and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b}


def compare(op, a, b):
    return {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[op]


def pair_cases(rng, out, n, s, m, t):
    types = "{} {}".format(ty(n, s), ty(m, t))
    for pa in samples(rng, n):
        for pb in samples(rng, m):
            a, b = wrap(pa, n, s), wrap(pb, m, t)
            head = "{} {} {}".format(types, hex(pa), hex(pb))
            for op, f in ARITH.items():
                if op in ("div", "mod") and (b == 0 or s != t):
                    continue
                out.append("{} {} {}".format(op, head, widened(f(a, b), *result_type(op, n, s, m, t))))
            for op, f in LOGIC.items():
                out.append("{} {} {}".format(op, head, f(a, b)))
            for op in COMPARE if s == t else []:
                out.append("{} {} {}".format(op, head, int(compare(op, a, b))))
            out.append("concat {} {}".format(head, widened((pa << m) | pb, n + m, False)))
        out.append("conv {} {} {}".format(types, hex(pa), hex(pattern(wrap(pa, n, s), m))))


def single_cases(rng, out, n, s):
    for pa in samples(rng, n):
        a = wrap(pa, n, s)
        for sh in sorted({0, 1, n - 1, n, n + 3, rng.randrange(n)}):
            out.append("shl {} {} {} {}".format(ty(n, s), hex(pa), sh, hex(pattern(pa << sh, n))))
            out.append("shr {} {} {} {}".format(ty(n, s), hex(pa), sh, hex(pattern(a >> sh, n))))
        out.append("neg {} {} {}".format(ty(n, s), hex(pa), -a))
        out.append("not {} {} {}".format(ty(n, s), hex(pa), hex(pattern(~a, n))))
        out.append("to_uint64 {} {} {}".format(ty(n, s), hex(pa), hex(pattern(a, 64))))
        out.append("to_int64 {} {} {}".format(ty(n, s), hex(pa), hex(pattern(wrap(a, 64, True), 64))))
        out.append("str10 {} {} {}".format(ty(n, s), hex(pa), a))
        out.append("parse10 {} {} {}".format(ty(n, s), a, hex(pa)))
        out.append("inc {} {} {}".format(ty(n, s), hex(pa), hex(pattern(a + 1, n))))
        for _ in range(3):
            lo = rng.randrange(n)
            hi = rng.randrange(lo, n)
            field = (pa >> lo) & ((1 << (hi - lo + 1)) - 1)
            out.append("range {} {} {} {} {}".format(ty(n, s), hex(pa), hi, lo, hex(field)))
            v = rng.getrandbits(n)
            mask = ((1 << (hi - lo + 1)) - 1) << lo
            put = (pa & ~mask) | ((v << lo) & mask)
            out.append("setrange {} {} {} {} {} {}".format(ty(n, s), hex(pa), hi, lo, hex(v), hex(pattern(put, n))))
            bit = rng.randrange(n)
            out.append("bit {} {} {} {}".format(ty(n, s), hex(pa), bit, (pa >> bit) & 1))


def main():
    out_path = sys.argv[1]
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1399)
    out = []
    for n in WIDTHS:
        for s in (False, True):
            single_cases(rng, out, n, s)
        for s, t in SIGNS:
            pair_cases(rng, out, n, s, n, t)
    for n, m in MIXED:
        for s, t in SIGNS:
            pair_cases(rng, out, n, s, m, t)
    tmp = out_path + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(out) + "\n")
    os.replace(tmp, out_path)


if __name__ == "__main__":
    main()
