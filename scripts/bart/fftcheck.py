import numpy as np, subprocess, sys
sys.path.insert(0, '/tmp/bartspec/ref')
from cfl import readcfl, writecfl
rng = np.random.default_rng(0)
for n0, n1 in ((128, 128), (130, 126), (127, 128), (6, 12), (12, 12)):
    x = (rng.standard_normal((n0, n1)) + 1j * rng.standard_normal((n0, n1))).astype(np.complex64)
    writecfl('/tmp/bartspec/fx', x)
    for flags, inv in (('', False), ('-i', True)):
        subprocess.run(['bart', 'fft', '-u'] + ([flags] if flags else []) + ['3', '/tmp/bartspec/fx', '/tmp/bartspec/fy'], check=True)
        y = readcfl('/tmp/bartspec/fy').reshape(n0, n1, order='F')
        f = np.fft.ifftn if inv else np.fft.fftn
        ref = np.fft.fftshift(f(np.fft.ifftshift(x), norm='ortho'))
        print(n0, n1, 'inverse' if inv else 'forward', 'nrmse vs shift-ortho:', np.linalg.norm(y - ref) / np.linalg.norm(ref))
