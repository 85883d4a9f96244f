#!/usr/bin/env python3
"""The batch benchmark's data and peers (`cliper-bench batch` runs this; docs/benchmarks.md, "Batches").

    peer_batch.py make-ct DIR --count N [--shape Z Y X]   synthetic CT volumes, as a scanner export holds them
    peer_batch.py make-png DIR --count N [--shape Y X]    16-bit grey PNGs
    peer_batch.py make-dicom DIR --count N [--shape Z Y X] series folders of int16 CT slices with a rescale
    peer_batch.py run CASE PEER IN OUT [--workers W]      the case's work with nibabel/pydicom/Pillow and scipy
                                                          (PEER scipy, one process or a pool of W) or CuPy

The CT volumes: NIfTI-1 int16 with scl_slope 0.5 and scl_inter -1024, affine diag(0.7, 0.7, 2.5), smooth
anatomy-like blobs plus noise (values -1024..~3000 HU), seeded per file so every run writes the same bytes.

The case (what `cliper run pipelines/bench/ct-batch.toml` does): gaussian_filter(sigma = 1 mm in voxels, every
axis, mode reflect) -> threshold (> 300 -> 1 else 0) -> label (every axis, face connectivity), written as NIfTI
int32 labels with the input's affine. The PNG case: gaussian sigma 2 -> sobel along the last axis -> |.| clipped
and written as 16-bit PNG. The DICOM case: each series' volume, gaussian sigma 1 mm, threshold, label -> NIfTI.

Each peer prints one line `PEER batch-CASE COUNTxSHAPE TOTAL_MS ms` (the whole batch, reading and writing
included) on stdout, and the volumes/s.
"""
import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

SLOPE, INTER = 0.5, -1024.0
SPACING = (0.7, 0.7, 2.5)  # x, y, z in mm (nibabel's axis order)


def ct_volume(seed, shape_zyx):
    """int16 stored samples of a synthetic CT, in nibabel's [x, y, z] order."""
    rng = np.random.default_rng(seed)
    z, y, x = shape_zyx
    hu = np.full((x, y, z), -1000.0, dtype=np.float32)
    gx, gy, gz = np.ogrid[:x, :y, :z]
    # A body, and a few bright (bone/contrast) blobs inside it.
    body = ((gx - x / 2) / (0.42 * x)) ** 2 + ((gy - y / 2) / (0.36 * y)) ** 2 <= 1.0
    hu[np.broadcast_to(body, hu.shape)] = 40.0
    for _ in range(12):
        cx, cy, cz = rng.uniform(0.3, 0.7) * x, rng.uniform(0.3, 0.7) * y, rng.uniform(0, 1) * z
        r = rng.uniform(0.03, 0.08) * x
        blob = ((gx - cx) ** 2 + (gy - cy) ** 2 + ((gz - cz) * SPACING[2] / SPACING[0]) ** 2) <= r * r
        hu[blob] = rng.uniform(400, 1800)
    hu += rng.normal(0, 60, hu.shape).astype(np.float32)
    stored = np.clip(np.round((hu - INTER) / SLOPE), -32768, 32767).astype(np.int16)
    return stored


def make_ct(out, count, shape):
    import nibabel as nib

    out.mkdir(parents=True, exist_ok=True)
    affine = np.diag([*SPACING, 1.0])
    for i in range(count):
        img = nib.Nifti1Image(ct_volume(i, shape), affine)
        img.header.set_slope_inter(SLOPE, INTER)
        img.header.set_data_dtype(np.int16)
        nib.save(img, out / f"ct{i:03}.nii")


def make_png(out, count, shape):
    from PIL import Image

    out.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        rng = np.random.default_rng(1000 + i)
        y, x = shape
        gy, gx = np.mgrid[:y, :x]
        img = 20000 + 15000 * np.sin(gx / (17 + i)) * np.cos(gy / 23) + rng.normal(0, 2000, shape)
        Image.fromarray(np.clip(img, 0, 65535).astype(np.uint16)).save(out / f"img{i:03}.png")


