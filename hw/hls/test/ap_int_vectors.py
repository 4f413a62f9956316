"""Reference vectors for ap_int.h, computed with Python's arbitrary-precision integers.

Writes one line per case: `<op> <types...> <operands...> <expected>`. Bit patterns are hex
(`hex()` of the N-bit two's complement pattern), decimal values are Python's str(). The
semantics modelled here are the ones ap_int.h documents (and UG1399 describes for assignment,
part select and concatenation): values wrap at N bits, extension follows the source's
signedness; a binary op converts both operands to W = max(N, M) bits, signed iff both are,
and wraps at W; comparisons compare mathematical values; / truncates toward zero.
Usage: ap_int_vectors.py OUT [SEED]
"""

import os
import random
import sys

WIDTHS = [1, 7, 8, 32, 63, 64, 65, 128, 200, 512, 1024]
MIXED = [(7, 64), (64, 7), (65, 32), (32, 65), (128, 1024), (1024, 128), (200, 63), (512, 8)]
SIGNS = [(False, False), (True, True), (True, False), (False, True)]
BINARY = ["add", "sub", "mul", "div", "mod", "and", "or", "xor"]
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


def binary(op, a, b):
    return {
        "add": lambda: a + b,
        "sub": lambda: a - b,
        "mul": lambda: a * b,
        "div": lambda: trunc_div(a, b),
        "mod": lambda: trunc_mod(a, b),
        "and": lambda: a & b,
        "or": lambda: a | b,
        "xor": lambda: a ^ b,
    }[op]()


def compare(op, a, b):
    return {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[op]


def pair_cases(rng, out, n, s, m, t):
    w, rs = max(n, m), s and t
    for pa in samples(rng, n):
        for pb in samples(rng, m):
            a, b = wrap(pa, n, s), wrap(pb, m, t)
            ca, cb = wrap(a, w, rs), wrap(b, w, rs)
            for op in BINARY:
                if op in ("div", "mod") and cb == 0:
                    continue
                r = pattern(binary(op, ca, cb), w)
                out.append("{} {} {} {} {} {}".format(op, ty(n, s), ty(m, t), hex(pa), hex(pb), hex(r)))
            for op in COMPARE:
                out.append("{} {} {} {} {} {}".format(op, ty(n, s), ty(m, t), hex(pa), hex(pb), int(compare(op, a, b))))
            out.append("concat {} {} {} {} {}".format(ty(n, s), ty(m, t), hex(pa), hex(pb), hex((pa << m) | pb)))
        out.append("conv {} {} {} {}".format(ty(n, s), ty(m, t), hex(pa), hex(pattern(wrap(pa, n, s), m))))


def single_cases(rng, out, n, s):
    for pa in samples(rng, n):
        a = wrap(pa, n, s)
        for sh in sorted({0, 1, n - 1, n, n + 3, rng.randrange(n)}):
            out.append("shl {} {} {} {}".format(ty(n, s), hex(pa), sh, hex(pattern(pa << sh, n))))
            out.append("shr {} {} {} {}".format(ty(n, s), hex(pa), sh, hex(pattern(a >> sh, n))))
        out.append("neg {} {} {}".format(ty(n, s), hex(pa), hex(pattern(-a, n))))
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
            m = ((1 << (hi - lo + 1)) - 1) << lo
            put = (pa & ~m) | ((v << lo) & m)
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
