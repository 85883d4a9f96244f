"""Issue 48: regionprops Hu moments (plain and weighted) on an 8192² image of 99 856 labels, cliper against cuCIM in
one process on the GPU (the moments case of measurements.py, separately: python3 scripts/bench/moments_gpu.py)."""
import time, numpy as np, cliper, cliper.measure, cupy as cp
from cucim.skimage import measure as cm
m, side = 8192, 26
rows = np.arange(m) // side
lab = (rows[:, None] * (-(-m // side)) + rows[None, :] + 1).astype(np.float32)
img = np.random.default_rng(48).random((m, m), dtype=np.float32)
props = ("label", "moments_hu", "moments_weighted_hu")
L, X = cliper.asarray(lab), cliper.asarray(img)
pl, px = cp.asarray(lab.astype(np.int32)), cp.asarray(img)
def t(f, sync):
    f(); sync(); ts = []
    for _ in range(3):
        a = time.perf_counter(); f(); sync(); ts.append(time.perf_counter() - a)
    return sorted(ts)[1] * 1e3
o = cliper.measure.regionprops_table(L, X, properties=props)
c = cm.regionprops_table(pl, px, properties=props)
worst = max(np.abs(o[k] - np.asarray(c[k].get() if hasattr(c[k], 'get') else c[k])).max() / max(np.abs(o[k]).max(), 1e-300) for k in o)
print("largest relative difference cliper vs cucim (hu):", worst)
print(f"cliper-py regionprops_table moments_hu  8192x8192 99856 {t(lambda: cliper.measure.regionprops_table(L, X, properties=props), lambda: None):10.4f} ms")
print(f"cucim     regionprops_table moments_hu  8192x8192 99856 {t(lambda: cm.regionprops_table(pl, px, properties=props), cp.cuda.Device().synchronize):10.4f} ms")
