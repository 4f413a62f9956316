/* A tiny HLS-style kernel library written directly against af_sim_abi.h: out = in + bias
 * byte-wise, until a beat with TLAST; the loader test compiles it. */
#include <stdio.h>
#include <string.h>
#include "af_sim_abi.h"

static __thread char error[256];

uint32_t af_kernel_abi_version(void) { return AF_SIM_ABI_VERSION; }

const char* af_kernel_ports(void) {
    return "[{\"name\": \"ap_clk\", \"kind\": \"clock\", \"dir\": \"in\", \"width\": 1},"
           " {\"name\": \"s_axi_control\", \"kind\": \"axilite\", \"dir\": \"in\", \"width\": 32, \"bundle\": \"control\"},"
           " {\"name\": \"in\", \"kind\": \"axis\", \"dir\": \"in\", \"width\": 64},"
           " {\"name\": \"out\", \"kind\": \"axis\", \"dir\": \"out\", \"width\": 64}]";
}

const char* af_kernel_error(void) { return error; }

static const af_arg* find(const af_arg* args, uint32_t n, const char* name) {
    for (uint32_t i = 0; i < n; i++)
        if (args[i].name && strcmp(args[i].name, name) == 0) return &args[i];
    snprintf(error, sizeof error, "argument '%s' was not passed", name);
    return 0;
}

int32_t af_kernel_run(const af_arg* args, uint32_t nargs) {
    const af_arg* bias = find(args, nargs, "bias");
    const af_arg* in = find(args, nargs, "in");
    const af_arg* out = find(args, nargs, "out");
    if (!bias || !in || !out) return 1;
    uint8_t buf[8];
    for (;;) {
        af_beat b = {buf, 8, 0, 0};
        if (in->stream.read(in->stream.ctx, &b)) { snprintf(error, sizeof error, "teardown"); return 1; }
        for (int i = 0; i < 8; i++) buf[i] = (uint8_t)(buf[i] + bias->scalar);
        if (out->stream.write(out->stream.ctx, &b)) { snprintf(error, sizeof error, "teardown"); return 1; }
        if (b.last) return 0;
    }
}
