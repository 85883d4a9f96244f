"""examples/python/ct_volumes.py run as a researcher runs it, on data/ct_series, against the same computation
with pydicom + scipy.ndimage + nibabel.

Tolerances and why:
- labels: EQUAL. Both smooth the same float64 HU values in float64; cliper's Gaussian differs from scipy's by
  rounding (about 1e-12 HU here), so a voxel could only change side if scipy's smoothed value lay within that of
  the threshold — the test checks that none lies within 1e-6 HU, so equality is a fair demand.
- voxel counts: equal (integers). Volumes: within 5e-5 mL, half a unit of the 4th decimal the table prints (the
  voxel volume itself, |det| of the affine from the same decimal tags through two float64 paths, agrees to ~1e-15).
- the NIfTI's affine: 1e-5 mm absolute. NIfTI stores the sform in float32; the origin here is about 30 mm, where a
  float32 step is 2e-6 mm.
"""

import os
import subprocess
import sys

import nibabel as nib
import numpy as np
import pydicom
import scipy.ndimage
from pydicom.pixels import apply_modality_lut

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "examples", "python", "ct_volumes.py")
SERIES = os.path.join(REPO, "data", "ct_series")
SIGMA_MM, THRESHOLD = 1.5, 100.0


def pydicom_reference():
    """Volume in HU [slice, row, column] sorted along the normal, and the LPS affine of (slice, row, column)."""
    slices = [pydicom.dcmread(os.path.join(SERIES, f)) for f in sorted(os.listdir(SERIES))]
    iop = np.array(slices[0].ImageOrientationPatient, dtype=float)
    normal = np.cross(iop[:3], iop[3:])
    slices.sort(key=lambda ds: float(np.dot(np.array(ds.ImagePositionPatient, dtype=float), normal)))
    volume = np.stack([apply_modality_lut(ds.pixel_array, ds) for ds in slices])
    first, last = (np.array(ds.ImagePositionPatient, dtype=float) for ds in (slices[0], slices[-1]))
    row_spacing, column_spacing = (float(v) for v in slices[0].PixelSpacing)
    affine = np.eye(4)
    affine[:3, 0] = (last - first) / (len(slices) - 1)
    affine[:3, 1] = row_spacing * iop[3:]
    affine[:3, 2] = column_spacing * iop[:3]
    affine[:3, 3] = first
    return volume, affine


def run_example(tmp_path):
    output = tmp_path / "labels.nii.gz"
    done = subprocess.run([sys.executable, SCRIPT, SERIES, "--sigma-mm", str(SIGMA_MM), "--threshold",
                           str(THRESHOLD), "--output", str(output)], capture_output=True, text=True, check=True)
    rows = []
    for line in done.stdout.splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[0].isdigit():
            rows.append((int(fields[0]), int(fields[1]), float(fields[2])))
    return output, rows, done.stdout


def test_the_example_gives_pydicom_scipy_nibabels_labels_volumes_and_geometry(tmp_path):
    output, rows, stdout = run_example(tmp_path)

    volume, affine = pydicom_reference()
    sigma = SIGMA_MM / np.sqrt((affine[:3, :3] ** 2).sum(axis=0))
    smoothed = scipy.ndimage.gaussian_filter(volume, sigma)
    assert np.abs(smoothed - THRESHOLD).min() > 1e-6  # no voxel on the fence: equal labels are a fair demand
    labels, count = scipy.ndimage.label(smoothed > THRESHOLD)
    assert count >= 2, "the phantom should have several structures above the threshold"

    # The table: one row per label, voxel counts and mL.
    voxel_ml = abs(np.linalg.det(affine[:3, :3])) / 1000.0
    counts = np.bincount(labels.ravel(), minlength=count + 1)[1:]
    assert [(label, voxels) for label, voxels, _ in rows] == [(i + 1, int(n)) for i, n in enumerate(counts)], stdout
    np.testing.assert_allclose([ml for _, _, ml in rows], counts * voxel_ml, rtol=0, atol=5e-5)

    # The NIfTI: nibabel's (x, y, z) = (column, row, slice), RAS affine built from pydicom's tags.
    img = nib.load(output)
    assert img.get_data_dtype() == np.int32
    np.testing.assert_array_equal(np.asanyarray(img.dataobj), labels.transpose(2, 1, 0))
    reverse = np.array([[0, 0, 1, 0], [0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1]], dtype=float)
    expected_affine = np.diag([-1.0, -1.0, 1.0, 1.0]) @ affine @ reverse
    np.testing.assert_allclose(img.affine, expected_affine, rtol=0, atol=1e-5)
    assert nib.aff2axcodes(img.affine) == ("L", "P", "S")  # DICOM's usual axial orientation (data/README.md)
