"""cliper.io against the reference tools, on files those tools write here (tmp_path) and on the repository's
committed fixtures (tests/fixtures/nifti: nibabel 5.4.2; tests/fixtures/dicom: pydicom's test files and
synthetic series; data/ct_series).

Tolerances: voxel values are compared EXACTLY (cliper computes the rescale as nibabel and pydicom do, in float64,
so any difference is a bug); affines read from a file to 1e-6 mm (both sides read the same float32/decimal
numbers; 1e-6 is far below any voxel size and above float64 rounding of the DICOM products); affines after a NIfTI
write to one float32 ulp relative plus 1e-6 (NIfTI stores the sform in float32, and cliper's sform is rebuilt from
spacing × direction, which may round its last float32 bit differently than nibabel's own cast).
"""

import gzip
import os

import nibabel as nib
import numpy as np
import png
import pydicom
import pytest
import scipy.io
import tifffile
from PIL import Image
from pydicom.dataset import Dataset, FileMetaDataset
from pydicom.pixels import apply_modality_lut
from pydicom.uid import CTImageStorage, ExplicitVRLittleEndian, generate_uid

import cliper.io

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NIFTI_FIXTURES = os.path.join(REPO, "tests", "fixtures", "nifti")
DICOM_FIXTURES = os.path.join(REPO, "tests", "fixtures", "dicom")
AFFINE_MM = 1e-6


def assert_same_array(ours, reference):
    """Same shape, dtype (ours in the host's byte order, the reference's as the file had it) and every value (NaN
    where NaN)."""
    assert ours.shape == reference.shape
    assert ours.dtype.isnative
    assert ours.dtype == reference.dtype.newbyteorder("="), (ours.dtype, reference.dtype)
    np.testing.assert_array_equal(ours, reference)


def assert_one_line(error):
    message = str(error.value)
    assert message and "\n" not in message, message


def oblique_affine(zooms, origin):
    """A rotation about an oblique axis (about 20°) times the voxel sizes, plus an origin: no axis lies along a
    world axis, as in a tilted MR acquisition."""
    axis = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
    angle = 0.35
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    rotation = np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * (k @ k)
    affine = np.eye(4)
    affine[:3, :3] = rotation * np.asarray(zooms)
    affine[:3, 3] = origin
    return affine


# ---------------------------------------------------------------------------------------------------- NIfTI


def nibabel_reference(img):
    """What read_nifti promises for a nibabel image: get_fdata() for scaled files, dataobj's stored values
    otherwise, RGB as uint8 channels last."""
    raw = np.asanyarray(img.dataobj)
    if raw.dtype.names:  # RGB24 / RGBA32
        return np.stack([raw[name] for name in raw.dtype.names], axis=-1)
    slope, inter = img.dataobj.slope, img.dataobj.inter
    if (slope, inter) != (1.0, 0.0):
        return img.get_fdata()
    return raw


NIFTI_FILES = sorted(f for f in os.listdir(NIFTI_FIXTURES) if f.endswith((".nii", ".nii.gz")))


@pytest.mark.parametrize("name", NIFTI_FILES)
def test_read_nifti_equals_nibabel_on_the_committed_fixtures(name):
    path = os.path.join(NIFTI_FIXTURES, name)
    img = nib.load(path)
    data, affine = cliper.io.read_nifti(path)
    assert_same_array(data, nibabel_reference(img))
    if np.all(np.linalg.norm(img.affine[:3, :3], axis=0) > 0):
        np.testing.assert_allclose(affine, img.affine, rtol=0, atol=AFFINE_MM)
    else:
        assert affine is None  # a zero pixdim without a transform: no affine to give


def test_the_fixture_list_covers_what_the_tests_need():
    # Scaled, gzipped, 4-D, 2-D, qform-only oblique, sform ≠ qform, NIfTI-2, big-endian, colour, no transform.
    for needed in ["i16_scaled.nii.gz", "4d_sec.nii.gz", "2d_f64.nii", "qform_only_oblique.nii",
                   "sform_not_qform.nii", "nifti2_i16_scaled.nii.gz", "big_endian_i16.nii", "rgb24.nii",
                   "no_transform.nii"]:
        assert needed in NIFTI_FILES


