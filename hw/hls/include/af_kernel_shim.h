// Exports a kernel's top function through the C ABI of af_sim_abi.h. hls_kernel (rules/hls.bzl)
// generates one line per kernel from the target's `ports`:
//
//   AF_KERNEL_EXPORT(dma_in, "ap_ctrl_chain",
//                    {"mem", AF_ARG_MEMORY, "inout", "gmem"},
//                    {"out", AF_ARG_STREAM, "out", ""},
//                    {"size", AF_ARG_SCALAR, "in", "control"})
//
// and compiles it after the unchanged kernel source. Names, directions and bundles come from
// the declaration; kinds are checked against the C++ parameter types at compile time and the
// widths come from those types, so af_kernel_ports() tells what the compiled code really has
// (a test compares it with the KernelInfo ports the rule derived from the BUCK file).
#ifndef AF_KERNEL_SHIM_H
#define AF_KERNEL_SHIM_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "af_sim_abi.h"
#include <ap_int.h>  // AMD's, from the vendor include directory

#include "ap_axi_sdata.h"
#include "hls_stream.h"

// The streams must be this project's (bound to the simulated card's FIFOs), not the vendor
// package's hls_stream.h: hls_kernel puts hw/hls/include before AMD's headers.
#ifndef AF_HLS_STREAM_H
#error "hls_stream.h is not hw/hls/include's: put hw/hls/include before AMD's headers on the include path"
#endif

