// Thread-block clusters and bulk copies from OpenCL on Hopper (issue 50 item 1): gemm_wgmma is bound by moving
// its operands from L2 into local memory (cp.async, 16 bytes a work-item), and cuBLAS halves that traffic with
// clusters of two blocks that share one operand through a multicast bulk copy. OpenCL has no cluster launch, so
// this probe asks whether a cluster declared in the PTX itself (`.reqnctapercluster`, added to the program's PTX
// as src/app/ptx_patch.rs adds sm_90a) is honoured by clEnqueueNDRangeKernel, and whether the copies work:
//   1. ranks: %cluster_ctarank, %cluster_nctarank and %clusterid.x of each work-group, without and with the
//      patched cluster shape (2, 1, 1);
//   2. bulk: cp.async.bulk (one 1-D copy of 8 KiB global → local, completed on an mbarrier), then local → out;
//   3. multicast: in a cluster of two, rank r copies half r of 8 KiB into the local memory of both blocks
//      (.multicast::cluster, mask 0b11); each block waits on its own mbarrier and writes what it received.
// Each line says what ran and whether the data came back right.
#include "probe.h"

#define WORDS 2048 /* 8 KiB of uint */
#define GROUPS 8

static const char *SOURCE =
    PROBE_MBARRIER_CL
    "inline uint special(uint which) {\n"
    "    uint v = 0;\n"
    "    if (which == 0) asm volatile(\"mov.u32 %0, %%cluster_ctarank;\" : \"=r\"(v));\n"
    "    if (which == 1) asm volatile(\"mov.u32 %0, %%cluster_nctarank;\" : \"=r\"(v));\n"
    "    if (which == 2) asm volatile(\"mov.u32 %0, %%clusterid.x;\" : \"=r\"(v));\n"
    "    return v;\n"
    "}\n"
    "__kernel __attribute__((reqd_work_group_size(128, 1, 1))) void ranks(__global uint* out) {\n"
    "    if (get_local_id(0) == 0) {\n"
    "        const uint g = get_group_id(0);\n"
    "        out[3 * g] = special(0); out[3 * g + 1] = special(1); out[3 * g + 2] = special(2);\n"
    "    }\n"
    "}\n"
        "inline void init_barrier(uint bar) {\n"
    "    asm volatile(\"mbarrier.init.shared::cta.b64 [%0], 1;\" :: \"r\"(bar) : \"memory\");\n"
    "    asm volatile(\"fence.mbarrier_init.release.cluster;\" ::: \"memory\");\n"
    "}\n"
    "inline void expect_bytes(uint bar, uint bytes) {\n"
    "    asm volatile(\"{ .reg .b64 s; mbarrier.arrive.expect_tx.shared::cta.b64 s, [%0], %1; }\" :: \"r\"(bar), \"r\"(bytes) : \"memory\");\n"
    "}\n"
    "__kernel __attribute__((reqd_work_group_size(128, 1, 1))) void bulk(__global const uint* in, __global uint* out) {\n"
    "    __local uint4 data[WORDS / 4];\n"
    "    __local ulong bar_store[1];\n"
    "    const uint t = get_local_id(0), g = get_group_id(0);\n"
    "    const uint bar = shared_address(bar_store), dst = shared_address(data);\n"
    "    if (t == 0) init_barrier(bar);\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    if (t == 0) {\n"
    "        expect_bytes(bar, WORDS * 4);\n"
    "        asm volatile(\"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\"\n"
    "                     :: \"r\"(dst), \"l\"((ulong)(in + g * WORDS)), \"r\"(WORDS * 4), \"r\"(bar) : \"memory\");\n"
    "    }\n"
    "    wait_parity(bar, 0);\n"
    "    __local const uint* words = (__local const uint*)data;\n"
    "    for (uint i = t; i < WORDS; i += 128) out[g * WORDS + i] = words[i];\n"
    "}\n"
    "__kernel __attribute__((reqd_work_group_size(128, 1, 1))) void multicast(__global const uint* in, __global uint* out) {\n"
    "    __local uint4 data[WORDS / 4];\n"
    "    __local ulong bar_store[1];\n"
    "    const uint t = get_local_id(0), g = get_group_id(0), rank = special(0), cluster = special(2);\n"
    "    const uint bar = shared_address(bar_store), dst = shared_address(data);\n"
    "    if (t == 0) { init_barrier(bar); expect_bytes(bar, WORDS * 4); }\n"
    "    // Both blocks' barriers are set up before either copy lands in the other.\n"
    "    asm volatile(\"barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;\" ::: \"memory\");\n"
    "    if (t == 0) {\n"
    "        const uint half_bytes = WORDS * 2;\n"
    "        asm volatile(\"//@sm90a { .reg .b16 m; mov.b16 m, 3; cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1], %2, [%3], m; }\"\n"
    "                     :: \"r\"(dst + rank * half_bytes), \"l\"((ulong)(in + cluster * WORDS + rank * (WORDS / 2))), \"r\"(half_bytes), \"r\"(bar) : \"memory\");\n"
    "    }\n"
    "    wait_parity(bar, 0);\n"
    "    __local const uint* words = (__local const uint*)data;\n"
    "    for (uint i = t; i < WORDS; i += 128) out[g * WORDS + i] = words[i];\n"
    "    // Neither block leaves while the other may still write into it.\n"
    "    asm volatile(\"barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;\" ::: \"memory\");\n"
    "}\n";

static cl_device_id DEVICE;
static cl_context CONTEXT;
static cl_command_queue QUEUE;

static void fail(const char *what, cl_int err) {
    fprintf(stderr, "%s failed: %d\n", what, err);
    exit(1);
}