def test_read_nifti_scaled_oblique_4d_written_by_nibabel(tmp_path):
    rng = np.random.default_rng(7)
    stored = rng.integers(-2000, 3000, size=(7, 5, 3, 2), dtype=np.int16)
    affine = oblique_affine([0.9, 1.1, 2.7], [-91.3, 12.25, 40.0])
    img = nib.Nifti1Image(stored, affine)
    img.header.set_slope_inter(0.37, -12.5)
    img.header.set_xyzt_units("mm", "sec")
    path = tmp_path / "scaled_oblique_4d.nii.gz"
    nib.save(img, path)
    reference = nib.load(path)
    data, ours = cliper.io.read_nifti(path)
    assert data.dtype == np.float64
    assert_same_array(data, reference.get_fdata())
    np.testing.assert_allclose(ours, reference.affine, rtol=0, atol=AFFINE_MM)


@pytest.mark.parametrize("dtype,slope,inter", [(np.uint8, 1.0, -5.0), (np.int16, 2.0, 0.0), (np.int32, 0.1, 3.0),
                                               (np.int64, 2.0, 3.0), (np.uint64, 3.0, 0.0), (np.int64, 1.0, 0.0),
                                               (np.float32, 2.0, 1.0), (np.float64, 1.0, 0.0)])
@pytest.mark.parametrize("image_class", [nib.Nifti1Image, nib.Nifti2Image])
@pytest.mark.parametrize("suffix", [".nii", ".nii.gz"])
def test_read_nifti_rescale_types_as_nibabel(tmp_path, dtype, slope, inter, image_class, suffix):
    # Float64 exactly when nibabel's header has a rescale (get_fdata), else the stored type (dataobj).
    stored = (np.arange(5 * 4 * 3).reshape(5, 4, 3) * 7).astype(dtype)
    img = image_class(stored, np.diag([0.5, 0.6, 0.7, 1.0]), dtype=dtype)
    img.header.set_slope_inter(slope, inter)
    path = tmp_path / f"scaled{suffix}"
    nib.save(img, path)
    data, _ = cliper.io.read_nifti(path)
    reference = nibabel_reference(nib.load(path))
    assert_same_array(data, reference)
    assert data.dtype == (np.float64 if (slope, inter) != (1.0, 0.0) else dtype)


def test_read_nifti_gives_no_affine_where_the_file_states_none(tmp_path):
    # pixdim[1] = 0 and no transform: nibabel's load substitutes 1 for the zero pixdim; cliper.io gives the data
    # and no affine (documented in read_nifti), rather than a voxel size the file does not state.
    img = nib.Nifti1Image(np.arange(60, dtype=np.float32).reshape(3, 4, 5), None)
    img.header["pixdim"][1:4] = [0.0, 2.0, 3.0]
    nib.save(img, tmp_path / "zero.nii")
    data, affine = cliper.io.read_nifti(tmp_path / "zero.nii")
    assert_same_array(data, np.asanyarray(nib.load(tmp_path / "zero.nii").dataobj))
    assert affine is None


def test_read_nifti_qform_only_when_sform_code_is_zero(tmp_path):
    affine = oblique_affine([1.5, 0.5, 4.0], [10.0, -20.0, 30.0])
    img = nib.Nifti1Image(np.arange(11 * 6 * 4, dtype=np.float32).reshape(11, 6, 4), None)
    img.set_qform(affine, code=1)
    img.set_sform(np.diag([9.0, 9.0, 9.0, 1.0]), code=0)
    path = tmp_path / "qform.nii"
    nib.save(img, path)
    data, ours = cliper.io.read_nifti(path)
    assert_same_array(data, np.asanyarray(nib.load(path).dataobj))
    np.testing.assert_allclose(ours, nib.load(path).affine, rtol=0, atol=AFFINE_MM)


WRITE_TYPES = [np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32, np.int64, np.float32, np.float64,
               np.complex64, np.complex128]


@pytest.mark.parametrize("dtype", WRITE_TYPES)
@pytest.mark.parametrize("suffix", [".nii", ".nii.gz"])
def test_write_nifti_reads_back_in_nibabel(tmp_path, dtype, suffix):
    rng = np.random.default_rng(3)
    data = (rng.random((7, 5, 3)) * 100).astype(dtype)
    affine = oblique_affine([0.8, 0.7, 3.0], [-10.5, 20.0, 5.5])
    path = tmp_path / f"out{suffix}"
    cliper.io.write_nifti(path, data, affine)
    img = nib.load(path)
    assert_same_array(np.asanyarray(img.dataobj), data)
    np.testing.assert_allclose(img.affine, affine, rtol=2.0**-23, atol=AFFINE_MM)
    # ... and nibabel's own save of the same affine agrees (both are the float32 sform).
    nib.save(nib.Nifti1Image(data, affine, dtype=data.dtype), tmp_path / f"nib{suffix}")
    np.testing.assert_allclose(img.affine, nib.load(tmp_path / f"nib{suffix}").affine, rtol=2.0**-23, atol=AFFINE_MM)


