// What one clEnqueueNDRangeKernel costs the host on a GPU's OpenCL driver, with and without asking for the
// command's event: a chain of small processes is bound by the driver's enqueue (issue 50 item 6: ≤ 8 µs per
// process), and cliper asks for an event at every command. Each line: microseconds per enqueue (host time of the
// loop, median of 7 rounds of N enqueues, the queue drained between rounds), on an in-order queue without
// profiling unless the line says otherwise.
#include "probe.h"
#include <time.h>

#define N 4000
#define ROUNDS 7
#define CHECK(x)                                                                                                   \
    do {                                                                                                           \
        cl_int e_ = (x);                                                                                           \
        if (e_ != CL_SUCCESS) {                                                                                    \
            fprintf(stderr, "%s failed: %d (line %d)\n", #x, e_, __LINE__);                                        \
            exit(1);                                                                                               \
        }                                                                                                          \
    } while (0)

static const char *SOURCE = "kernel void bump(global float *a, float s, uint n) {\n"
                            "    uint i = get_global_id(0);\n"
                            "    if (i < n) a[i] = a[i] * s + 1.0f;\n"
                            "}\n"
                            // cliper's conv_direct signature: 15 arguments, 384 bytes (int16, int4, four ulong8).
                            "kernel void wide(global const float *src, uint src_off, global float *dst, uint dst_off,\n"
                            "                 global const float *w, int16 geo, int4 start, ulong8 st, float value,\n"
                            "                 uint nd, ulong8 b_shape, ulong8 b_src, ulong8 b_dst, uint x_blocks,\n"
                            "                 uint groups) {\n"
                            "    uint i = get_global_id(0);\n"
                            "    if (i < groups) dst[dst_off + i] = src[src_off + i] * w[0] + value + (float)(geo.s0 + start.x\n"
                            "        + st.s0 + nd + b_shape.s0 + b_src.s0 + b_dst.s0 + x_blocks);\n"
                            "}\n";

/// The 15 arguments of `wide` (cliper's launch sets every one of them at each enqueue).
static void set_wide_args(cl_kernel k, cl_mem buf) {
    cl_uint zero = 0, groups = 256 * 272, x_blocks = 1;
    cl_int geo[16] = {0}, start[4] = {0};
    cl_ulong st[8] = {0}, b[8] = {0};
    float value = 0.0f;
    CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &buf));
    CHECK(clSetKernelArg(k, 1, sizeof(cl_uint), &zero));
    CHECK(clSetKernelArg(k, 2, sizeof(cl_mem), &buf));
    CHECK(clSetKernelArg(k, 3, sizeof(cl_uint), &zero));
    CHECK(clSetKernelArg(k, 4, sizeof(cl_mem), &buf));
    CHECK(clSetKernelArg(k, 5, sizeof geo, geo));
    CHECK(clSetKernelArg(k, 6, sizeof start, start));
    CHECK(clSetKernelArg(k, 7, sizeof st, st));
    CHECK(clSetKernelArg(k, 8, sizeof value, &value));
    CHECK(clSetKernelArg(k, 9, sizeof(cl_uint), &zero));
    CHECK(clSetKernelArg(k, 10, sizeof b, b));
    CHECK(clSetKernelArg(k, 11, sizeof b, b));
    CHECK(clSetKernelArg(k, 12, sizeof b, b));
    CHECK(clSetKernelArg(k, 13, sizeof(cl_uint), &x_blocks));
    CHECK(clSetKernelArg(k, 14, sizeof(cl_uint), &groups));
}

/// The `wide` kernel, built beside `bump`.
static cl_kernel WIDE;

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

enum mode { NO_EVENT, EVENT_RELEASED, EVENT_KEPT_ONE, EVENT_KEPT_ALL, ARGS_AND_EVENT, MARKER_EVERY_10, WIDE_SET_ONCE, WIDE_ARGS };
static const char *NAMES[] = {
    "no event (event = NULL)",
    "event asked for, released at once",
    "event asked for, the previous one released (one held, as an array's last write)",
    "event asked for, every one held until the round ends",
    "3 clSetKernelArg + event held as an array's last write (cliper's launch)",
    "no event, a marker event every 10 enqueues (one per process of 10 commands)",
    "15-argument kernel (384 bytes: conv_direct's), arguments set once, no event",
    "15-argument kernel, all 15 set before each enqueue, no event",
};

