// What the device probes share (each still builds alone: gcc -O1 -o NAME scripts/probes/NAME.c -lOpenCL, which
// finds this header beside it): the device to probe, PTX text edits and a program's build log, and the OpenCL
// helpers of the mbarrier probes.
#ifndef CLIPER_PROBE_H
#define CLIPER_PROBE_H
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// The first device of `type` over the platforms (NVIDIA's GPU, or PoCL's CPU); the program ends when there is none.
static inline cl_device_id probe_device(cl_device_type type) {
    cl_platform_id platforms[8];
    cl_uint np = 0;
    clGetPlatformIDs(8, platforms, &np);
    cl_device_id dev = NULL;
    for (cl_uint p = 0; p < np && !dev; p++)
        if (clGetDeviceIDs(platforms[p], type, 1, &dev, NULL) != CL_SUCCESS) dev = NULL;
    if (!dev) {
        fprintf(stderr, "no %s device\n", type == CL_DEVICE_TYPE_CPU ? "CPU" : "GPU");
        exit(1);
    }
    return dev;
}

/// `s` with every occurrence of `from` replaced by `to` (a new string).
static inline char *probe_replace_all(const char *s, const char *from, const char *to) {
    size_t n = 0;
    for (const char *p = strstr(s, from); p; p = strstr(p + strlen(from), from)) n++;
    char *out = malloc(strlen(s) + n * (strlen(to) + 1) + 1), *o = out;
    for (const char *p = s;;) {
        const char *q = strstr(p, from);
        if (!q) {
            strcpy(o, p);
            break;
        }
        memcpy(o, p, q - p);
        o += q - p;
        strcpy(o, to);
        o += strlen(to);
        p = q + strlen(from);
    }
    return out;
}

/// The build log of `program` on `dev` (a new string, empty when there is none).
static inline char *probe_build_log(cl_program program, cl_device_id dev) {
    size_t n = 0;
    clGetProgramBuildInfo(program, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
    char *log = malloc(n + 1);
    clGetProgramBuildInfo(program, dev, CL_PROGRAM_BUILD_LOG, n, log, NULL);
    log[n] = 0;
    return log;
}

// OpenCL C for the mbarrier probes: a local pointer as the 32-bit shared-window address that PTX takes, and a
// wait for an mbarrier's phase of the given parity.
#define PROBE_MBARRIER_CL                                                                                          \
    "inline uint shared_address(__local const void* p) { return (uint)(size_t)p; }\n"                              \
    "inline void wait_parity(uint bar, uint parity) {\n"                                                           \
    "    uint done = 0;\n"                                                                                         \
    "    while (!done)\n"                                                                                          \
    "        asm volatile(\"{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, " \
    "0, p; }\"\n"                                                                                                  \
    "                     : \"=r\"(done) : \"r\"(bar), \"r\"(parity) : \"memory\");\n"                              \
    "}\n"
#endif
