"""Times cliper's watershed and watershed_ift against skimage 0.26 and scipy 1.17 on a 512² image and a 128³
volume (quantised smoothed noise, 64 or 256 random markers), checks the labels are equal, and prints one line per
case: the median of `--repeat` runs of each. Build the Python package with `--release` first (the debug build's
flood is unoptimised). Usage: python scripts/bench/watershed_vs_skimage.py [--repeat 5]"""
import argparse
import time

import numpy as np
import scipy.ndimage as ndi
import skimage.segmentation as skseg

from cliper import ndimage, segmentation


def median_seconds(f, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = f()
        times.append(time.perf_counter() - start)
    return float(np.median(times)), result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    repeat = parser.parse_args().repeat
    rng = np.random.default_rng(0)
    for shape, seeds in (((512, 512), 64), ((128, 128, 128), 256)):
        image = np.round(ndi.gaussian_filter(rng.random(shape), 2) * 200)
        markers = np.zeros(shape, np.int32)
        markers.flat[rng.choice(markers.size, seeds, replace=False)] = np.arange(1, seeds + 1)
        cases = [
            ("watershed", {}),
            ("watershed line", {"watershed_line": True}),
            ("watershed compact", {"compactness": 0.01}),
        ]
        for name, kwargs in cases:
            ours, got = median_seconds(lambda: segmentation.watershed(image, markers, **kwargs), repeat)
            theirs, want = median_seconds(lambda: skseg.watershed(image, markers, **kwargs), repeat)
            same = np.array_equal(got, want)
            print(f"{name:18} {str(shape):16} cliper {ours * 1e3:8.1f} ms  skimage {theirs * 1e3:8.1f} ms  equal={same}")
        ours, got = median_seconds(lambda: segmentation.watershed(image), repeat)
        theirs, want = median_seconds(lambda: skseg.watershed(image), repeat)
        print(f"{'watershed minima':18} {str(shape):16} cliper {ours * 1e3:8.1f} ms  skimage {theirs * 1e3:8.1f} ms  "
              f"equal={np.array_equal(got, want)}")
        u8 = image.astype(np.uint8)
        ours, got = median_seconds(lambda: ndimage.watershed_ift(u8, markers), repeat)
        theirs, want = median_seconds(lambda: ndi.watershed_ift(u8, markers), repeat)
        print(f"{'watershed_ift':18} {str(shape):16} cliper {ours * 1e3:8.1f} ms  scipy   {theirs * 1e3:8.1f} ms  "
              f"equal={np.array_equal(got, want)}")


if __name__ == "__main__":
    main()
