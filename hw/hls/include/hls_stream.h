// `hls::stream<T, DEPTH>` for C simulation of the HLS kernels (UG1399 "HLS Stream Library":
// read / write / empty / full / read_nb / write_nb, `>>` reads and `<<` writes).
//
// Two modes:
//   local  (a kernel's internal channel, or a stream of a standalone C test): an unbounded
//          FIFO, as in Vitis HLS C simulation; reading an empty one is an error (it would
//          hang in hardware) and throws af::stream_error.
//   bound  (a top-level argument under the simulation runtime, see af_kernel_shim.h): every
//          read/write goes to the runtime's bounded FIFO through the af_stream callbacks of
//          af_sim_abi.h and BLOCKS there, so backpressure reaches the kernel. A callback that
//          reports teardown throws af::teardown, which unwinds the kernel and ends the run.
//          The ABI has no non-blocking query: a bound stream reports empty() == false and
//          full() == false (a read or write simply waits).
#ifndef AF_HLS_STREAM_H
#define AF_HLS_STREAM_H

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "af_sim_abi.h"
#include <ap_int.h>  // AMD's, from the vendor include directory

namespace af {

// The runtime is tearing the run down: unwinds the kernel body.
struct teardown : std::runtime_error {
    teardown() : std::runtime_error("stream closed by the runtime (run torn down)") {}
};
struct stream_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// How a stream element crosses the ABI as an af_beat. `bits`: TDATA width; `has_last` /
// `has_keep`: whether the element carries TLAST / TKEEP (ap_axiu does, ap_uint does not).
template <typename T, typename = void>
struct beat_traits;

inline uint64_t keep_all(uint32_t bytes) { return bytes >= 64 ? ~uint64_t(0) : (uint64_t(1) << bytes) - 1; }

// AMD's ap_[u]int (ap_int.h of the vendor headers) as bytes of a beat, byte 0 = bits 7..0,
// moved 64 bits at a time through range(), the documented way to reach the bits (UG1399
// "Bit-Level Operations"). Bits of `bytes` beyond N read as 0 and are dropped on write.
template <int N, bool S>
struct beat_traits<ap_int_base<N, S>> {
    static constexpr int bits = N;
    static constexpr bool has_last = false;
    static constexpr bool has_keep = false;
    static void pack(const ap_int_base<N, S>& v, uint8_t* data, uint32_t bytes) {
        for (uint32_t i = 0; i < bytes; i += 8) {
            const int lo = int(8 * i);
            const uint64_t w = lo < N ? v.range(std::min(N - 1, lo + 63), lo).to_uint64() : 0;
            for (uint32_t j = i; j < bytes && j < i + 8; j++) data[j] = static_cast<uint8_t>(w >> (8 * (j - i)));
        }
    }
    static void unpack(const uint8_t* data, uint32_t bytes, ap_int_base<N, S>& v) {
        v = 0;
        for (uint32_t i = 0; i < bytes && int(8 * i) < N; i += 8) {
            uint64_t w = 0;
            for (uint32_t j = i; j < bytes && j < i + 8; j++) w |= uint64_t(data[j]) << (8 * (j - i));
            const int lo = int(8 * i), hi = std::min(N - 1, lo + 63);
            v.range(hi, lo) = ap_uint<64>(w).range(hi - lo, 0);
        }
    }
    static void to_beat(const ap_int_base<N, S>& v, af_beat& b) {
        pack(v, b.data, b.bytes);
        b.keep = keep_all(b.bytes);
        b.last = 0;
    }
    static void from_beat(const af_beat& b, ap_int_base<N, S>& v) { unpack(b.data, b.bytes, v); }
};
// ap_uint<N> / ap_int<N> derive from ap_int_base<N, S> in AMD's headers (a stream's element
// type is the derived one, which a specialization for the base does not match).
template <int N>
struct beat_traits<ap_uint<N>> : beat_traits<ap_int_base<N, false>> {};
template <int N>
struct beat_traits<ap_int<N>> : beat_traits<ap_int_base<N, true>> {};

template <typename I>
struct beat_traits<I, std::enable_if_t<std::is_integral<I>::value>> {
    static constexpr int bits = std::is_same<I, bool>::value ? 1 : int(sizeof(I) * 8);
    static constexpr bool has_last = false;
    static constexpr bool has_keep = false;
    static void to_beat(const I& v, af_beat& b) {
        std::memcpy(b.data, &v, b.bytes < sizeof(I) ? b.bytes : sizeof(I));
        b.keep = keep_all(b.bytes);
        b.last = 0;
    }
    static void from_beat(const af_beat& b, I& v) {
        v = 0;
        std::memcpy(&v, b.data, b.bytes < sizeof(I) ? b.bytes : sizeof(I));
    }
};

// Bytes of one beat on the wire: TDATA rounded up to whole bytes (AXI4-Stream).
template <typename T>
constexpr uint32_t beat_bytes() { return (beat_traits<T>::bits + 7) / 8; }

}  // namespace af

namespace hls {

template <typename T, int DEPTH = 0>
class stream {
public:
    stream() = default;
    explicit stream(const char* name) : name_(name ? name : "") {}
    stream(const stream&) = delete;
    stream& operator=(const stream&) = delete;

    // Binds this stream to a FIFO end of the simulation runtime (af_kernel_shim.h does it
    // for top-level arguments). `ext` must outlive the binding.
    void af_bind(const af_stream* ext, const char* name) {
        ext_ = ext;
        name_ = name ? name : "";
        buf_.assign(af::beat_bytes<T>(), 0);
    }
    bool af_bound() const { return ext_ != nullptr; }

    bool empty() const { return ext_ ? false : q_.empty(); }
    bool full() const { return false; }
    std::size_t size() const { return q_.size(); }

    T read() {
        T v;
        read(v);
        return v;
    }
    void read(T& v) {
        if (ext_) {
            af_beat b{buf_.data(), static_cast<uint32_t>(buf_.size()), 0, 0};
            if (ext_->read(ext_->ctx, &b) != 0) throw af::teardown();
            af::beat_traits<T>::from_beat(b, v);
            return;
        }
        if (q_.empty()) throw af::stream_error("read from empty hls::stream '" + name_ + "'");
        v = q_.front();
        q_.pop_front();
    }
    bool read_nb(T& v) {
        if (!ext_ && q_.empty()) return false;
        read(v);
        return true;
    }
    void write(const T& v) {
        if (ext_) {
            af_beat b{buf_.data(), static_cast<uint32_t>(buf_.size()), 0, 0};
            af::beat_traits<T>::to_beat(v, b);
            if (ext_->write(ext_->ctx, &b) != 0) throw af::teardown();
            return;
        }
        q_.push_back(v);
    }
    bool write_nb(const T& v) {
        write(v);
        return true;
    }
    void operator>>(T& v) { read(v); }
    void operator<<(const T& v) { write(v); }

private:
    std::deque<T> q_;
    const af_stream* ext_ = nullptr;
    std::string name_;
    std::vector<uint8_t> buf_;
};

}  // namespace hls

#endif  // AF_HLS_STREAM_H
