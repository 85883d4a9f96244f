// Prints NVIDIA's build log (ptxas registers, spills, local memory with -cl-nv-verbose) for programs of
// kernels/common.cl + kernels/linalg.cl, one per argument (the build options), e.g.
//   ptxas_report "-DT=float … -DTMMA=1 -DTM_SPLIT=1 -cl-nv-verbose"
// Build on the device: gcc -O1 -o ptxas_report scripts/probes/ptxas_report.c -lOpenCL (run from the repository root).
#include "probe.h"
static char *slurp(const char *p) { FILE *f = fopen(p, "rb"); fseek(f, 0, SEEK_END); long n = ftell(f); rewind(f); char *s = malloc(n + 1); size_t got = fread(s, 1, n, f); s[got] = 0; fclose(f); return s; }
int main(int argc, char **argv) {
    cl_device_id dev = probe_device(CL_DEVICE_TYPE_GPU);
    cl_int err; cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    char *common = slurp("kernels/common.cl"), *lin = slurp("kernels/linalg.cl");
    const char *srcs[2] = {common, lin};
    for (int a = 1; a < argc; a++) {
        cl_program p = clCreateProgramWithSource(ctx, 2, srcs, NULL, &err);
        err = clBuildProgram(p, 1, &dev, argv[a], NULL, NULL);
        char *log = probe_build_log(p, dev);
        printf("== %s: %d\n", argv[a], err);
        for (char *l = strtok(log, "\n"); l; l = strtok(NULL, "\n")) if (strstr(l, "mma") || strstr(l, "Used") || strstr(l, "spill") || strstr(l, "rror")) printf("%s\n", l);
        free(log); clReleaseProgram(p);
    }
    return 0;
}
