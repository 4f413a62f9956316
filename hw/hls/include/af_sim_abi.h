// The C ABI between an HLS kernel's C-simulation shared library (`sim` toolchain of
// hls_kernel) and the simulated device runtime that loads it (host/). Stable: the runtime
// dlopen()s `lib<kernel>.so`, reads its port list, and runs the kernel body once per start
// (ap_start .. ap_done), each kernel on its own thread. Streams are bounded FIFOs owned by
// the runtime; reads and writes block, so backpressure reaches the kernel as it would in
// hardware.
#ifndef AF_SIM_ABI_H
#define AF_SIM_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AF_SIM_ABI_VERSION 1

// One AXI-Stream beat crossing the ABI. `data` holds `bytes` bytes (the port's width / 8),
// byte 0 = tdata[7:0]. `keep` bit i = tkeep[i] for the first 64 bytes; `last` = tlast.
typedef struct af_beat {
    uint8_t* data;
    uint32_t bytes;
    uint64_t keep;
    uint8_t last;
} af_beat;

// Stream callbacks given by the runtime. Both block until they can complete and return 0;
// they return non-zero when the run is being torn down (the kernel must then return).
typedef struct af_stream {
    void* ctx;
    int (*read)(void* ctx, af_beat* beat);
    int (*write)(void* ctx, const af_beat* beat);
} af_stream;

// Kinds of kernel arguments, in the order of the kernel's C++ signature.
enum af_arg_kind {
    AF_ARG_SCALAR = 0,  // s_axilite scalar: `scalar` holds the value (zero-extended)
    AF_ARG_MEMORY = 1,  // m_axi pointer: `mem` / `mem_bytes` are the buffer in the bank
    AF_ARG_STREAM = 2,  // axis port: `stream` is the runtime's FIFO end
};

typedef struct af_arg {
    const char* name;
    int32_t kind;  // enum af_arg_kind
    uint64_t scalar;
    void* mem;
    uint64_t mem_bytes;
    af_stream stream;
} af_arg;

// Exported by every kernel library:
//   uint32_t    af_kernel_abi_version(void);      returns AF_SIM_ABI_VERSION
//   const char* af_kernel_ports(void);            JSON: [{"name","kind","dir","width","bundle"}...]
//                                                 (the same port list as the kernel's KernelInfo)
//   int32_t     af_kernel_run(const af_arg* args, uint32_t nargs);
//                                                 runs the body once; 0 on success, non-zero
//                                                 with a message from af_kernel_error()
//   const char* af_kernel_error(void);            last error of this thread, or ""
typedef uint32_t (*af_kernel_abi_version_fn)(void);
typedef const char* (*af_kernel_ports_fn)(void);
typedef int32_t (*af_kernel_run_fn)(const af_arg* args, uint32_t nargs);
typedef const char* (*af_kernel_error_fn)(void);

#ifdef __cplusplus
}
#endif

#endif  // AF_SIM_ABI_H
