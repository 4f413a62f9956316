// A minimal stand-in for the simulated device runtime, for the kernel tests: loads kernel
// libraries with dlopen and drives them through af_sim_abi.h over bounded FIFOs that block
// (with a timeout) like the runtime's. Written against the ABI header only.
#ifndef AF_TEST_SIM_RUNTIME_H
#define AF_TEST_SIM_RUNTIME_H

#include <dlfcn.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "af_sim_abi.h"

namespace simtest {

// Every wait of the harness ends after this long: a hung kernel fails the test, it does not
// hang it.
constexpr std::chrono::seconds kWaitLimit{30};

inline int failures = 0;
#define EXPECT(cond, ...)                                          \
    do {                                                           \
        if (!(cond)) {                                             \
            std::fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            std::fprintf(stderr, __VA_ARGS__);                     \
            std::fprintf(stderr, "\n");                            \
            simtest::failures++;                                   \
        }                                                          \
    } while (0)

struct beat {
    std::vector<uint8_t> data;
    uint64_t keep = 0;
    uint8_t last = 0;
};

// A bounded FIFO of `depth` beats of `bytes` bytes.
class fifo {
public:
    fifo(const char* name, uint32_t bytes, std::size_t depth) : name_(name), bytes_(bytes), depth_(depth) {}

    af_stream end() { return af_stream{this, &fifo::read_cb, &fifo::write_cb}; }

    // Closes the FIFO: every waiting or later read/write returns non-zero (teardown).
    void close() {
        std::lock_guard<std::mutex> l(m_);
        closed_ = true;
        cv_.notify_all();
    }
    void push(const beat& b) {
        std::lock_guard<std::mutex> l(m_);
        q_.push_back(b);
        cv_.notify_all();
    }
    bool pop(beat& b) {
        std::unique_lock<std::mutex> l(m_);
        if (!cv_.wait_for(l, kWaitLimit, [&] { return !q_.empty(); })) return false;
        b = q_.front();
        q_.pop_front();
        cv_.notify_all();
        return true;
    }
    // Waits until `pred(writes, size)` holds; false on timeout.
    bool wait_until(const std::function<bool(std::size_t, std::size_t)>& pred,
                    std::chrono::milliseconds limit = kWaitLimit) {
        std::unique_lock<std::mutex> l(m_);
        return cv_.wait_for(l, limit, [&] { return pred(writes_, q_.size()); });
    }
    std::size_t writes() { std::lock_guard<std::mutex> l(m_); return writes_; }
    std::size_t reads() { std::lock_guard<std::mutex> l(m_); return reads_; }
    std::size_t size() { std::lock_guard<std::mutex> l(m_); return q_.size(); }
    std::size_t max_fill() { std::lock_guard<std::mutex> l(m_); return max_fill_; }
    int blocked_writers() { std::lock_guard<std::mutex> l(m_); return blocked_writers_; }
    std::vector<beat> log() { std::lock_guard<std::mutex> l(m_); return log_; }
    std::string errors() { std::lock_guard<std::mutex> l(m_); return errors_; }
    // Called (under the lock) before each accepted write with its 0-based index.
    std::function<void(std::size_t)> on_write;
    bool keep_log = false;

private:
    static int write_cb(void* ctx, const af_beat* b) { return static_cast<fifo*>(ctx)->write(b); }
    static int read_cb(void* ctx, af_beat* b) { return static_cast<fifo*>(ctx)->read(b); }

