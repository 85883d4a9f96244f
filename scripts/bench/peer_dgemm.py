"""cuBLAS DGEMM and ZGEMM through torch (the kit's peer_torch.py times only f32 and c64 products).
Prints peer_torch.py's line format: peer op size ms GFLOP/s GB/s."""
import torch

def bench(fn, reps=10, warm=3):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(reps):
        fn()
    e.record()
    torch.cuda.synchronize()
    return s.elapsed_time(e) / reps

def out(op, size, ms, flops, bytes_):
    print(f"torch   {op:22s} {size:18s} {ms:10.4f} ms {flops/ms/1e6:10.1f} GFLOP/s {bytes_/ms/1e6:9.1f} GB/s", flush=True)

m = 4096
a = torch.rand(m, m, dtype=torch.float64, device="cuda")
b = torch.rand(m, m, dtype=torch.float64, device="cuda")
out("dgemm f64", f"{m}^3", bench(lambda: a @ b), 2 * m**3, 24 * m * m)
a = torch.rand(m, m, dtype=torch.complex128, device="cuda")
b = torch.rand(m, m, dtype=torch.complex128, device="cuda")
out("zgemm c128", f"{m}^3", bench(lambda: a @ b), 8 * m**3, 48 * m * m)
