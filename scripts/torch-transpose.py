"""Times PyTorch's transpose-and-copy (a.t().contiguous()) on the GPU, the way peer_torch.py does, for the
sizes cliper-bench uses. Prints: peer op size ms GB/s."""
import os, sys
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "bench"))
from cuda_timing import time_ms  # noqa: E402


def bench(fn, reps=20, warm=3):
    return time_ms(fn, reps, warm)


for dtype, name in ((torch.float32, "f32"), (torch.float64, "f64"), (torch.complex64, "c32")):
    a = torch.rand(16384, 16384, device="cuda").to(dtype)
    ms = bench(lambda: a.t().contiguous())
    print(f"torch   transpose {name}  16384x16384 {ms:9.4f} ms {2 * a.numel() * a.element_size() / ms / 1e6:8.1f} GB/s")
    del a
b = torch.rand(256, 512, 512, device="cuda")
ms = bench(lambda: b.transpose(1, 2).contiguous())
print(f"torch   transpose f32  256x512x512 {ms:9.4f} ms {2 * b.numel() * 4 / ms / 1e6:8.1f} GB/s")
ms = bench(lambda: b.permute(1, 0, 2).contiguous())
print(f"torch   permute   f32  [256,512,512]->[1,0,2] {ms:9.4f} ms {2 * b.numel() * 4 / ms / 1e6:8.1f} GB/s")
