// A thin exception barrier around XRT's C API (libxrt_coreutil, XRT 2.13). XRT's C entry
// points let C++ exceptions escape (e.g. "XILINX_XRT not set" from xrtDeviceOpen), which
// would abort a Rust caller; every call here catches them and returns the message instead.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <sstream>
#include <string>

#include <xrt/xrt_bo.h>
#include <xrt/xrt_device.h>
#include <xrt/xrt_kernel.h>
#include <xrt/experimental/xrt_xclbin.h>

namespace {
void set_error(char* err, size_t len, const char* what) {
    if (err && len) {
        std::snprintf(err, len, "%s", what);
    }
}
}  // namespace

#define AF_GUARD(err, len, fail, body)              \
    try {                                           \
        body                                        \
    } catch (const std::exception& e) {             \
        set_error(err, len, e.what());              \
        return fail;                                \
    } catch (...) {                                 \
        set_error(err, len, "unknown C++ exception"); \
        return fail;                                \
    }

extern "C" {

// bdf == NULL: by index.
void* af_xrt_device_open(unsigned index, const char* bdf, char* err, size_t len) {
    AF_GUARD(err, len, nullptr, {
        xrtDeviceHandle h = bdf ? xrtDeviceOpenByBDF(bdf) : xrtDeviceOpen(index);
        if (!h) set_error(err, len, "XRT returned no device handle");
        return h;
    })
}

int af_xrt_device_close(void* dev) {
    try { return xrtDeviceClose(dev); } catch (...) { return -1; }
}

int af_xrt_load_xclbin(void* dev, const char* path, unsigned char* uuid, char* err, size_t len) {
    AF_GUARD(err, len, -1, {
        int rc = xrtDeviceLoadXclbinFile(dev, path);
        if (rc) { set_error(err, len, "xrtDeviceLoadXclbinFile failed"); return rc; }
        return xrtDeviceGetXclbinUUID(dev, uuid);
    })
}

void* af_xrt_bo_alloc(void* dev, size_t size, unsigned group, char* err, size_t len) {
    AF_GUARD(err, len, nullptr, {
        xrtBufferHandle b = xrtBOAlloc(dev, size, 0, group);
        if (!b) set_error(err, len, "xrtBOAlloc returned no buffer");
        return b;
    })
}

int af_xrt_bo_write(void* bo, const void* src, size_t size, size_t seek, char* err, size_t len) {
    AF_GUARD(err, len, -1, {
        int rc = xrtBOWrite(bo, src, size, seek);
        if (!rc) rc = xrtBOSync(bo, XCL_BO_SYNC_BO_TO_DEVICE, size, seek);
        return rc;
    })
}

int af_xrt_bo_read(void* bo, void* dst, size_t size, size_t skip, char* err, size_t len) {
    AF_GUARD(err, len, -1, {
        int rc = xrtBOSync(bo, XCL_BO_SYNC_BO_FROM_DEVICE, size, skip);
        if (!rc) rc = xrtBORead(bo, dst, size, skip);
        return rc;
    })
}

int af_xrt_bo_free(void* bo) {
    try { return xrtBOFree(bo); } catch (...) { return -1; }
}

// name = "kernel:{cu}"; exclusive access is what register read/write needs.
void* af_xrt_kernel_open(void* dev, const unsigned char* uuid, const char* name, int exclusive,
                         char* err, size_t len) {
    AF_GUARD(err, len, nullptr, {
        xrtKernelHandle k = exclusive ? xrtPLKernelOpenExclusive(dev, uuid, name)
                                      : xrtPLKernelOpen(dev, uuid, name);
        if (!k) set_error(err, len, "xrtPLKernelOpen returned no kernel");
        return k;
    })
}

int af_xrt_kernel_close(void* k) {
    try { return xrtKernelClose(k); } catch (...) { return -1; }
}

int af_xrt_read_register(void* k, uint32_t offset, uint32_t* value, char* err, size_t len) {
    AF_GUARD(err, len, -1, { return xrtKernelReadRegister(k, offset, value); })
}

int af_xrt_write_register(void* k, uint32_t offset, uint32_t value, char* err, size_t len) {
    AF_GUARD(err, len, -1, { return xrtKernelWriteRegister(k, offset, value); })
}

// The kernels, CUs, arguments and memories of an xclbin as XRT's own parser reads them
// (xrt::xclbin; no card needed), as lines of tab-separated fields:
//   mem   <index> <tag> <used>
//   cu    <kernel> <cu> <control: hs|chain|none|fa> <base address>
//   cuarg <cu> <index> <memory indices this CU's argument is connected to, comma-separated>
//   arg   <kernel> <index> <name> <host type> <size> <offset> <memory indices>
// Writes at most out_len bytes (NUL-terminated) and returns the length it needs, or -1.
long af_xrt_xclbin_metadata(const char* path, char* out, size_t out_len, char* err, size_t len) {
    AF_GUARD(err, len, -1L, {
        xrt::xclbin x{std::string(path)};
        std::ostringstream o;
        for (const auto& m : x.get_mems())
            o << "mem\t" << m.get_index() << '\t' << m.get_tag() << '\t' << (m.get_used() ? 1 : 0) << '\n';
        for (const auto& k : x.get_kernels()) {
            for (const auto& cu : k.get_cus()) {
                const char* ctrl = "hs";
                switch (cu.get_control_type()) {
                    case xrt::xclbin::ip::control_type::hs: ctrl = "hs"; break;
                    case xrt::xclbin::ip::control_type::chain: ctrl = "chain"; break;
                    case xrt::xclbin::ip::control_type::none: ctrl = "none"; break;
                    case xrt::xclbin::ip::control_type::fa: ctrl = "fa"; break;
                }
                o << "cu\t" << k.get_name() << '\t' << cu.get_name() << '\t' << ctrl << '\t'
                  << cu.get_base_address() << '\n';
                for (const auto& a : cu.get_args()) {
                    o << "cuarg\t" << cu.get_name() << '\t' << a.get_index() << '\t';
                    bool first = true;
                    for (const auto& m : a.get_mems()) {
                        o << (first ? "" : ",") << m.get_index();
                        first = false;
                    }
                    o << '\n';
                }
            }
            for (const auto& a : k.get_args()) {
                o << "arg\t" << k.get_name() << '\t' << a.get_index() << '\t' << a.get_name() << '\t'
                  << a.get_host_type() << '\t' << a.get_size() << '\t' << a.get_offset() << '\t';
                bool first = true;
                for (const auto& m : a.get_mems()) {
                    o << (first ? "" : ",") << m.get_index();
                    first = false;
                }
                o << '\n';
            }
        }
        std::string text = o.str();
        if (out && out_len) std::snprintf(out, out_len, "%s", text.c_str());
        return static_cast<long>(text.size());
    })
}

// args: index[i] is the argument's index in the kernel's metadata; kinds[i] 0 = scalar of
// sizes[i] bytes (4 or 8, values[i]), 1 = buffer (handles[i]). XRT's C API reads a
// scalar's variadic value by the size its metadata gives, so it is passed at that size.
void* af_xrt_run_start(void* k, uint32_t nargs, const uint32_t* index, const int* kinds,
                       const uint64_t* values, const uint32_t* sizes, void* const* handles,
                       char* err, size_t len) {
    AF_GUARD(err, len, nullptr, {
        xrtRunHandle r = xrtRunOpen(k);
        if (!r) { set_error(err, len, "xrtRunOpen failed"); return nullptr; }
        for (uint32_t i = 0; i < nargs; ++i) {
            int rc;
            if (kinds[i] == 1)
                rc = xrtRunSetArg(r, index[i], handles[i]);
            else if (sizes[i] == 8)
                rc = xrtRunSetArg(r, index[i], static_cast<uint64_t>(values[i]));
            else
                rc = xrtRunSetArg(r, index[i], static_cast<uint32_t>(values[i]));
            if (rc) { set_error(err, len, "xrtRunSetArg failed"); xrtRunClose(r); return nullptr; }
        }
        if (xrtRunStart(r)) { set_error(err, len, "xrtRunStart failed"); xrtRunClose(r); return nullptr; }
        return r;
    })
}

// The run's ert_cmd_state now, or -1.
int af_xrt_run_state(void* r, char* err, size_t len) {
    AF_GUARD(err, len, -1, { return static_cast<int>(xrtRunState(r)); })
}

// Returns the ert_cmd_state after waiting at most timeout_ms, or -1.
int af_xrt_run_wait(void* r, unsigned timeout_ms, char* err, size_t len) {
    AF_GUARD(err, len, -1, { return static_cast<int>(xrtRunWaitFor(r, timeout_ms)); })
}

int af_xrt_run_close(void* r) {
    try { return xrtRunClose(r); } catch (...) { return -1; }
}

}  // extern "C"
