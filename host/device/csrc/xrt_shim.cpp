// A thin exception barrier around XRT's C API (libxrt_coreutil, XRT 2.13). XRT's C entry
// points let C++ exceptions escape (e.g. "XILINX_XRT not set" from xrtDeviceOpen), which
// would abort a Rust caller; every call here catches them and returns the message instead.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>

#include <xrt/xrt_bo.h>
#include <xrt/xrt_device.h>
#include <xrt/xrt_kernel.h>

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

// args: kinds[i] 0 = scalar (values[i]), 1 = buffer (handles[i]).
void* af_xrt_run_start(void* k, uint32_t nargs, const int* kinds, const uint64_t* values,
                       void* const* handles, char* err, size_t len) {
    AF_GUARD(err, len, nullptr, {
        xrtRunHandle r = xrtRunOpen(k);
        if (!r) { set_error(err, len, "xrtRunOpen failed"); return nullptr; }
        for (uint32_t i = 0; i < nargs; ++i) {
            int rc = kinds[i] == 1 ? xrtRunSetArg(r, i, handles[i]) : xrtRunSetArg(r, i, values[i]);
            if (rc) { set_error(err, len, "xrtRunSetArg failed"); xrtRunClose(r); return nullptr; }
        }
        if (xrtRunStart(r)) { set_error(err, len, "xrtRunStart failed"); xrtRunClose(r); return nullptr; }
        return r;
    })
}

// Returns the ert_cmd_state after waiting at most timeout_ms, or -1.
int af_xrt_run_wait(void* r, unsigned timeout_ms, char* err, size_t len) {
    AF_GUARD(err, len, -1, { return static_cast<int>(xrtRunWaitFor(r, timeout_ms)); })
}

int af_xrt_run_close(void* r) {
    try { return xrtRunClose(r); } catch (...) { return -1; }
}

}  // extern "C"
