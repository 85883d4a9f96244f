"""Volumes of the bright structures in a CT series: what a researcher writes with cliper.

    python examples/python/ct_volumes.py data/ct_series --sigma-mm 1.5 --threshold 100 --output labels.nii.gz

1. read the DICOM series (cliper.io.read_dicom_series: volume[slice, row, column] in HU, the LPS affine);
2. smooth it with a Gaussian of the same width in millimetres along every axis (sigma in voxels = sigma in mm /
   the voxel size along that axis, from the affine);
3. threshold, and number the connected components (cliper.ndimage.label, scipy's 6-connectivity);
4. print each component's voxel count and volume in mL (voxel volume = |det| of the affine's 3×3 part, mm³);
5. write the labels as NIfTI (int32) with the series' geometry, in nibabel's (x, y, z) order and RAS affine, so
   that a viewer overlays them on the scan.

Everything runs on cliper's default OpenCL device (CLIPER_DEVICE chooses another).
"""

import argparse
import sys

import numpy as np

import cliper.io
from cliper import ndimage

# nibabel's voxel (i, j, k) = (column, row, slice) is the series' (slice, row, column) reversed.
REVERSE_AXES = np.array([[0, 0, 1, 0], [0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1]], dtype=np.float64)
# DICOM's patient axes are LPS+, NIfTI's RAS+: x and y change sign.
LPS_TO_RAS = np.diag([-1.0, -1.0, 1.0, 1.0])


def nifti_geometry(volume, affine_lps):
    """The array and affine a NIfTI of `volume[slice, row, column]` holds: axes reversed to (column, row, slice)
    and the affine from those indices to RAS millimetres."""
    return volume.transpose(2, 1, 0), LPS_TO_RAS @ affine_lps @ REVERSE_AXES


def component_volumes(labels, count, affine):
    """`(label, voxels, millilitres)` for labels 1 … count; a voxel's volume is |det| of the affine's 3×3 part."""
    voxel_ml = abs(np.linalg.det(affine[:3, :3])) / 1000.0
    voxels = np.bincount(labels.ravel(), minlength=count + 1)[1:]
    return [(label, int(n), n * voxel_ml) for label, n in enumerate(voxels, start=1)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("series", help="a folder holding one DICOM series")
    parser.add_argument("--sigma-mm", type=float, default=1.5, help="Gaussian sigma in millimetres (default 1.5)")
    parser.add_argument("--threshold", type=float, default=100.0, help="HU above which a voxel counts (default 100)")
    parser.add_argument("--output", default="labels.nii.gz", help="the labels as NIfTI (default labels.nii.gz)")
    args = parser.parse_args(argv)

    volume, affine = cliper.io.read_dicom_series(args.series)
    sigma_voxels = args.sigma_mm / cliper.io.spacing(affine)  # per axis: slice, row, column
    smoothed = ndimage.gaussian_filter(volume, sigma_voxels)
    labels, count = ndimage.label(smoothed > args.threshold)

    print(f"{args.series}: {volume.shape[0]} slices of {volume.shape[1]} × {volume.shape[2]}, voxels "
          f"{' × '.join(f'{s:.3g}' for s in cliper.io.spacing(affine))} mm; sigma {args.sigma_mm} mm = "
          f"{', '.join(f'{s:.3g}' for s in sigma_voxels)} voxels; threshold {args.threshold} HU")
    print(f"{'label':>5}  {'voxels':>8}  {'volume (mL)':>12}")
    for label, voxels, millilitres in component_volumes(labels, count, affine):
        print(f"{label:>5}  {voxels:>8}  {millilitres:>12.4f}")

    data, ras = nifti_geometry(labels.astype(np.int32), affine)
    cliper.io.write_nifti(args.output, data, ras)
    print(f"labels written to {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
