"""Device time of the per-label passes (`cliper --profile measure/regionprops`) on the benchmark's label images:
8192² of 26² squares (99 856 labels) with a uniform f32 image, and 512³ of 24³ cubes (10 648 labels); and the
threshold and reduction passes over the same image (their device time against the copy bandwidth).

Usage: python3 scripts/bench/measure_profile.py CLIPER_BINARY [CLIPER_BINARY …]   (each binary runs every case;
CLIPER_DEVICE selects the device). Inputs are written to a temporary folder as .npy.
"""

import os
import subprocess
import sys
import tempfile
import time

import numpy as np


def squares(m, side):
    rows = np.arange(m) // side
    return (rows[:, None] * (-(-m // side)) + rows[None, :] + 1).astype(np.float32)


def cubes(w, cube):
    a = np.arange(w) // cube
    k = int(a.max()) + 1
    return (a[:, None, None] * k * k + a[None, :, None] * k + a[None, None, :] + 1).astype(np.float32)


def main():
    binaries = sys.argv[1:]
    big = os.environ.get("CLIPER_DEVICE", "") == "gpu"
    m, w = (8192, 512) if big else (2048, 256)
    rng = np.random.default_rng(48)
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for name, array in (("labels2", squares(m, 26)), ("image2", rng.random((m, m), dtype=np.float32)),
                            ("labels3", cubes(w, 24 if big else 12))):
            paths[name] = os.path.join(tmp, f"{name}.npy")
            np.save(paths[name], array)
        cases = [
            ("sum 2-D", ["measure", paths["labels2"], paths["image2"], "--stats", "sum"]),
            ("center_of_mass 2-D", ["measure", paths["labels2"], paths["image2"], "--stats", "center_of_mass"]),
            ("extrema 2-D", ["measure", paths["labels2"], paths["image2"], "--stats", "extrema"]),
            ("regionprops 2-D", ["regionprops", paths["labels2"], paths["image2"], "--properties",
                                 "label,area,bbox,centroid,intensity_mean,inertia_tensor_eigvals"]),
            ("regionprops hu 2-D", ["regionprops", paths["labels2"], paths["image2"], "--properties",
                                    "label,moments_hu,moments_weighted_hu"]),
            ("bbox 3-D", ["measure", paths["labels3"], "--stats", "bbox"]),
            ("threshold otsu 2-D", ["threshold-value", paths["image2"], "--method", "otsu"]),
            ("reduce sum 2-D", ["reduce", paths["image2"], "--operation", "sum"]),
            ("reduce mean axis 0 2-D", ["reduce", paths["image2"], "--operation", "mean", "--axis", "0"]),
        ]
        for binary in binaries:
            for case, args in cases:
                out = os.path.join(tmp, "out.csv" if args[0] in ("measure", "regionprops") else "out.npy")
                start = time.perf_counter()
                run = subprocess.run([binary, "--profile", *args, "-o", out], capture_output=True, text=True)
                seconds = time.perf_counter() - start
                print(f"== {os.path.basename(binary)} | {case} | exit {run.returncode} | {seconds:.2f} s wall")
                print((run.stdout + run.stderr).strip())


if __name__ == "__main__":
    main()
