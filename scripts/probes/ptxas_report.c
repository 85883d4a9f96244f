// Prints NVIDIA's build log (ptxas registers, spills, local memory with -cl-nv-verbose) for programs of
// kernels/common.cl + kernels/linalg.cl, one per argument (the build options), e.g.
//   ptxas_report "-DT=float … -DTMMA=1 -DTM_SPLIT=1 -cl-nv-verbose"
// Build on the device: gcc -O1 -o ptxas_report scripts/probes/ptxas_report.c -lOpenCL (run from the repository root).
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static char *slurp(const char *p) { FILE *f = fopen(p, "rb"); fseek(f, 0, SEEK_END); long n = ftell(f); rewind(f); char *s = malloc(n + 1); size_t got = fread(s, 1, n, f); s[got] = 0; fclose(f); return s; }
int main(int argc, char **argv) {
    cl_platform_id plats[8]; cl_uint np = 0; clGetPlatformIDs(8, plats, &np);
    cl_device_id dev = 0;
    for (cl_uint i = 0; i < np && !dev; i++) { cl_uint nd; if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_GPU, 1, &dev, &nd) != CL_SUCCESS) dev = 0; }
    cl_int err; cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    char *common = slurp("kernels/common.cl"), *lin = slurp("kernels/linalg.cl");
    const char *srcs[2] = {common, lin};
    for (int a = 1; a < argc; a++) {
        cl_program p = clCreateProgramWithSource(ctx, 2, srcs, NULL, &err);
        err = clBuildProgram(p, 1, &dev, argv[a], NULL, NULL);
        size_t n = 0; clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
        char *log = malloc(n + 1); clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, n, log, NULL); log[n] = 0;
        printf("== %s: %d\n", argv[a], err);
        for (char *l = strtok(log, "\n"); l; l = strtok(NULL, "\n")) if (strstr(l, "mma") || strstr(l, "Used") || strstr(l, "spill") || strstr(l, "rror")) printf("%s\n", l);
        free(log); clReleaseProgram(p);
    }
    return 0;
}
