// How fast an SM's local memory fills from L2 (issue 50 item 1): gemm_wgmma is bound by its operand copies
// (cp.async, 16 bytes per work-item: 25.8 GB in 7.8 ms at 8192³, ~3.3 TB/s, and more buffers did not help).
// Hopper's bulk copy (cp.async.bulk, one instruction per contiguous run, completed on an mbarrier) does not go
// through the work-items' load path. This probe moves the same bytes both ways, as gemm_wgmma's turns do:
// every work-group of THREADS work-items streams TURNS slices of SLICE bytes through STAGES local buffers, each
// slice waited for and followed by a barrier, from a region of REGION bytes (small enough to stay in L2, or
// larger), and prints GB/s by the command's profiled time. One group per SM and two.
#include "probe.h"

static const char *SOURCE =
    "#define STR(x) #x\n#define XSTR(x) STR(x)\n"
    PROBE_MBARRIER_CL
    // Slice t of this group: a run of SLICE bytes somewhere in the region (groups and turns spread over it).
    "inline ulong slice_at(uint group, uint t, ulong slices) { return ((ulong)group * 7919u + (ulong)t * 131u) % slices; }\n"
    "__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1)))\n"
    "void by_bulk(__global const uchar* in, ulong slices, __global uint* out) {\n"
    "    __local uint4 buffers[STAGES * SLICE / 16];\n"
    "    __local ulong bars[STAGES];\n"
    "    const uint t = get_local_id(0), g = get_group_id(0);\n"
    "    const uint base = shared_address(buffers);\n"
    "    if (t == 0) {\n"
    "        for (uint s = 0; s < STAGES; s++) asm volatile(\"mbarrier.init.shared::cta.b64 [%0], 1;\" :: \"r\"(shared_address(bars + s)) : \"memory\");\n"
    "        asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\");\n"
    "    }\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "#define FETCH(turn) do { const uint b_ = (turn) % STAGES, bar_ = shared_address(bars + b_); \\\n"
    "        asm volatile(\"{ .reg .b64 s; mbarrier.arrive.expect_tx.shared::cta.b64 s, [%0], %1; }\" :: \"r\"(bar_), \"r\"(SLICE) : \"memory\"); \\\n"
    "        for (uint c_ = 0; c_ < SLICE; c_ += PIECE) \\\n"
    "            asm volatile(\"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\" \\\n"
    "                         :: \"r\"(base + b_ * SLICE + c_), \"l\"((ulong)(in + slice_at(g, (turn), slices) * SLICE + c_)), \"r\"(PIECE), \"r\"(bar_) : \"memory\"); \\\n"
    "    } while (0)\n"
    "    if (t == 0) for (uint s = 0; s < STAGES - 1 && s < TURNS; s++) FETCH(s);\n"
    "    uint sum = 0;\n"
    "    for (uint turn = 0; turn < TURNS; turn++) {\n"
    "        wait_parity(shared_address(bars + turn % STAGES), (turn / STAGES) & 1);\n"
    "        sum += ((__local const uint*)buffers)[(turn % STAGES) * (SLICE / 4) + t];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        if (t == 0 && turn + STAGES - 1 < TURNS) FETCH(turn + STAGES - 1);\n"
    "    }\n"
    "    out[get_global_id(0)] = sum;\n"
    "}\n"
    "__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1)))\n"
    "void by_cp_async(__global const uchar* in, ulong slices, __global uint* out) {\n"
    "    __local uint4 buffers[STAGES * SLICE / 16];\n"
    "    const uint t = get_local_id(0), g = get_group_id(0);\n"
    "    const uint base = shared_address(buffers);\n"
    "#define COPY(turn) do { const uint b_ = (turn) % STAGES; __global const uchar* src_ = in + slice_at(g, (turn), slices) * SLICE; \\\n"
    "        for (uint c_ = t * 16; c_ < SLICE; c_ += THREADS * 16) \\\n"
    "            asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16;\" :: \"r\"(base + b_ * SLICE + c_), \"l\"((ulong)(src_ + c_)) : \"memory\"); \\\n"
    "        asm volatile(\"cp.async.commit_group;\" ::: \"memory\"); \\\n"
    "    } while (0)\n"
    "    for (uint s = 0; s < STAGES - 1; s++) COPY(s);\n"
    "    uint sum = 0;\n"
    "    for (uint turn = 0; turn < TURNS; turn++) {\n"
    "        asm volatile(\"cp.async.wait_group \" XSTR(WAIT) \";\" ::: \"memory\");\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        sum += ((__local const uint*)buffers)[(turn % STAGES) * (SLICE / 4) + t];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        COPY(turn + STAGES - 1);\n"
    "    }\n"
    "    out[get_global_id(0)] = sum;\n"
    "}\n";