def test_write_nifti_4d_and_read_back_round_trip(tmp_path):
    data = np.arange(9 * 4 * 3 * 5, dtype=np.float32).reshape(9, 4, 3, 5) / 7
    affine = oblique_affine([2.0, 2.0, 2.2], [0.0, 1.0, -2.0])
    path = tmp_path / "fmri.nii.gz"
    cliper.io.write_nifti(path, data, affine)
    back, back_affine = cliper.io.read_nifti(path)
    assert_same_array(back, data)
    np.testing.assert_allclose(back_affine, nib.load(path).affine, rtol=0, atol=AFFINE_MM)
    assert_same_array(np.asanyarray(nib.load(path).dataobj), data)
    # What read_nifti returns (a Fortran-ordered view) writes back unchanged.
    cliper.io.write_nifti(tmp_path / "again.nii", back, back_affine)
    assert_same_array(np.asanyarray(nib.load(tmp_path / "again.nii").dataobj), data)


def test_write_nifti_takes_any_numpy_layout(tmp_path):
    # A strided, big-endian view, and bool (written as uint8, as the docstring says).
    strided = np.arange(9 * 5 * 4 * 2, dtype=">i2").reshape(9, 5, 4, 2)[::2, :, 1:, :]
    cliper.io.write_nifti(tmp_path / "s.nii.gz", strided, np.eye(4))
    np.testing.assert_array_equal(np.asanyarray(nib.load(tmp_path / "s.nii.gz").dataobj), strided)
    mask = np.arange(60).reshape(5, 4, 3) % 3 == 0
    cliper.io.write_nifti(tmp_path / "m.nii", mask, np.eye(4))
    assert_same_array(np.asanyarray(nib.load(tmp_path / "m.nii").dataobj), mask.astype(np.uint8))


def test_write_nifti_without_affine_is_nibabels_none(tmp_path):
    data = np.ones((4, 3, 2), np.int16)
    cliper.io.write_nifti(tmp_path / "a.nii", data)
    nib.save(nib.Nifti1Image(data, None), tmp_path / "b.nii")
    np.testing.assert_allclose(nib.load(tmp_path / "a.nii").affine, nib.load(tmp_path / "b.nii").affine, atol=AFFINE_MM)


# ---------------------------------------------------------------------------------------------------- DICOM


def pydicom_stack(files):
    """A series as pydicom users stack it: sorted along the normal, apply_modality_lut, and the affine from the
    tags with the slice step (P_N − P_1) / (N − 1)."""
    slices = [pydicom.dcmread(f) for f in files]
    iop = np.array(slices[0].ImageOrientationPatient, dtype=float)
    row_dir, col_dir = iop[:3], iop[3:]
    normal = np.cross(row_dir, col_dir)
    slices.sort(key=lambda ds: float(np.dot(np.array(ds.ImagePositionPatient, dtype=float), normal)))
    volume = np.stack([apply_modality_lut(ds.pixel_array, ds) for ds in slices])
    first = np.array(slices[0].ImagePositionPatient, dtype=float)
    last = np.array(slices[-1].ImagePositionPatient, dtype=float)
    step = (last - first) / (len(slices) - 1)
    dr, dc = (float(v) for v in slices[0].PixelSpacing)
    affine = np.eye(4)
    affine[:3, 0] = step
    affine[:3, 1] = dr * col_dir
    affine[:3, 2] = dc * row_dir
    affine[:3, 3] = first
    return volume, affine


def dicom_files(folder):
    return [os.path.join(folder, f) for f in sorted(os.listdir(folder)) if f.endswith(".dcm")]


