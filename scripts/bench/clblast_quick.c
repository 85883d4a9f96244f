// CLBlast 1.5 on the `cliper-bench suite --quick` sizes, for the comparison on CPUs (PoCL), where the peer kit's
// clblast_bench (1024³–4096³ products) runs for a quarter of an hour. Our own harness: it declares the few
// CLBlast C functions it calls (values from CLBlast's clblast_c.h), so only the library is needed, not its
// development package.
//   cc -O2 scripts/bench/clblast_quick.c -o target/clblast_quick -l:libclblast.so.1 -l:libOpenCL.so.1
//   PLATFORM=Portable target/clblast_quick
// Prints one line per routine, `clblast op size ms GFLOP/s GB/s`: the median over three batches of the wall
// time of back-to-back calls followed by clFinish (the batch sized to about half a second), after one warm-up.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int Status;
enum { RowMajor = 101, TransposeNo = 111, TransposeYes = 112 };
Status CLBlastSgemm(int, int, int, size_t, size_t, size_t, float, cl_mem, size_t, size_t, cl_mem, size_t, size_t,
                    float, cl_mem, size_t, size_t, cl_command_queue *, cl_event *);
Status CLBlastDgemm(int, int, int, size_t, size_t, size_t, double, cl_mem, size_t, size_t, cl_mem, size_t, size_t,
                    double, cl_mem, size_t, size_t, cl_command_queue *, cl_event *);
Status CLBlastCgemm(int, int, int, size_t, size_t, size_t, cl_float2, cl_mem, size_t, size_t, cl_mem, size_t,
                    size_t, cl_float2, cl_mem, size_t, size_t, cl_command_queue *, cl_event *);
Status CLBlastSnrm2(size_t, cl_mem, size_t, cl_mem, size_t, size_t, cl_command_queue *, cl_event *);
Status CLBlastSdot(size_t, cl_mem, size_t, cl_mem, size_t, size_t, cl_mem, size_t, size_t, cl_command_queue *,
                   cl_event *);
Status CLBlastCdotc(size_t, cl_mem, size_t, cl_mem, size_t, size_t, cl_mem, size_t, size_t, cl_command_queue *,
                    cl_event *);
Status CLBlastSomatcopy(int, int, size_t, size_t, float, cl_mem, size_t, size_t, cl_mem, size_t, size_t,
                        cl_command_queue *, cl_event *);

