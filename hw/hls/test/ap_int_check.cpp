// Checks AMD's ap_int / ap_uint (the vendor headers of HLS C simulation) against the vectors
// ap_int_vectors.py computes with Python's integers from UG1399's documented semantics.
// Usage: ap_int_check VECTORS   (exit 0 = every case agrees; each disagreement is printed)
#include <ap_int.h>

#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using fields = std::vector<std::string>;
using check_fn = std::function<std::string(const std::string& op, const fields& f)>;

template <int N, bool S>
using A = ap_int_base<N, S>;

// The N-bit pattern as Python's hex() writes it, read 64 bits at a time through range().
template <int N, bool S>
std::string hex(const A<N, S>& v) {
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (int lo = 0; lo < N; lo += 4) {
        const int hi = lo + 3 < N ? lo + 3 : N - 1;
        out.insert(out.begin(), digits[v.range(hi, lo).to_uint64()]);
    }
    const auto first = out.find_first_not_of('0');
    return "0x" + (first == std::string::npos ? std::string("0") : out.substr(first));
}

// A widened result: `W[su]:pattern` (its type's width and signedness, then its bits).
template <int N, bool S>
std::string typed(const A<N, S>& v) { return std::to_string(N) + (S ? "s:" : "u:") + hex(v); }

template <int N, bool S>
A<N, S> from_hex(const std::string& s) {
    A<N, S> v = 0;
    const std::string digits = s.substr(2);
    int lo = 0;
    for (auto it = digits.rbegin(); it != digits.rend() && lo < N; ++it, lo += 4) {
        const unsigned d = unsigned(std::stoul(std::string(1, *it), nullptr, 16));
        const int hi = lo + 3 < N ? lo + 3 : N - 1;
        v.range(hi, lo) = ap_uint<4>(d).range(hi - lo, 0);
    }
    return v;
}

template <int N, bool S>
std::string single(const std::string& op, const fields& f) {
    if (op == "parse10") return hex(A<N, S>(f[2].c_str(), 10));
    const A<N, S> a = from_hex<N, S>(f[2]);
    if (op == "shl") return hex(A<N, S>(a << unsigned(std::stoul(f[3]))));
    if (op == "shr") return hex(A<N, S>(a >> unsigned(std::stoul(f[3]))));
    if (op == "neg") return (-a).to_string(10);
    if (op == "not") return hex(A<N, S>(~a));
    if (op == "to_uint64") return hex(A<64, false>(a.to_uint64()));
    if (op == "to_int64") return hex(A<64, false>(static_cast<uint64_t>(a.to_int64())));
    if (op == "str10") return a.to_string(10);
    if (op == "inc") {
        A<N, S> b = a;
        ++b;
        return hex(b);
    }
    if (op == "range") {
        const int hi = std::stoi(f[3]), lo = std::stoi(f[4]);
        return hex(A<N, false>(a.range(hi, lo)));
    }
    if (op == "setrange") {
        A<N, S> b = a;
        b.range(std::stoi(f[3]), std::stoi(f[4])) = from_hex<N, false>(f[5]);
        return hex(b);
    }
    if (op == "bit") {
        A<N, S> b = a;  // non-const: goes through the bit reference proxy
        return b[std::stoi(f[3])] ? "1" : "0";
    }
    throw std::runtime_error("unknown single op " + op);
}

