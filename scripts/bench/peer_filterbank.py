"""cuDNN (through torch.nn.functional.conv2d) on the FilterBank cases of scripts/bench/convolution.txt, TF32 off, then
on (the lines named "conv2d tf32 bank")."""
import torch, torch.nn.functional as F
from cuda_timing import time_ms
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = True


CASES = [((10, 4, 128, 128), (10, 4, 16, 16), 0), ((64, 64, 56, 56), (64, 64, 3, 3), 1),
         ((32, 256, 28, 28), (256, 256, 3, 3), 1), ((8, 16, 128, 128), (16, 16, 3, 3), 1),
         ((16, 128, 56, 56), (128, 128, 3, 3), 1)]
for tf32 in (False, True):
    # TF32 on (cuDNN's default in PyTorch) as a second set of lines that the suite's parser does not take for
    # the FP32 cases: "conv2d tf32 bank …".
    torch.backends.cudnn.allow_tf32 = tf32
    for (x_shape, f_shape, pad) in CASES:
        x = torch.rand(x_shape, device="cuda")
        w = torch.rand(f_shape, device="cuda")
        ms = time_ms(lambda: F.conv2d(x, w, padding=pad))
        y = F.conv2d(x, w, padding=pad)
        flops = 2 * y.numel() * f_shape[1] * f_shape[2] * f_shape[3]
        op = "conv2d tf32 bank" if tf32 else "conv2d bank"
        print(f"torch   {op} {'x'.join(map(str, x_shape))} * {'x'.join(map(str, f_shape))} {ms:10.4f} ms "
              f"{flops / ms / 1e6:10.1f} GFLOP/s", flush=True)
torch.backends.cudnn.allow_tf32 = False