static cl_context context;
static cl_command_queue queue;

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static cl_mem buffer(size_t bytes) {
    cl_int err;
    cl_mem m = clCreateBuffer(context, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (err != CL_SUCCESS) {
        fprintf(stderr, "clCreateBuffer(%zu bytes) failed: %d\n", bytes, err);
        exit(1);
    }
    float fill = 0.5f;
    clEnqueueFillBuffer(queue, m, &fill, sizeof fill, 0, bytes, 0, NULL, NULL);
    return m;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

// Times `call` (which returns a CLBlast status) and prints its line.
#define TIME(op, size, flops, bytes, call)                                                                      \
    do {                                                                                                        \
        Status s_ = (call);                                                                                     \
        clFinish(queue);                                                                                        \
        if (s_ != 0) {                                                                                          \
            printf("clblast %-10s %-16s failed with status %d\n", op, size, s_);                               \
            break;                                                                                              \
        }                                                                                                       \
        double t0_ = now();                                                                                     \
        (void)(call);                                                                                           \
        clFinish(queue);                                                                                        \
        double one_ = now() - t0_;                                                                              \
        int reps_ = one_ > 0.5 ? 1 : (int)(0.5 / one_) + 1;                                                     \
        double ms_[3];                                                                                          \
        for (int b_ = 0; b_ < 3; b_++) {                                                                        \
            double start_ = now();                                                                              \
            for (int r_ = 0; r_ < reps_; r_++) (void)(call);                                                    \
            clFinish(queue);                                                                                    \
            ms_[b_] = (now() - start_) / reps_ * 1e3;                                                           \
        }                                                                                                       \
        qsort(ms_, 3, sizeof ms_[0], compare);                                                                  \
        printf("clblast %-10s %-16s %10.4f ms %10.1f GFLOP/s %9.1f GB/s\n", op, size, ms_[1],                   \
               (flops) / ms_[1] / 1e6, (bytes) / ms_[1] / 1e6);                                                 \
        fflush(stdout);                                                                                         \
    } while (0)

int main(void) {
    cl_platform_id platforms[8];
    cl_uint count = 0;
    cl_device_id device = NULL;
    const char *want = getenv("PLATFORM");
    clGetPlatformIDs(8, platforms, &count);
    for (cl_uint i = 0; i < count && !device; i++) {
        char name[256] = "";
        clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (want && !strstr(name, want)) continue;
        if (clGetDeviceIDs(platforms[i], CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS) device = NULL;
        if (device) printf("platform: %s\n", name);
    }
    if (!device) {
        fprintf(stderr, "no OpenCL device%s%s\n", want ? " on a platform named like " : "", want ? want : "");
        return 1;
    }
    char name[256] = "";
    clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof name, name, NULL);
    printf("device: %s\n", name);
    context = clCreateContext(NULL, 1, &device, NULL, NULL, NULL);
    queue = clCreateCommandQueue(context, device, 0, NULL);
    char size[64];

    const size_t sgemm[] = {512, 1024, 2048};
    for (int i = 0; i < 3; i++) {
        size_t n = sgemm[i];
        cl_mem a = buffer(n * n * 4), b = buffer(n * n * 4), c = buffer(n * n * 4);
        snprintf(size, sizeof size, "%zux%zux%zu", n, n, n);
        TIME("sgemm", size, 2.0 * n * n * n, 12.0 * n * n,
             CLBlastSgemm(RowMajor, TransposeNo, TransposeNo, n, n, n, 1.0f, a, 0, n, b, 0, n, 0.0f, c, 0, n, &queue,
                          NULL));
        clReleaseMemObject(a), clReleaseMemObject(b), clReleaseMemObject(c);
    }
    const size_t cgemm[] = {256, 1024};
    for (int i = 0; i < 2; i++) {
        size_t n = cgemm[i];
        cl_mem a = buffer(n * n * 8), b = buffer(n * n * 8), c = buffer(n * n * 8);
        cl_float2 one = {{1.0f, 0.0f}}, zero = {{0.0f, 0.0f}};
        snprintf(size, sizeof size, "%zux%zux%zu", n, n, n);
        TIME("cgemm", size, 8.0 * n * n * n, 24.0 * n * n,
             CLBlastCgemm(RowMajor, TransposeNo, TransposeNo, n, n, n, one, a, 0, n, b, 0, n, zero, c, 0, n, &queue,
                          NULL));
        clReleaseMemObject(a), clReleaseMemObject(b), clReleaseMemObject(c);
    }
    {
        size_t n = 1024;
        cl_mem a = buffer(n * n * 8), b = buffer(n * n * 8), c = buffer(n * n * 8);
        snprintf(size, sizeof size, "%zux%zux%zu", n, n, n);
        TIME("dgemm", size, 2.0 * n * n * n, 24.0 * n * n,
             CLBlastDgemm(RowMajor, TransposeNo, TransposeNo, n, n, n, 1.0, a, 0, n, b, 0, n, 0.0, c, 0, n, &queue,
                          NULL));
        clReleaseMemObject(a), clReleaseMemObject(b), clReleaseMemObject(c);
    }
    {
        size_t n = (size_t)1 << 22;
        cl_mem x = buffer(n * 4), y = buffer(n * 4), r = buffer(64);
        snprintf(size, sizeof size, "%zu", n);
        TIME("snrm2", size, 2.0 * n, 4.0 * n, CLBlastSnrm2(n, r, 0, x, 0, 1, &queue, NULL));
        TIME("sdot", size, 2.0 * n, 8.0 * n, CLBlastSdot(n, r, 0, x, 0, 1, y, 0, 1, &queue, NULL));
        snprintf(size, sizeof size, "%zu", n / 2);
        TIME("cdotc", size, 8.0 * (n / 2), 8.0 * n, CLBlastCdotc(n / 2, r, 0, x, 0, 1, y, 0, 1, &queue, NULL));
        clReleaseMemObject(x), clReleaseMemObject(y), clReleaseMemObject(r);
    }
    {
        size_t n = 2048;
        cl_mem a = buffer(n * n * 4), b = buffer(n * n * 4);
        snprintf(size, sizeof size, "%zux%zu", n, n);
        TIME("somatcopyT", size, 0.0, 8.0 * n * n,
             CLBlastSomatcopy(RowMajor, TransposeYes, n, n, 1.0f, a, 0, n, b, 0, n, &queue, NULL));
        clReleaseMemObject(a), clReleaseMemObject(b);
    }
    return 0;
}
