"""cuFFT (through PyTorch) at MRI sizes, the peer of `cliper-bench fft` in issue 30's table: batched 2-D complex64
transforms over coils and one 3-D volume. Prints: peer op shape ms (median of 3 runs of 20)."""
import statistics

import torch
from cuda_timing import time_ms

dev = "cuda"


def bench(fn):
    # The median of three cuda_timing means of 20 calls.
    return statistics.median(time_ms(fn, reps=20) for _ in range(3))


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