@pytest.mark.parametrize("folder", [os.path.join(REPO, "data", "ct_series"), os.path.join(DICOM_FIXTURES, "series")])
def test_read_dicom_series_equals_pydicom_stack_on_committed_series(folder):
    reference, reference_affine = pydicom_stack(dicom_files(folder))
    volume, affine = cliper.io.read_dicom_series(folder)
    if volume.dtype == np.float64:
        assert_same_array(volume, reference)
    else:  # no rescale other than (1, 0): the stored type, pydicom's values
        np.testing.assert_array_equal(volume, reference)
    np.testing.assert_allclose(affine, reference_affine, rtol=0, atol=AFFINE_MM)


def write_series(folder, stored, affine_lps, slope=None, intercept=None, names=None):
    """Writes `stored[slice, row, column]` (int16) as a CT series with pydicom: slice k at affine · (k, 0, 0, 1),
    orientation and pixel spacing from the affine's row and column steps."""
    os.makedirs(folder, exist_ok=True)
    series_uid = generate_uid()
    row_step, col_step = affine_lps[:3, 1], affine_lps[:3, 2]
    dr, dc = np.linalg.norm(row_step), np.linalg.norm(col_step)
    for k in range(stored.shape[0]):
        meta = FileMetaDataset()
        meta.MediaStorageSOPClassUID = CTImageStorage
        meta.MediaStorageSOPInstanceUID = generate_uid()
        meta.TransferSyntaxUID = ExplicitVRLittleEndian
        ds = Dataset()
        ds.file_meta = meta
        ds.SOPClassUID = CTImageStorage
        ds.SOPInstanceUID = meta.MediaStorageSOPInstanceUID
        ds.StudyInstanceUID = generate_uid()
        ds.SeriesInstanceUID = series_uid
        ds.Modality = "CT"
        ds.PatientName = "Test^Oblique"
        ds.Rows, ds.Columns = stored.shape[1], stored.shape[2]
        ds.ImageOrientationPatient = [f"{v:.10f}" for v in list(col_step / dc) + list(row_step / dr)]
        ds.ImagePositionPatient = [f"{v:.10f}" for v in affine_lps[:3] @ [k, 0, 0, 1]]
        ds.PixelSpacing = [f"{dr:.10f}", f"{dc:.10f}"]
        ds.SamplesPerPixel = 1
        ds.PhotometricInterpretation = "MONOCHROME2"
        ds.BitsAllocated, ds.BitsStored, ds.HighBit, ds.PixelRepresentation = 16, 16, 15, 1
        if slope is not None:
            ds.RescaleSlope, ds.RescaleIntercept = slope, intercept
        ds.PixelData = np.ascontiguousarray(stored[k]).astype("<i2").tobytes()
        name = names[k] if names else f"s{k:03d}.dcm"
        ds.save_as(os.path.join(folder, name), enforce_file_format=True)


def oblique_lps(shape_spacing=(3.3, 0.7, 0.9), origin=(-120.5, 80.25, 33.0)):
    """An LPS affine of a tilted acquisition: rows and columns rotated out of every plane, slices along their
    normal."""
    rotation = oblique_affine([1, 1, 1], [0, 0, 0])[:3, :3]
    column_dir, row_dir = rotation[:, 0], rotation[:, 1]
    normal = np.cross(column_dir, row_dir)
    ds, dr, dc = shape_spacing
    affine = np.eye(4)
    affine[:3, 0], affine[:3, 1], affine[:3, 2], affine[:3, 3] = ds * normal, dr * row_dir, dc * column_dir, origin
    return affine


def test_read_dicom_series_oblique_scaled_shuffled_written_by_pydicom(tmp_path):
    rng = np.random.default_rng(11)
    stored = rng.integers(-1000, 3000, size=(5, 7, 3), dtype=np.int16)
    affine = oblique_lps()
    # File names in an order unrelated to the positions: sorting must use the positions.
    write_series(tmp_path, stored, affine, slope="0.25", intercept="-10.5", names=["e.dcm", "a.dcm", "d.dcm",
                                                                                "b.dcm", "c.dcm"])
    reference, reference_affine = pydicom_stack(dicom_files(tmp_path))
    volume, ours = cliper.io.read_dicom_series(tmp_path)
    assert_same_array(volume, reference)
    assert_same_array(volume, stored * 0.25 - 10.5)  # and in the order written
    np.testing.assert_allclose(ours, reference_affine, rtol=0, atol=AFFINE_MM)
    np.testing.assert_allclose(ours, affine, rtol=0, atol=AFFINE_MM)