static void print_log(cl_program p) {
    char *log = probe_build_log(p, DEVICE);
    if (strlen(log) > 0) printf("  build log: %s\n", log);
    free(log);
}

/// The program from source; with `cluster` its PTX gets .target sm_90a, the marked lines as instructions and
/// `.reqnctapercluster 2, 1, 1` after every `.reqntid` line, and is built again from that text.
static cl_program build(int cluster) {
    cl_int err;
    char options[64];
    snprintf(options, sizeof options, "-DWORDS=%d", WORDS);
    cl_program p = clCreateProgramWithSource(CONTEXT, 1, &SOURCE, NULL, &err);
    if (err) fail("clCreateProgramWithSource", err);
    err = clBuildProgram(p, 1, &DEVICE, options, NULL, NULL);
    printf("source build: %d\n", err);
    if (err) { print_log(p); exit(1); }
    if (!cluster) return p;
    size_t size = 0;
    clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL);
    char *ptx = malloc(size + 1);
    clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof ptx, &ptx, NULL);
    ptx[size] = 0;
    char *a = probe_replace_all(ptx, ".target sm_90", ".target sm_90a");
    char *b = probe_replace_all(a, "//@sm90a ", "");
    char *c = probe_replace_all(b, ".reqntid 128, 1, 1", ".reqntid 128, 1, 1\n.reqnctapercluster 2, 1, 1");
    for (char *l = strtok(strdup(c), "\n"); l; l = strtok(NULL, "\n"))
        if (strstr(l, ".target") || strstr(l, ".version") || strstr(l, ".reqn") || strstr(l, ".entry") ||
            strstr(l, "multicast"))
            printf("  ptx: %s\n", l);
    size_t csize = strlen(c);
    const unsigned char *bin = (const unsigned char *)c;
    cl_int status;
    cl_program q = clCreateProgramWithBinary(CONTEXT, 1, &DEVICE, &csize, &bin, &status, &err);
    printf("patched program: create %d, status %d\n", err, status);
    if (err) exit(1);
    err = clBuildProgram(q, 1, &DEVICE, "", NULL, NULL);
    printf("patched build: %d\n", err);
    print_log(q);
    if (err) exit(1);
    return q;
}

/// Runs `name` on GROUPS groups of 128 with (in, out) or (out) and returns out (`words` uints).
static cl_uint *run(cl_program p, const char *name, const cl_uint *input, size_t words) {
    cl_int err;
    cl_kernel k = clCreateKernel(p, name, &err);
    if (err) fail(name, err);
    size_t bytes = words * sizeof(cl_uint);
    cl_mem out = clCreateBuffer(CONTEXT, CL_MEM_READ_WRITE, bytes, NULL, &err);
    cl_uint fill = 0xdeadbeef;
    clEnqueueFillBuffer(QUEUE, out, &fill, sizeof fill, 0, bytes, 0, NULL, NULL);
    cl_mem in = NULL;
    if (input) {
        in = clCreateBuffer(CONTEXT, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, (void *)input, &err);
        clSetKernelArg(k, 0, sizeof in, &in);
        clSetKernelArg(k, 1, sizeof out, &out);
    } else {
        clSetKernelArg(k, 0, sizeof out, &out);
    }
    size_t global = GROUPS * 128, local = 128;
    err = clEnqueueNDRangeKernel(QUEUE, k, 1, NULL, &global, &local, 0, NULL, NULL);
    printf("%s: enqueue %d", name, err);
    cl_uint *host = malloc(bytes);
    err = clEnqueueReadBuffer(QUEUE, out, CL_TRUE, 0, bytes, host, 0, NULL, NULL);
    printf(", read %d\n", err);
    clReleaseMemObject(out);
    if (in) clReleaseMemObject(in);
    clReleaseKernel(k);
    return host;
}

static void print_ranks(cl_uint *r) {
    for (int g = 0; g < GROUPS; g++) printf("  group %d: ctarank %u of %u, cluster %u\n", g, r[3 * g], r[3 * g + 1], r[3 * g + 2]);
}

int main(void) {
    DEVICE = probe_device(CL_DEVICE_TYPE_GPU);
    cl_int err;
    CONTEXT = clCreateContext(NULL, 1, &DEVICE, NULL, NULL, &err);
    QUEUE = clCreateCommandQueueWithProperties(CONTEXT, DEVICE, NULL, &err);
    cl_uint *input = malloc(GROUPS * WORDS * sizeof(cl_uint));
    for (cl_uint i = 0; i < GROUPS * WORDS; i++) input[i] = i * 2654435761u;

    printf("== without a cluster shape\n");
    cl_program plain = build(0);
    print_ranks(run(plain, "ranks", NULL, 3 * GROUPS));
    cl_uint *copied = run(plain, "bulk", input, GROUPS * WORDS);
    printf("bulk copy: %s\n", memcmp(copied, input, GROUPS * WORDS * sizeof(cl_uint)) ? "WRONG" : "right");

    printf("== with .reqnctapercluster 2, 1, 1 in the PTX\n");
    cl_program clustered = build(1);
    print_ranks(run(clustered, "ranks", NULL, 3 * GROUPS));
    cl_uint *shared = run(clustered, "multicast", input, GROUPS * WORDS);
    // Each block of cluster c should hold the cluster's own 8 KiB (in[c·WORDS ..]): half 0 from rank 0's copy,
    // half 1 from rank 1's.
    int wrong = 0;
    for (int g = 0; g < GROUPS; g++)
        for (int i = 0; i < WORDS; i++)
            if (shared[g * WORDS + i] != input[(g / 2) * WORDS + i]) wrong++;
    printf("multicast: %d of %d words wrong (cluster id taken as group / 2)\n", wrong, GROUPS * WORDS);
    return 0;
}
