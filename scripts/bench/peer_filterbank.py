"""cuDNN (through torch.nn.functional.conv2d, TF32 off) on the FilterBank cases of scripts/bench/convolution.txt."""
import torch, torch.nn.functional as F
from cuda_timing import time_ms
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = True


for (x_shape, f_shape, pad) in [((10, 4, 128, 128), (10, 4, 16, 16), 0), ((64, 64, 56, 56), (64, 64, 3, 3), 1)]:
    x = torch.rand(x_shape, device="cuda")
    w = torch.rand(f_shape, device="cuda")
    ms = time_ms(lambda: F.conv2d(x, w, padding=pad))
    y = F.conv2d(x, w, padding=pad)
    flops = 2 * y.numel() * f_shape[1] * f_shape[2] * f_shape[3]
    print(f"torch   conv2d bank {'x'.join(map(str, x_shape))} * {'x'.join(map(str, f_shape))} {ms:10.4f} ms "
          f"{flops / ms / 1e6:10.1f} GFLOP/s", flush=True)