def test_read_dicom_series_gantry_tilt_places_every_slice_at_its_position(tmp_path):
    # A CT tilted 15° about the x axis: slice k lies at P1 + k·step with a step NOT along the slice normal (axial
    # rows and columns, positions moving posterior as they go up). The affine's slice column must be that step,
    # so that affine @ (k, 0, 0, 1) is slice k's ImagePositionPatient.
    affine = np.eye(4)
    affine[:3, 0] = [0.0, 2.5 * np.tan(np.radians(15)), 2.5]
    affine[:3, 1] = [0.0, 0.6, 0.0]
    affine[:3, 2] = [0.6, 0.0, 0.0]
    affine[:3, 3] = [-20.0, -30.0, 10.0]
    stored = np.arange(6 * 5 * 4, dtype=np.int16).reshape(6, 5, 4)
    write_series(tmp_path, stored, affine)
    reference, reference_affine = pydicom_stack(dicom_files(tmp_path))
    volume, ours = cliper.io.read_dicom_series(tmp_path)
    assert_same_array(volume, reference)
    np.testing.assert_allclose(ours, reference_affine, rtol=0, atol=AFFINE_MM)
    for k, name in enumerate(dicom_files(tmp_path)):
        position = np.array(pydicom.dcmread(name).ImagePositionPatient, dtype=float)
        np.testing.assert_allclose(ours @ [k, 0, 0, 1], np.r_[position, 1], rtol=0, atol=AFFINE_MM)


def test_read_dicom_series_without_rescale_keeps_the_stored_type(tmp_path):
    stored = np.arange(4 * 3 * 5, dtype=np.int16).reshape(4, 3, 5) - 30
    write_series(tmp_path, stored, oblique_lps((2.0, 1.0, 1.25), (0.0, 0.0, 0.0)))
    volume, _ = cliper.io.read_dicom_series(tmp_path)
    assert_same_array(volume, stored)


def test_read_dicom_series_of_one_file_is_one_slice():
    path = os.path.join(DICOM_FIXTURES, "CT_small.dcm")
    ds = pydicom.dcmread(path)
    volume, affine = cliper.io.read_dicom_series(path)
    assert_same_array(volume, apply_modality_lut(ds.pixel_array, ds)[np.newaxis])
    iop = np.array(ds.ImageOrientationPatient, dtype=float)
    dr, dc = (float(v) for v in ds.PixelSpacing)
    expected = np.eye(4)
    expected[:3, 0] = float(ds.SpacingBetweenSlices) * np.cross(iop[:3], iop[3:])
    expected[:3, 1], expected[:3, 2] = dr * iop[3:], dc * iop[:3]
    expected[:3, 3] = np.array(ds.ImagePositionPatient, dtype=float)
    np.testing.assert_allclose(affine, expected, rtol=0, atol=AFFINE_MM)


def test_read_dicom_series_refusals():
    with pytest.raises(FileNotFoundError) as error:
        cliper.io.read_dicom_series(os.path.join(DICOM_FIXTURES, "no such folder"))
    assert_one_line(error)
    for name, says in [("mixed", "series are mixed"), ("missing_slice", "missing"), ("duplicate", "same position"),
                       ("truncated.dcm", "truncated"), ("SC_rgb_small_odd.dcm", "colour")]:
        with pytest.raises(ValueError) as error:
            cliper.io.read_dicom_series(os.path.join(DICOM_FIXTURES, name))
        assert_one_line(error)
        assert says in str(error.value)


# ---------------------------------------------------------------------------------------- imread / imwrite


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint32, np.int64, np.float32, np.float64, np.complex64,
                                   np.complex128])
@pytest.mark.parametrize("order", ["C", "F"])
def test_npy_both_ways(tmp_path, dtype, order):
    a = np.asarray((np.arange(7 * 5 * 3).reshape(7, 5, 3) * 1.5), dtype=dtype, order=order)
    np.save(tmp_path / "a.npy", a)
    assert_same_array(cliper.io.imread(tmp_path / "a.npy"), a)
    cliper.io.imwrite(tmp_path / "b.npy", a)
    assert_same_array(np.load(tmp_path / "b.npy"), a)


def test_npy_big_endian_is_read_with_its_values(tmp_path):
    a = np.arange(35, dtype=">i2").reshape(7, 5)
    np.save(tmp_path / "a.npy", a)
    np.testing.assert_array_equal(cliper.io.imread(tmp_path / "a.npy"), a)