    int write(const af_beat* b) {
        std::unique_lock<std::mutex> l(m_);
        if (b->bytes != bytes_) errors_ += name_ + ": beat of " + std::to_string(b->bytes) + " bytes, port has " + std::to_string(bytes_) + "; ";
        blocked_writers_++;
        cv_.notify_all();
        const bool ok = cv_.wait_for(l, kWaitLimit, [&] { return closed_ || q_.size() < depth_; });
        blocked_writers_--;
        if (!ok) errors_ += name_ + ": writer timed out; ";
        if (!ok || closed_) return 1;
        if (on_write) on_write(writes_);
        beat x;
        x.data.assign(b->data, b->data + b->bytes);
        x.keep = b->keep;
        x.last = b->last;
        if (keep_log) log_.push_back(x);
        q_.push_back(std::move(x));
        writes_++;
        if (q_.size() > max_fill_) max_fill_ = q_.size();
        cv_.notify_all();
        return 0;
    }
    int read(af_beat* b) {
        std::unique_lock<std::mutex> l(m_);
        if (b->bytes != bytes_) errors_ += name_ + ": read buffer of " + std::to_string(b->bytes) + " bytes, port has " + std::to_string(bytes_) + "; ";
        const bool ok = cv_.wait_for(l, kWaitLimit, [&] { return closed_ || !q_.empty(); });
        if (!ok) errors_ += name_ + ": reader timed out; ";
        if (!ok || closed_) return 1;
        const beat& x = q_.front();
        std::memcpy(b->data, x.data.data(), std::min<std::size_t>(b->bytes, x.data.size()));
        b->keep = x.keep;
        b->last = x.last;
        q_.pop_front();
        reads_++;
        cv_.notify_all();
        return 0;
    }

    std::string name_;
    uint32_t bytes_;
    std::size_t depth_;
    std::mutex m_;
    std::condition_variable cv_;
    std::deque<beat> q_;
    std::vector<beat> log_;
    bool closed_ = false;
    std::size_t writes_ = 0, reads_ = 0, max_fill_ = 0;
    int blocked_writers_ = 0;
    std::string errors_;
};

// One kernel library, loaded the way the runtime loads it.
struct kernel_lib {
    std::string name, path, description;
    void* handle = nullptr;
    af_kernel_abi_version_fn abi_version = nullptr;
    af_kernel_ports_fn ports = nullptr;
    af_kernel_run_fn run = nullptr;
    af_kernel_error_fn error = nullptr;

    explicit kernel_lib(const std::string& spec) {
        // NAME=<lib.so>=<kernel.json>
        const auto a = spec.find('='), b = spec.find('=', a + 1);
        if (a == std::string::npos || b == std::string::npos) throw std::runtime_error("bad kernel argument " + spec);
        name = spec.substr(0, a);
        path = spec.substr(a + 1, b - a - 1);
        description = spec.substr(b + 1);
        const std::string abs = path[0] == '/' ? path : "./" + path;
        handle = dlopen(abs.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle) throw std::runtime_error("dlopen " + path + ": " + dlerror());
        abi_version = reinterpret_cast<af_kernel_abi_version_fn>(dlsym(handle, "af_kernel_abi_version"));
        ports = reinterpret_cast<af_kernel_ports_fn>(dlsym(handle, "af_kernel_ports"));
        run = reinterpret_cast<af_kernel_run_fn>(dlsym(handle, "af_kernel_run"));
        error = reinterpret_cast<af_kernel_error_fn>(dlsym(handle, "af_kernel_error"));
        if (!abi_version || !ports || !run || !error) throw std::runtime_error(path + " lacks an af_kernel_* symbol");
        if (abi_version() != AF_SIM_ABI_VERSION) throw std::runtime_error(path + ": ABI version " + std::to_string(abi_version()));
    }
};

inline af_arg scalar(const char* name, uint64_t v) {
    af_arg a{};
    a.name = name;
    a.kind = AF_ARG_SCALAR;
    a.scalar = v;
    return a;
}
inline af_arg memory(const char* name, void* p, uint64_t bytes) {
    af_arg a{};
    a.name = name;
    a.kind = AF_ARG_MEMORY;
    a.mem = p;
    a.mem_bytes = bytes;
    return a;
}
inline af_arg stream(const char* name, fifo& f) {
    af_arg a{};
    a.name = name;
    a.kind = AF_ARG_STREAM;
    a.stream = f.end();
    return a;
}

// Parses the NAME=<so>=<json> arguments after the mode.
inline std::map<std::string, kernel_lib*> load_kernels(int argc, char** argv, int first) {
    std::map<std::string, kernel_lib*> ks;
    for (int i = first; i < argc; i++) {
        auto* k = new kernel_lib(argv[i]);
        ks[k->name] = k;
    }
    return ks;
}

}  // namespace simtest

#endif  // AF_TEST_SIM_RUNTIME_H
