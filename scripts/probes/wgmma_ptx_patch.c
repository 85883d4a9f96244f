// wgmma from OpenCL by patching PTX: the kernel's asm emits PTX comments that carry the operands
// ("// WGMMA_MMA {%f..}, %rd.., %rd.."), the program's PTX (its "binary" on NVIDIA) gets .target sm_90a and the
// comments turned into wgmma instructions, and clCreateProgramWithBinary builds that. Prints each step's status.
#include "probe.h"
static const char *src =
"__kernel __attribute__((reqd_work_group_size(128, 1, 1))) void probe(__global float* out, ulong da, ulong db) {\n"
"  float d0 = 0.0f, d1 = 0.0f, d2 = 0.0f, d3 = 0.0f;\n"
"  asm volatile(\"// WGMMA_FENCE\" ::: \"memory\");\n"
"  asm volatile(\"// WGMMA_MMA {%0,%1,%2,%3}, %4, %5\" : \"+f\"(d0), \"+f\"(d1), \"+f\"(d2), \"+f\"(d3) : \"l\"(da), \"l\"(db));\n"
"  asm volatile(\"// WGMMA_COMMIT\" ::: \"memory\");\n"
"  asm volatile(\"// WGMMA_WAIT\" ::: \"memory\");\n"
"  out[get_global_id(0)] = d0 + d1 + d2 + d3;\n"
"}\n";
int main(void) {
    cl_device_id dev = probe_device(CL_DEVICE_TYPE_GPU);
    cl_int err; cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    err = clBuildProgram(p, 1, &dev, "", NULL, NULL);
    printf("source build: %d\n", err);
    size_t size = 0; clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL);
    char *ptx = malloc(size + 1); clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof ptx, &ptx, NULL); ptx[size] = 0;
    for (char *l = strtok(strdup(ptx), "\n"); l; l = strtok(NULL, "\n")) if (strstr(l, ".target") || strstr(l, ".version") || strstr(l, "WGMMA")) printf("  ptx: %s\n", l);
    char *a = probe_replace_all(ptx, ".target sm_90", ".target sm_90a");
    char *b = probe_replace_all(a, "// WGMMA_FENCE", "wgmma.fence.sync.aligned;");
    char *c = probe_replace_all(b, "// WGMMA_COMMIT", "wgmma.commit_group.sync.aligned;");
    char *d = probe_replace_all(c, "// WGMMA_WAIT", "wgmma.wait_group.sync.aligned 0;");
    char *e = probe_replace_all(d, "// WGMMA_MMA", "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32");
    // The operand list then needs ", 1, 1, 1;" (scale-d as an immediate predicate is not allowed: use p).
    char *f = probe_replace_all(e, "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32", "{ .reg .pred wp; setp.ne.b32 wp, 1, 0; wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32");
    // Close each mma line: find the lines and append.
    char *g = malloc(strlen(f) * 2 + 1), *o = g;
    for (char *l = strtok(f, "\n"); l; l = strtok(NULL, "\n")) {
        o += sprintf(o, "%s%s\n", l, strstr(l, "wgmma.mma_async") ? ", wp, 1, 1; }" : "");
    }
    for (char *l = strtok(strdup(g), "\n"); l; l = strtok(NULL, "\n")) if (strstr(l, "wgmma") || strstr(l, ".target")) printf("  patched: %s\n", l);
    size_t gsize = strlen(g); const unsigned char *bin = (const unsigned char *)g; cl_int status;
    cl_program q = clCreateProgramWithBinary(ctx, 1, &dev, &gsize, &bin, &status, &err);
    printf("from patched PTX: create %d status %d\n", err, status);
    err = clBuildProgram(q, 1, &dev, "-cl-nv-verbose", NULL, NULL);
    char *log = probe_build_log(q, dev);
    printf("patched build: %d\n%s\n", err, log);
    if (err == CL_SUCCESS) {
        cl_kernel k = clCreateKernel(q, "probe", &err);
        printf("kernel: %d\n", err);
    }
    return 0;
}