@pytest.mark.parametrize("mode,shape,dtype", [("L", (7, 5), np.uint8), ("I;16", (7, 5), np.uint16),
                                              ("RGB", (7, 5, 3), np.uint8), ("RGBA", (7, 5, 4), np.uint8),
                                              ("LA", (7, 5, 2), np.uint8)])
def test_png_read_as_pillow(tmp_path, mode, shape, dtype):
    rng = np.random.default_rng(5)
    a = rng.integers(0, np.iinfo(dtype).max, size=shape, dtype=dtype)
    Image.fromarray(a).save(tmp_path / "a.png")
    assert Image.open(tmp_path / "a.png").mode == mode
    reference = np.asarray(Image.open(tmp_path / "a.png"))
    ours = cliper.io.imread(tmp_path / "a.png")
    np.testing.assert_array_equal(ours, reference)
    assert ours.shape == shape


def test_png_one_bit_is_uint8_as_pillow_converts_it():
    path = os.path.join(REPO, "tests", "fixtures", "bilevel_3x5.png")  # Pillow-written, mode "1"
    assert_same_array(cliper.io.imread(path), np.asarray(Image.open(path).convert("L")))


def test_png_palette_is_expanded_as_pillow_converts_it(tmp_path):
    img = Image.fromarray(np.arange(35, dtype=np.uint8).reshape(7, 5) % 4).convert("P")
    img.putpalette([0, 0, 0, 255, 0, 0, 0, 255, 0, 10, 20, 30] + [0] * (256 * 3 - 12))
    img.save(tmp_path / "p.png")
    np.testing.assert_array_equal(cliper.io.imread(tmp_path / "p.png"),
                                  np.asarray(Image.open(tmp_path / "p.png").convert("RGB")))


def read_png_as_pypng(path):
    """A PNG's samples at their own depth, (H, W) or (H, W, C): pypng keeps 16-bit colour, which Pillow reduces
    to 8 bits."""
    width, height, rows, info = png.Reader(filename=str(path)).read()
    planes = info["planes"]
    a = np.array([np.asarray(row) for row in rows], dtype=np.uint16 if info["bitdepth"] == 16 else np.uint8)
    return a.reshape(height, width, planes) if planes > 1 else a.reshape(height, width)


def test_png_16_bit_colour_keeps_its_depth(tmp_path):
    a = (np.arange(7 * 5 * 3).reshape(7, 5, 3) * 1013 % 65535).astype(np.uint16)
    png.from_array(a.reshape(7, 15), "RGB;16").save(tmp_path / "c16.png")
    assert_same_array(cliper.io.imread(tmp_path / "c16.png"), read_png_as_pypng(tmp_path / "c16.png"))


@pytest.mark.parametrize("shape,dtype", [((7, 5), np.uint8), ((7, 5), np.uint16), ((7, 5, 3), np.uint8),
                                         ((7, 5, 2), np.uint8), ((7, 5, 4), np.uint16)])
def test_png_written_reads_back_in_pillow_and_pypng(tmp_path, shape, dtype):
    a = (np.arange(np.prod(shape)).reshape(shape) * 37 % np.iinfo(dtype).max).astype(dtype)
    cliper.io.imwrite(tmp_path / "a.png", a)
    assert_same_array(read_png_as_pypng(tmp_path / "a.png"), a)
    if dtype == np.uint8 or len(shape) == 2:  # Pillow reads 16-bit colour as 8 bits
        np.testing.assert_array_equal(np.asarray(Image.open(tmp_path / "a.png")), a)


@pytest.mark.parametrize("shape,dtype,kwargs", [((7, 5), np.float32, {}),
                                                ((3, 7, 5), np.int16, {"photometric": "minisblack"}),
                                                ((7, 5, 3), np.uint8, {"photometric": "rgb"}),
                                                ((2, 7, 5, 3), np.uint16, {"photometric": "rgb"}),
                                                ((7, 5), np.complex64, {})])
def test_tiff_read_as_tifffile(tmp_path, shape, dtype, kwargs):
    a = (np.arange(np.prod(shape)).reshape(shape) * 3).astype(dtype)
    tifffile.imwrite(tmp_path / "a.tif", a, **kwargs)
    reference = tifffile.imread(tmp_path / "a.tif")
    assert_same_array(cliper.io.imread(tmp_path / "a.tif"), reference)


