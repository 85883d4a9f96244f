"""cuBLAS GEMMs through torch that the kit's peer_torch.py does not time: DGEMM and ZGEMM, SGEMM with TF32
allowed at every size (peer_torch.py times it at 8192³ only), and A^100 with TF32 allowed.
Prints peer_torch.py's line format: peer op size ms GFLOP/s GB/s."""
import torch
from cuda_timing import time_ms as bench

torch.backends.cuda.matmul.allow_tf32 = False


def out(op, size, ms, flops, bytes_):
    print(f"torch   {op:22s} {size:18s} {ms:10.4f} ms {flops/ms/1e6:10.1f} GFLOP/s {bytes_/ms/1e6:9.1f} GB/s", flush=True)

m = 4096
a = torch.rand(m, m, dtype=torch.float64, device="cuda")
b = torch.rand(m, m, dtype=torch.float64, device="cuda")
out("dgemm f64", f"{m}^3", bench(lambda: a @ b), 2 * m**3, 24 * m * m)
a = torch.rand(m, m, dtype=torch.complex128, device="cuda")
b = torch.rand(m, m, dtype=torch.complex128, device="cuda")
out("zgemm c128", f"{m}^3", bench(lambda: a @ b), 8 * m**3, 48 * m * m)
del a, b
for m in (1024, 4096, 8192):
    a = torch.rand(m, m, device="cuda")
    b = torch.rand(m, m, device="cuda")
    reps = 50 if m == 1024 else 10
    out("sgemm f32 (no tf32)", f"{m}^3", bench(lambda: a @ b, reps=reps), 2 * m**3, 12 * m * m)
    torch.backends.cuda.matmul.allow_tf32 = True
    out("sgemm tf32", f"{m}^3", bench(lambda: a @ b, reps=reps), 2 * m**3, 12 * m * m)
    torch.backends.cuda.matmul.allow_tf32 = False
    del a, b
a = torch.rand(4096, 4096, device="cuda") / 4096
for tf32 in (False, True):
    torch.backends.cuda.matmul.allow_tf32 = tf32
    name = "matrix_power 100 tf32" if tf32 else "matrix_power 100 f32"
    out(name, "4096", bench(lambda: torch.linalg.matrix_power(a, 100), reps=3, warm=1), 0, 0)
torch.backends.cuda.matmul.allow_tf32 = False
