"""cuFFT (through PyTorch) at MRI sizes, the peer of `cliper-bench fft` in issue 30's table: batched 2-D complex64
transforms over coils and one 3-D volume. Prints: peer op shape ms (median of 3 runs of 20)."""
import statistics
import torch

dev = "cuda"


def bench(fn, reps=20, warm=3):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(3):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(reps):
            fn()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) / reps)
    return statistics.median(times)


print("device:", torch.cuda.get_device_name(0), "torch", torch.__version__, "cuFFT", torch.backends.cuda.cufft_plan_cache.max_size)
for shape, dims in [
    ((8, 320, 320), (-2, -1)),
    ((32, 320, 320), (-2, -1)),
    ((8, 384, 384), (-2, -1)),
    ((8, 448, 448), (-2, -1)),
    ((8, 640, 640), (-2, -1)),
    ((256, 256, 160), (-3, -2, -1)),
]:
    x = torch.randn(*shape, dtype=torch.complex64, device=dev)
    ms = bench(lambda: torch.fft.fftn(x, dim=dims))
    print(f"cufft fftn c64 {len(dims)}-D {'x'.join(map(str, shape))} {ms:.4f} ms", flush=True)
    del x