def make_dicom(out, count, shape):
    import pydicom
    from pydicom.dataset import FileDataset, FileMetaDataset
    from pydicom.uid import ExplicitVRLittleEndian, generate_uid

    for i in range(count):
        series = out / f"series{i:03}"
        series.mkdir(parents=True, exist_ok=True)
        stored = ct_volume(2000 + i, shape)  # [x, y, z]
        series_uid, study_uid = generate_uid(entropy_srcs=[f"s{i}"]), generate_uid(entropy_srcs=[f"t{i}"])
        for k in range(shape[0]):
            meta = FileMetaDataset()
            meta.MediaStorageSOPClassUID = "1.2.840.10008.5.1.4.1.1.2"
            meta.MediaStorageSOPInstanceUID = generate_uid(entropy_srcs=[f"s{i}", str(k)])
            meta.TransferSyntaxUID = ExplicitVRLittleEndian
            ds = FileDataset(None, {}, file_meta=meta, preamble=b"\0" * 128)
            ds.SOPClassUID, ds.SOPInstanceUID = meta.MediaStorageSOPClassUID, meta.MediaStorageSOPInstanceUID
            ds.Modality, ds.SeriesInstanceUID, ds.StudyInstanceUID = "CT", series_uid, study_uid
            ds.InstanceNumber = k + 1
            ds.ImagePositionPatient = [0.0, 0.0, k * SPACING[2]]
            ds.ImageOrientationPatient = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0]
            ds.PixelSpacing = [SPACING[1], SPACING[0]]
            ds.SliceThickness = SPACING[2]
            ds.Rows, ds.Columns = shape[1], shape[2]
            ds.SamplesPerPixel, ds.PhotometricInterpretation = 1, "MONOCHROME2"
            ds.BitsAllocated, ds.BitsStored, ds.HighBit, ds.PixelRepresentation = 16, 16, 15, 1
            ds.RescaleSlope, ds.RescaleIntercept = SLOPE, INTER
            ds.PixelData = np.ascontiguousarray(stored[:, :, k].T).tobytes()
            ds.save_as(series / f"IM{k:04}.dcm", enforce_file_format=True)


# --- the work, per file -------------------------------------------------------------------------------------


def ct_file(args):
    path, out, xp = args
    import nibabel as nib

    img = nib.load(path)
    values = img.get_fdata(dtype=np.float32)
    sigma = [1.0 / abs(s) for s in img.header.get_zooms()[:3]]
    labels = _smooth_threshold_label(values, sigma, xp)
    nib.save(nib.Nifti1Image(labels, img.affine), out / Path(path).name)


def dicom_series(args):
    folder, out, xp = args
    import nibabel as nib
    import pydicom

    slices = [pydicom.dcmread(f) for f in sorted(Path(folder).iterdir())]
    slices.sort(key=lambda d: float(d.ImagePositionPatient[2]))
    volume = np.stack([d.pixel_array.astype(np.float32) * float(d.RescaleSlope) + float(d.RescaleIntercept)
                       for d in slices])
    dz = float(slices[1].ImagePositionPatient[2]) - float(slices[0].ImagePositionPatient[2])
    dy, dx = (float(v) for v in slices[0].PixelSpacing)
    labels = _smooth_threshold_label(volume, [1.0 / dz, 1.0 / dy, 1.0 / dx], xp)
    # NIfTI's first axis is the column (x), its last the slice: the [slice, row, column] volume transposed, with
    # the series' affine in RAS+ (DICOM's LPS+ with x and y negated), as nibabel's and dcm2niix's conversions.
    nib.save(nib.Nifti1Image(labels.transpose(2, 1, 0), _series_affine(slices, dx, dy, dz)),
             out / (Path(folder).name + ".nii"))