def test_tiff_planar_colour_comes_channels_last(tmp_path):
    a = np.arange(3 * 7 * 5, dtype=np.uint8).reshape(3, 7, 5)
    tifffile.imwrite(tmp_path / "p.tif", a, photometric="rgb", planarconfig="separate")
    assert tifffile.imread(tmp_path / "p.tif").shape == (3, 7, 5)  # tifffile's planar order
    assert_same_array(cliper.io.imread(tmp_path / "p.tif"), np.moveaxis(a, 0, -1))


@pytest.mark.parametrize("shape,dtype,colour", [((7, 5), np.float64, None), ((4, 7, 5), np.int32, None),
                                                ((7, 5, 3), np.uint8, True), ((2, 7, 5, 4), np.uint16, True)])
def test_tiff_written_reads_back_in_tifffile(tmp_path, shape, dtype, colour):
    a = (np.arange(np.prod(shape)).reshape(shape) * 7 % 200).astype(dtype)
    cliper.io.imwrite(tmp_path / "a.tiff", a, colour=colour)
    assert_same_array(tifffile.imread(tmp_path / "a.tiff"), a)


def test_mat_both_ways(tmp_path):
    rng = np.random.default_rng(2)
    variables = {"image": rng.random((7, 5, 3)), "labels": np.arange(35, dtype=np.int32).reshape(5, 7),
                 "row": np.arange(4, dtype=np.uint8), "z": (rng.random((3, 2)) + 1j).astype(np.complex64)}
    scipy.io.savemat(tmp_path / "v.mat", variables, do_compression=True)
    reference = scipy.io.loadmat(tmp_path / "v.mat")
    for name in variables:
        assert_same_array(cliper.io.imread(f"{tmp_path / 'v.mat'}:{name}"), reference[name])
    cliper.io.imwrite(f"{tmp_path / 'w.mat'}:first", variables["image"])
    cliper.io.imwrite(f"{tmp_path / 'w.mat'}:second", variables["labels"])
    back = scipy.io.loadmat(tmp_path / "w.mat")
    assert_same_array(back["first"], variables["image"])
    assert_same_array(back["second"], variables["labels"])
    # One variable: no name needed; imwrite without a name writes `x`.
    cliper.io.imwrite(tmp_path / "one.mat", variables["labels"])
    assert_same_array(scipy.io.loadmat(tmp_path / "one.mat")["x"], variables["labels"])
    assert_same_array(cliper.io.imread(tmp_path / "one.mat"), variables["labels"])


def read_cfl_as_bart(base):
    """BART's file layout read the way its Python readcfl reads it: the header's dimensions with trailing 1s
    dropped, complex64 in column-major order."""
    with open(f"{base}.hdr") as header:
        header.readline()
        dims = [int(n) for n in header.readline().split()]
    while len(dims) > 1 and dims[-1] == 1:
        dims.pop()
    return np.fromfile(f"{base}.cfl", dtype=np.complex64).reshape(dims, order="F")


def test_cfl_both_ways(tmp_path):
    a = (np.arange(5 * 3 * 1 * 4).reshape(5, 3, 1, 4) + 1j * np.arange(60).reshape(5, 3, 1, 4) / 3).astype(np.complex64)
    with open(tmp_path / "k.hdr", "w") as header:
        header.write("# Dimensions\n" + " ".join(str(n) for n in list(a.shape) + [1] * 12) + "\n")
    a.ravel(order="F").tofile(tmp_path / "k.cfl")
    reference = read_cfl_as_bart(tmp_path / "k")
    for name in ["k.cfl", "k.hdr", "k"]:
        assert_same_array(cliper.io.imread(tmp_path / name), reference)
    cliper.io.imwrite(tmp_path / "w.cfl", a)
    assert_same_array(read_cfl_as_bart(tmp_path / "w"), a)
    committed = os.path.join(REPO, "tests", "fixtures", "bart_3x4x2")
    assert_same_array(cliper.io.imread(committed + ".cfl"), read_cfl_as_bart(committed))


# ---------------------------------------------------------------------------------------------------- refusals


@pytest.mark.parametrize("function,name", [(cliper.io.read_nifti, "none.nii.gz"), (cliper.io.imread, "none.png"),
                                           (cliper.io.imread, "none.npy"), (cliper.io.imread, "none.mat:x")])