static double round_us(cl_command_queue q, cl_kernel k, enum mode m, cl_mem buf, size_t global) {
    static cl_event held[N];
    cl_event last = NULL;
    float s = 0.5f;
    cl_uint n = (cl_uint)global;
    double t0 = now_us();
    for (int i = 0; i < N; i++) {
        cl_event ev = NULL;
        if (m == ARGS_AND_EVENT) {
            CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &buf));
            CHECK(clSetKernelArg(k, 1, sizeof(float), &s));
            CHECK(clSetKernelArg(k, 2, sizeof(cl_uint), &n));
        }
        if (m == WIDE_ARGS) set_wide_args(WIDE, buf);
        const int wide = m == WIDE_SET_ONCE || m == WIDE_ARGS;
        cl_event *out = (m == NO_EVENT || m == MARKER_EVERY_10 || wide) ? NULL : &ev;
        CHECK(clEnqueueNDRangeKernel(q, wide ? WIDE : k, 1, NULL, &global, NULL, 0, NULL, out));
        switch (m) {
        case EVENT_RELEASED:
            clReleaseEvent(ev);
            break;
        case EVENT_KEPT_ONE:
        case ARGS_AND_EVENT:
            if (last) clReleaseEvent(last);
            last = ev;
            break;
        case EVENT_KEPT_ALL:
            held[i] = ev;
            break;
        case MARKER_EVERY_10:
            if (i % 10 == 9) {
                CHECK(clEnqueueMarkerWithWaitList(q, 0, NULL, &ev));
                if (last) clReleaseEvent(last);
                last = ev;
            }
            break;
        default:
            break;
        }
    }
    double t = (now_us() - t0) / N;
    CHECK(clFinish(q));
    if (last) clReleaseEvent(last);
    if (m == EVENT_KEPT_ALL)
        for (int i = 0; i < N; i++) clReleaseEvent(held[i]);
    return t;
}

// The first GPU, or with the argument `cpu` the first CPU device (PoCL).
int main(int argc, char **argv) {
    const int cpu = argc > 1 && strcmp(argv[1], "cpu") == 0;
    cl_device_id dev = probe_device(cpu ? CL_DEVICE_TYPE_CPU : CL_DEVICE_TYPE_GPU);
    char name[256], driver[256];
    clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
    clGetDeviceInfo(dev, CL_DRIVER_VERSION, sizeof driver, driver, NULL);
    printf("device: %s, driver %s; %d enqueues per round, median of %d rounds\n", name, driver, N, ROUNDS);
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &SOURCE, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));
    cl_kernel k = clCreateKernel(prog, "bump", &err);
    CHECK(err);
    size_t global = 256 * 272;
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, global * sizeof(float), NULL, &err);
    CHECK(err);
    float s = 0.5f;
    cl_uint n = (cl_uint)global;
    CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &buf));
    CHECK(clSetKernelArg(k, 1, sizeof(float), &s));
    CHECK(clSetKernelArg(k, 2, sizeof(cl_uint), &n));
    WIDE = clCreateKernel(prog, "wide", &err);
    CHECK(err);
    set_wide_args(WIDE, buf);
    for (int profiling = 0; profiling < 2; profiling++) {
        cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, profiling ? CL_QUEUE_PROFILING_ENABLE : 0, 0};
        cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, props, &err);
        CHECK(err);
        round_us(q, k, NO_EVENT, buf, global); // warm-up
        for (int m = 0; m < (int)(sizeof NAMES / sizeof *NAMES); m++) {
            double t[ROUNDS];
            for (int r = 0; r < ROUNDS; r++) t[r] = round_us(q, k, (enum mode)m, buf, global);
            qsort(t, ROUNDS, sizeof *t, by_value);
            printf("%s queue | %-80s | %6.2f us (min %.2f, max %.2f)\n", profiling ? "profiling" : "plain    ",
                   NAMES[m], t[ROUNDS / 2], t[0], t[ROUNDS - 1]);
        }
        clReleaseCommandQueue(q);
    }
    return 0;
}