def _series_affine(slices, dx, dy, dz):
    """nibabel's affine of a sorted series: column, row and slice directions scaled by their spacings, the first
    slice's position as the origin, LPS+ turned into RAS+."""
    cosines = np.array([float(v) for v in slices[0].ImageOrientationPatient])
    row_dir, col_dir = cosines[:3], cosines[3:]  # along a row (column index grows), down a column
    lps = np.eye(4)
    lps[:3, 0], lps[:3, 1], lps[:3, 2] = row_dir * dx, col_dir * dy, np.cross(row_dir, col_dir) * dz
    lps[:3, 3] = [float(v) for v in slices[0].ImagePositionPatient]
    return np.diag([-1.0, -1.0, 1.0, 1.0]) @ lps


def _smooth_threshold_label(values, sigma, xp):
    if xp == "cupy":
        import cupy as cp
        from cupyx.scipy import ndimage as cndi

        smooth = cndi.gaussian_filter(cp.asarray(values), sigma)
        labels, _ = cndi.label(smooth > 300)
        return cp.asnumpy(labels).astype(np.int32)
    from scipy import ndimage as ndi

    smooth = ndi.gaussian_filter(values, sigma)
    labels, _ = ndi.label(smooth > 300)
    return labels.astype(np.int32)


def png_file(args):
    path, out, xp = args
    from PIL import Image

    values = np.asarray(Image.open(path), dtype=np.float32)
    if xp == "cupy":
        import cupy as cp
        from cupyx.scipy import ndimage as cndi

        edges = cp.asnumpy(cp.abs(cndi.sobel(cndi.gaussian_filter(cp.asarray(values), 2.0), axis=-1)))
    else:
        from scipy import ndimage as ndi

        edges = np.abs(ndi.sobel(ndi.gaussian_filter(values, 2.0), axis=-1))
    Image.fromarray(np.clip(np.round(edges), 0, 65535).astype(np.uint16)).save(out / Path(path).name)


WORK = {"ct": ct_file, "png": png_file, "dicom": dicom_series}


def run(case, peer, inp, out, workers):
    out.mkdir(parents=True, exist_ok=True)
    files = sorted(str(p) for p in inp.iterdir() if not p.name.startswith("."))
    xp = "cupy" if peer == "cupy" else "numpy"
    work = WORK[case]
    jobs = [(f, out, xp) for f in files]
    if xp == "cupy":  # the first call builds CuPy's kernels: not the batch's time
        work(jobs[0])
    t0 = time.perf_counter()
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            list(pool.map(work, jobs))
    else:
        for job in jobs:
            work(job)
    ms = (time.perf_counter() - t0) * 1e3
    who = {"cupy": "cupy", "scipy": "scipy" if workers <= 1 else f"scipy-pool{workers}"}[peer]
    print(f"{who} batch-{case} {len(files)}files {ms:.1f} ms  {len(files) / ms * 1e3:.2f} files/s", flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    for name, default in (("make-ct", [160, 256, 256]), ("make-png", [1024, 1024]), ("make-dicom", [96, 256, 256])):
        m = sub.add_parser(name)
        m.add_argument("dir", type=Path)
        m.add_argument("--count", type=int, required=True)
        m.add_argument("--shape", type=int, nargs="+", default=default)
    r = sub.add_parser("run")
    r.add_argument("case", choices=sorted(WORK))
    r.add_argument("peer", choices=["scipy", "cupy"])
    r.add_argument("inp", type=Path)
    r.add_argument("out", type=Path)
    r.add_argument("--workers", type=int, default=1)
    a = p.parse_args()
    if a.cmd == "run":
        run(a.case, a.peer, a.inp, a.out, a.workers)
    else:
        {"make-ct": make_ct, "make-png": make_png, "make-dicom": make_dicom}[a.cmd](a.dir, a.count, tuple(a.shape))


if __name__ == "__main__":
    sys.exit(main())