static cl_device_id DEVICE;
static cl_context CONTEXT;
static cl_command_queue QUEUE;

/// GB/s of `name` built with the given shape, over `groups` work-groups, best of 5.
static double rate(const char *name, int threads, int stages, int slice, int piece, int turns, size_t region,
                   size_t groups, cl_mem in, cl_mem out) {
    char options[256];
    snprintf(options, sizeof options, "-DTHREADS=%d -DSTAGES=%d -DSLICE=%d -DPIECE=%d -DTURNS=%d -DWAIT=%d", threads,
             stages, slice, piece, turns, stages - 2);
    cl_int err;
    cl_program p = clCreateProgramWithSource(CONTEXT, 1, &SOURCE, NULL, &err);
    err = clBuildProgram(p, 1, &DEVICE, options, NULL, NULL);
    if (err) {
        char *log = probe_build_log(p, DEVICE);
        printf("build %s: %d\n%s\n", options, err, log);
        return 0;
    }
    cl_kernel k = clCreateKernel(p, name, &err);
    cl_ulong slices = region / slice;
    clSetKernelArg(k, 0, sizeof in, &in);
    clSetKernelArg(k, 1, sizeof slices, &slices);
    clSetKernelArg(k, 2, sizeof out, &out);
    size_t global = groups * threads, local = threads;
    double best = 1e30;
    for (int r = 0; r < 6; r++) {
        cl_event e;
        err = clEnqueueNDRangeKernel(QUEUE, k, 1, NULL, &global, &local, 0, NULL, &e);
        if (err) { printf("%s enqueue: %d\n", name, err); return 0; }
        clWaitForEvents(1, &e);
        cl_ulong a, b;
        clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof a, &a, NULL);
        clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof b, &b, NULL);
        clReleaseEvent(e);
        if (r > 0 && b - a < best) best = (double)(b - a);
    }
    clReleaseKernel(k);
    clReleaseProgram(p);
    double bytes = (double)groups * turns * slice;
    return bytes / best; // bytes per ns = GB/s
}

int main(void) {
    DEVICE = probe_device(CL_DEVICE_TYPE_GPU);
    cl_int err;
    CONTEXT = clCreateContext(NULL, 1, &DEVICE, NULL, NULL, &err);
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    QUEUE = clCreateCommandQueueWithProperties(CONTEXT, DEVICE, props, &err);
    cl_uint sms = 0;
    clGetDeviceInfo(DEVICE, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof sms, &sms, NULL);
    size_t big = (size_t)1 << 30;
    cl_mem in = clCreateBuffer(CONTEXT, CL_MEM_READ_WRITE, big, NULL, &err);
    cl_uchar zero = 1;
    clEnqueueFillBuffer(QUEUE, in, &zero, 1, 0, big, 0, NULL, NULL);
    cl_mem out = clCreateBuffer(CONTEXT, CL_MEM_READ_WRITE, (size_t)4 * sms * 1024, NULL, &err);
    clFinish(QUEUE);
    printf("%u compute units; GB/s by profiled time, best of 5 (turns of one slice each, a barrier per turn)\n", sms);
    const int turns = 2048;
    // gemm_wgmma's 192 × 256 × 8 slice: 14 KiB (A 6 KiB + B 8 KiB), 384 work-items, 3 buffers.
    struct { int threads, stages, slice, piece; } shapes[] = {
        {384, 3, 14336, 14336}, {384, 3, 14336, 7168}, {384, 6, 14336, 14336}, {384, 3, 28672, 14336},
        {256, 4, 12288, 12288}, {256, 8, 12288, 12288}, {128, 4, 8192, 8192},
    };
    size_t regions[] = {(size_t)16 << 20, (size_t)1 << 30};
    for (size_t ri = 0; ri < 2; ri++) {
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
            int th = shapes[si].threads, st = shapes[si].stages, sl = shapes[si].slice, pc = shapes[si].piece;
            if ((size_t)st * sl > 200 * 1024) continue;
            for (int per = 1; per <= 2; per++) {
                if ((size_t)per * st * sl > 220 * 1024) continue;
                double bulk = rate("by_bulk", th, st, sl, pc, turns, regions[ri], (size_t)per * sms, in, out);
                double cpa = rate("by_cp_async", th, st, sl, pc, turns, regions[ri], (size_t)per * sms, in, out);
                printf("region %5zu MiB, %d items, %d × %5d B buffers (bulk pieces %5d B), %d group(s) per SM: "
                       "bulk %7.0f GB/s, cp.async %7.0f GB/s\n",
                       regions[ri] >> 20, th, st, sl, pc, per, bulk, cpa);
            }
        }
    }
    return 0;
}