template <int N, bool S, int M, bool T>
std::string pair(const std::string& op, const fields& f) {
    const A<N, S> a = from_hex<N, S>(f[3]);
    const A<M, T> b = from_hex<M, T>(f[4]);
    if (op == "add") return typed(a + b);
    if (op == "sub") return typed(a - b);
    if (op == "mul") return typed(a * b);
    if (op == "div") return typed(a / b);
    if (op == "mod") return typed(a % b);
    if (op == "and") return (a & b).to_string(10);
    if (op == "or") return (a | b).to_string(10);
    if (op == "xor") return (a ^ b).to_string(10);
    if (op == "eq") return (a == b) ? "1" : "0";
    if (op == "ne") return (a != b) ? "1" : "0";
    if (op == "lt") return (a < b) ? "1" : "0";
    if (op == "le") return (a <= b) ? "1" : "0";
    if (op == "gt") return (a > b) ? "1" : "0";
    if (op == "ge") return (a >= b) ? "1" : "0";
    if (op == "concat") {
        A<N, S> x = a;  // concatenation of two variables (UG1399 "Bit-Level Operations")
        A<M, T> y = b;
        return typed(A<N + M, false>((x, y)));
    }
    if (op == "conv") {
        const A<M, T> c = a;
        return hex(c);
    }
    throw std::runtime_error("unknown pair op " + op);
}

std::string ty(int n, bool s) { return (s ? "s" : "u") + std::to_string(n); }

std::map<std::string, check_fn> singles, pairs;

template <int N>
void reg_width() {
    singles[ty(N, false)] = single<N, false>;
    singles[ty(N, true)] = single<N, true>;
}
template <int N, int M>
void reg_pair() {
    pairs[ty(N, false) + " " + ty(M, false)] = pair<N, false, M, false>;
    pairs[ty(N, true) + " " + ty(M, true)] = pair<N, true, M, true>;
    pairs[ty(N, true) + " " + ty(M, false)] = pair<N, true, M, false>;
    pairs[ty(N, false) + " " + ty(M, true)] = pair<N, false, M, true>;
}
template <int N>
void reg_same() {
    reg_width<N>();
    reg_pair<N, N>();
}

int main(int argc, char** argv) {
    if (argc != 2) {
        std::cerr << "usage: ap_int_check VECTORS\n";
        return 2;
    }
    // the widths and pairs of ap_int_vectors.py (a line for any other type fails the test)
    reg_same<1>(), reg_same<7>(), reg_same<8>(), reg_same<32>(), reg_same<63>(), reg_same<64>();
    reg_same<65>(), reg_same<128>(), reg_same<200>(), reg_same<512>(), reg_same<1024>();
    reg_pair<7, 64>(), reg_pair<64, 7>(), reg_pair<65, 32>(), reg_pair<32, 65>();
    reg_pair<128, 1024>(), reg_pair<1024, 128>(), reg_pair<200, 63>(), reg_pair<512, 8>();

    std::ifstream in(argv[1]);
    if (!in) {
        std::cerr << "ap_int_check: cannot read " << argv[1] << "\n";
        return 2;
    }
    std::string line;
    long cases = 0, failures = 0;
    std::map<std::string, long> per_op;
    while (std::getline(in, line)) {
        if (line.empty()) continue;
        std::istringstream ss(line);
        fields f;
        for (std::string w; ss >> w;) f.push_back(w);
        const std::string& op = f[0];
        const std::string expected = f.back();
        std::string got;
        try {
            auto p = pairs.find(f[1] + " " + (f.size() > 2 ? f[2] : ""));
            if (p != pairs.end() && f[2][0] != '0' && !isdigit(f[2][0]) && f[2][0] != '-') {
                got = p->second(op, f);
            } else {
                auto s = singles.find(f[1]);
                if (s == singles.end()) throw std::runtime_error("no instantiation for type " + f[1]);
                got = s->second(op, f);
            }
        } catch (const std::exception& e) {
            got = std::string("exception: ") + e.what();
        }
        cases++;
        per_op[op]++;
        if (got != expected) {
            if (failures < 50) std::cerr << "MISMATCH: " << line << "\n     got: " << got << "\n";
            failures++;
        }
    }
    for (const auto& [op, n] : per_op) std::cout << op << ": " << n << " cases\n";
    std::cout << cases << " cases, " << failures << " mismatches\n";
    return (failures == 0 && cases > 0) ? 0 : 1;
}