namespace af {

struct arg_decl {
    const char* name;
    int kind;  // enum af_arg_kind
    const char* dir;
    const char* bundle;  // m_axi bundle; "control" for scalars; "" for streams
};

template <typename T, typename = void>
struct value_bits;
template <int N, bool S>
struct value_bits<ap_int_base<N, S>> {
    static constexpr int bits = N;
};
template <int N>  // AMD's ap_uint / ap_int derive from ap_int_base
struct value_bits<ap_uint<N>> : value_bits<ap_int_base<N, false>> {};
template <int N>
struct value_bits<ap_int<N>> : value_bits<ap_int_base<N, true>> {};
template <typename I>
struct value_bits<I, std::enable_if_t<std::is_integral<I>::value>> {
    static constexpr int bits = std::is_same<I, bool>::value ? 1 : int(sizeof(I) * 8);
};

// What one C++ parameter of the top function is, and how its value is made from an af_arg.
template <typename P, typename = void>
struct param;

template <typename E>
struct param<E*> {  // m_axi pointer
    static constexpr int kind = AF_ARG_MEMORY;
    static constexpr int width = value_bits<std::remove_cv_t<E>>::bits;
    struct holder {
        E* p = nullptr;
        void bind(const af_arg& a, const arg_decl&) { p = static_cast<E*>(a.mem); }
        E* get() { return p; }
    };
};

template <typename T, int D>
struct param<hls::stream<T, D>&> {  // axis port
    static constexpr int kind = AF_ARG_STREAM;
    static constexpr int width = 8 * int(beat_bytes<T>());
    static constexpr bool tlast = beat_traits<T>::has_last;
    static constexpr bool tkeep = beat_traits<T>::has_keep;
    struct holder {
        hls::stream<T, D> s;
        void bind(const af_arg& a, const arg_decl& d) { s.af_bind(&a.stream, d.name); }
        hls::stream<T, D>& get() { return s; }
    };
};

template <typename V>
struct param<V, std::void_t<decltype(value_bits<V>::bits)>> {  // s_axilite scalar
    static constexpr int kind = AF_ARG_SCALAR;
    static constexpr int width = value_bits<V>::bits;
    static_assert(width <= 64, "s_axilite scalars wider than 64 bits are not supported by the ABI");
    struct holder {
        V v{};
        void bind(const af_arg& a, const arg_decl&) { v = static_cast<V>(a.scalar); }
        V get() { return v; }
    };
};

inline std::string& last_error() {
    thread_local std::string e;
    return e;
}

inline std::string json_str(const char* s) { return std::string("\"") + s + "\""; }

template <typename P>
constexpr bool stream_flag(bool last) {
    if constexpr (param<P>::kind == AF_ARG_STREAM) {
        return last ? param<P>::tlast : param<P>::tkeep;
    } else {
        return false;
    }
}

// The port list, in the order hls_kernel writes KernelInfo.ports: clock, reset, one m_axi
// port per bundle (first use order), s_axi_control, then one axis port per stream argument.
template <const arg_decl* D, typename... A, std::size_t... I>
std::string ports_json(const char* control, std::index_sequence<I...>) {
    const int kinds[] = {param<A>::kind...};
    const int widths[] = {param<A>::width...};
    const bool tlast[] = {stream_flag<A>(true)...};
    const bool tkeep[] = {stream_flag<A>(false)...};
    std::vector<std::string> ports = {
        R"({"name": "ap_clk", "kind": "clock", "dir": "in", "width": 1})",
        R"({"name": "ap_rst_n", "kind": "reset", "dir": "in", "width": 1})",
    };
    std::vector<std::string> bundles;
    bool axilite = std::strcmp(control, "ap_ctrl_none") != 0;
    for (std::size_t i = 0; i < sizeof...(A); i++) {
        if (kinds[i] != AF_ARG_STREAM) axilite = true;
        if (kinds[i] != AF_ARG_MEMORY) continue;
        bool seen = false;
        for (const auto& b : bundles) seen = seen || b == D[i].bundle;
        if (seen) continue;
        bundles.push_back(D[i].bundle);
        ports.push_back("{\"name\": " + json_str(("m_axi_" + std::string(D[i].bundle)).c_str()) +
                        ", \"kind\": \"m_axi\", \"dir\": \"inout\", \"width\": " + std::to_string(widths[i]) +
                        ", \"bundle\": " + json_str(D[i].bundle) + "}");
    }
    if (axilite)
        ports.push_back(R"({"name": "s_axi_control", "kind": "axilite", "dir": "in", "width": 32, "bundle": "control"})");
    for (std::size_t i = 0; i < sizeof...(A); i++) {
        if (kinds[i] != AF_ARG_STREAM) continue;
        ports.push_back("{\"name\": " + json_str(D[i].name) + ", \"kind\": \"axis\", \"dir\": " + json_str(D[i].dir) +
                        ", \"width\": " + std::to_string(widths[i]) + ", \"tlast\": " + (tlast[i] ? "true" : "false") +
                        ", \"tkeep\": " + (tkeep[i] ? "true" : "false") + "}");
    }
    std::string out = "[";
    for (std::size_t i = 0; i < ports.size(); i++) out += (i ? ", " : "") + ports[i];
    return out + "]";
}

inline const af_arg& check_arg(const af_arg& a, const arg_decl& d) {
    static const char* kinds[] = {"a scalar", "a memory buffer", "a stream"};
    if (a.kind != d.kind)
        throw std::invalid_argument(std::string("argument '") + d.name + "' is " + kinds[d.kind] +
                                    ", the runtime passed kind " + std::to_string(a.kind));
    if (d.kind == AF_ARG_STREAM && (!a.stream.read || !a.stream.write))
        throw std::invalid_argument(std::string("argument '") + d.name + "': stream callbacks missing");
    return a;
}

// The arguments as compiled, in signature order: name, ABI kind, width of the C++ type (m_axi
// element, axis TDATA in whole bytes, scalar). Exported as `af_kernel_args` (not part of
// af_sim_abi.h; tests compare it with the argument list of kernel.json).
template <const arg_decl* D, typename... A, std::size_t... I>
std::string args_json(std::index_sequence<I...>) {
    static const char* kinds[] = {"scalar", "memory", "stream"};
    const int k[] = {param<A>::kind...};
    const int w[] = {param<A>::width...};
    std::string out = "[";
    for (std::size_t i = 0; i < sizeof...(A); i++) {
        out += std::string(i ? ", " : "") + "{\"name\": " + json_str(D[i].name) + ", \"kind\": " + json_str(kinds[k[i]]) +
               ", \"width\": " + std::to_string(w[i]) + "}";
    }
    return out + "]";
}

// The af_arg for declared argument `i`: by name, or by position when the runtime passes no
// names.
inline const af_arg& find_arg(const af_arg* args, uint32_t nargs, const arg_decl& d, std::size_t i) {
    for (uint32_t j = 0; j < nargs; j++) {
        if (args[j].name && std::strcmp(args[j].name, d.name) == 0) return check_arg(args[j], d);
    }
    if (i < nargs && !args[i].name) return check_arg(args[i], d);
    throw std::invalid_argument(std::string("argument '") + d.name + "' was not passed");
}

template <const arg_decl* D, typename... A, std::size_t... I>
int32_t run(void (*top)(A...), const af_arg* args, uint32_t nargs, std::index_sequence<I...>) {
    last_error().clear();
    try {
        std::tuple<typename param<A>::holder...> h;
        (std::get<I>(h).bind(find_arg(args, nargs, D[I], I), D[I]), ...);
        top(std::get<I>(h).get()...);
        return 0;
    } catch (const std::exception& e) {
        last_error() = e.what();
    } catch (...) {
        last_error() = "unknown exception";
    }
    return 1;
}

template <const arg_decl* D, std::size_t ND>
struct kernel {
    template <typename... A>
    static constexpr bool kinds_match(void (*)(A...)) {
        return check_kinds<A...>(std::index_sequence_for<A...>{});
    }
    template <typename... A, std::size_t... I>
    static constexpr bool check_kinds(std::index_sequence<I...>) {
        return ((param<A>::kind == D[I].kind) && ...);
    }
    template <typename... A>
    static constexpr std::size_t arity(void (*)(A...)) { return sizeof...(A); }
    template <typename... A>
    static const char* ports(void (*)(A...), const char* control) {
        static const std::string json = ports_json<D, A...>(control, std::index_sequence_for<A...>{});
        return json.c_str();
    }
    template <typename... A>
    static const char* args(void (*)(A...)) {
        static const std::string json = args_json<D, A...>(std::index_sequence_for<A...>{});
        return json.c_str();
    }
    template <typename... A>
    static int32_t call(void (*top)(A...), const af_arg* args, uint32_t nargs) {
        return run<D>(top, args, nargs, std::index_sequence_for<A...>{});
    }
};

}  // namespace af

