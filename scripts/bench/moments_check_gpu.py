"""Issue 48: regionprops moments on the GPU — cliper and cuCIM against scikit-image (CPU) on 1 521 square labels of
1024², largest difference relative to each column's largest value (found cuCIM 26.10's moments_central-2-2 100 % off)."""
import numpy as np, cliper, cliper.measure, cupy as cp, skimage.measure as sm
from cucim.skimage import measure as cm
m, side = 1024, 26
rows = np.arange(m) // side
lab = (rows[:, None] * (-(-m // side)) + rows[None, :] + 1).astype(np.float32)
img = np.random.default_rng(48).random((m, m), dtype=np.float32)
props = ("label", "moments_central", "moments_hu")
ours = cliper.measure.regionprops_table(cliper.asarray(lab), cliper.asarray(img), properties=props)
ref = sm.regionprops_table(lab.astype(np.int32), img, properties=props)
cu = cm.regionprops_table(cp.asarray(lab.astype(np.int32)), cp.asarray(img), properties=props)
for k in ref:
    r = ref[k]; o = ours[k]; c = np.asarray(cu[k].get() if hasattr(cu[k], "get") else cu[k])
    scale = max(np.abs(r).max(), 1e-300)
    print(k, "ours-skimage %.2e" % (np.abs(o - r).max() / scale), "cucim-skimage %.2e" % (np.abs(c - r).max() / scale))