def test_a_missing_file_is_file_not_found(tmp_path, function, name):
    with pytest.raises(FileNotFoundError) as error:
        function(str(tmp_path / name))
    assert_one_line(error)
    assert "none" in str(error.value)


@pytest.mark.parametrize("call", [lambda p: cliper.io.read_nifti(p / "a.png"), lambda p: cliper.io.imread(p / "a.nii"),
                                  lambda p: cliper.io.imwrite(p / "a.jpg", np.zeros((2, 2), np.uint8)),
                                  lambda p: cliper.io.write_nifti(p / "a.img", np.zeros((2, 2, 2)))])
def test_a_wrong_extension_is_a_value_error(tmp_path, call):
    with pytest.raises(ValueError) as error:
        call(tmp_path)
    assert_one_line(error)
    assert os.listdir(tmp_path) == []


def truncate(path, keep):
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(data[: int(len(data) * keep)])


def save_nifti(path):
    nib.save(nib.Nifti1Image(np.zeros((9, 8, 7), np.int16), np.eye(4)), path)


@pytest.mark.parametrize("writer,name,read", [
    (save_nifti, "t.nii", cliper.io.read_nifti),
    (save_nifti, "t.nii.gz", cliper.io.read_nifti),
    (lambda p: np.save(p, np.zeros((9, 8))), "t.npy", cliper.io.imread),
    (lambda p: Image.fromarray(np.arange(63, dtype=np.uint8).reshape(9, 7)).save(p), "t.png", cliper.io.imread),
    (lambda p: tifffile.imwrite(p, np.arange(63, dtype=np.uint16).reshape(9, 7)), "t.tif", cliper.io.imread),
    (lambda p: scipy.io.savemat(p, {"a": np.ones((9, 8))}), "t.mat", cliper.io.imread),
])
def test_a_truncated_file_is_one_line_value_error(tmp_path, writer, name, read):
    path = tmp_path / name
    writer(path)
    truncate(path, 0.6)
    with pytest.raises(ValueError) as error:
        read(path)
    assert_one_line(error)


def test_a_truncated_gzip_nifti_names_the_file(tmp_path):
    path = tmp_path / "cut.nii.gz"
    with gzip.open(path, "wb") as f:
        f.write(b"\x5c\x01" + b"\x00" * 200)  # sizeof_hdr 348, then nothing of a header
    with pytest.raises(ValueError) as error:
        cliper.io.read_nifti(path)
    assert_one_line(error)
    assert "cut.nii.gz" in str(error.value)


@pytest.mark.parametrize("call,what", [
    (lambda p: cliper.io.write_nifti(p / "h.nii", np.zeros((2, 3, 4), np.float16)), "float16"),
    (lambda p: cliper.io.write_nifti(p / "h.nii", np.zeros((2, 3, 4)), np.eye(3)), "4×4"),
    (lambda p: cliper.io.write_nifti(p / "h.nii", np.zeros((2, 3, 4)), np.full((4, 4), np.nan)), "non-finite"),
    (lambda p: cliper.io.write_nifti(p / "h.nii", np.zeros((2, 3, 4)), np.zeros((4, 4))), "non-zero, finite step"),
    (lambda p: cliper.io.write_nifti(p / "h.nii", np.float32(3)), "0-d"),
    (lambda p: cliper.io.write_nifti(p / "h.nii", np.zeros((1,) * 8)), "8 axes"),
    (lambda p: cliper.io.imwrite(p / "f.png", np.zeros((4, 5))), "f64"),
    (lambda p: cliper.io.imwrite(p / "s.npy", np.array(["a", "b"])), "<U1"),
    (lambda p: cliper.io.imwrite(p / "c.png", np.zeros((4, 5, 7), np.uint8)), "(4, 5, 7)"),
])
def test_bad_data_is_a_value_error_and_leaves_no_file(tmp_path, call, what):
    with pytest.raises(ValueError) as error:
        call(tmp_path)
    assert_one_line(error)
    assert what in str(error.value), str(error.value)
    assert os.listdir(tmp_path) == []


def test_spacing_is_nibabels_voxel_sizes():
    affine = oblique_affine([0.8, 1.3, 2.9], [1.0, 2.0, 3.0])
    np.testing.assert_allclose(cliper.io.spacing(affine), nib.affines.voxel_sizes(affine), rtol=1e-12)