#define AF_KERNEL_EXPORT(TOP, CONTROL, ...)                                                       \
    static constexpr af::arg_decl af_kernel_decls[] = {__VA_ARGS__};                              \
    using af_kernel_t = af::kernel<af_kernel_decls, sizeof(af_kernel_decls) / sizeof(af::arg_decl)>; \
    static_assert(af_kernel_t::arity(&TOP) == sizeof(af_kernel_decls) / sizeof(af::arg_decl),     \
                  "the BUCK ports of " #TOP " do not list every argument of the C++ function");   \
    static_assert(af_kernel_t::kinds_match(&TOP),                                                 \
                  "a BUCK port kind of " #TOP " differs from its C++ parameter type "             \
                  "(m_axi = pointer, axis = hls::stream<T>&, s_axilite = integer or ap_[u]int)"); \
    extern "C" {                                                                                  \
    __attribute__((visibility("default"))) uint32_t af_kernel_abi_version(void) { return AF_SIM_ABI_VERSION; } \
    __attribute__((visibility("default"))) const char* af_kernel_ports(void) {                  \
        return af_kernel_t::ports(&TOP, CONTROL);                                                 \
    }                                                                                             \
    __attribute__((visibility("default"))) const char* af_kernel_args(void) { return af_kernel_t::args(&TOP); } \
    __attribute__((visibility("default"))) int32_t af_kernel_run(const af_arg* args, uint32_t nargs) { \
        return af_kernel_t::call(&TOP, args, nargs);                                              \
    }                                                                                             \
    __attribute__((visibility("default"))) const char* af_kernel_error(void) {                   \
        return af::last_error().c_str();                                                          \
    }                                                                                             \
    }

#endif  // AF_KERNEL_SHIM_H
