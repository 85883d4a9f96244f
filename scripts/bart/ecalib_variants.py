import numpy as np, sys
sys.path.insert(0, '/tmp/bartspec/ref')
import ecalib_ref as E
from cfl import readcfl
ksp = readcfl('uksp').reshape(128,128,1,8, order='F').astype(complex)
b = readcfl('sens').reshape(128,128,1,8,1, order='F')
s, val, n, z = E.ecalib(ksp)
# variant: exact eigenvector instead of 30 power iterations (phase fixed the same way)
s60, val60, _, _ = E.ecalib(ksp, niter=200)
print('power200 vs bart', np.linalg.norm(s60 - b)/np.linalg.norm(b))
# variant: sign of rot flipped
print('rot sign/phase: last comp', z[-1])
