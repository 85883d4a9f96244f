#!/usr/bin/env python3
"""Writes a small file in the fastMRI layout (tests/fixtures/mri_h5/fastmri.h5) with h5py: `kspace` [slices, coils,
x, y] complex64 (x the readout), `ismrmrd_header` (an ISMRMRD XML header: encodedSpace 40 × 26, reconSpace 20 × 20)
and `reconstruction_rss` [slices, 20, 20] float32, computed as fastMRI's data pipeline computes it: per coil
`fftshift(ifft2(ifftshift(k), norm="ortho"))` over the last two axes, the root sum of squares over the coils, then
`center_crop` (the first kept index ⌊(n − m)/2⌋). The images are two ellipse phantoms seen by four coils with smooth
complex sensitivities; the shape (40 × 26, odd halves) is not a multiple of anything.
    usage: python3 scripts/mri_h5/make_fastmri.py OUT.h5
"""
import sys

import h5py
import numpy as np

HEADER = """<?xml version="1.0" encoding="utf-8"?>
<ismrmrdHeader xmlns="http://www.ismrm.org/ISMRMRD">
  <encoding>
    <encodedSpace><matrixSize><x>40</x><y>26</y><z>1</z></matrixSize>
      <fieldOfView_mm><x>280</x><y>182</y><z>4.5</z></fieldOfView_mm></encodedSpace>
    <reconSpace><matrixSize><x>20</x><y>20</y><z>1</z></matrixSize>
      <fieldOfView_mm><x>140</x><y>140</y><z>4.5</z></fieldOfView_mm></reconSpace>
    <encodingLimits><kspace_encoding_step_1><minimum>0</minimum><maximum>25</maximum><center>13</center>
      </kspace_encoding_step_1></encodingLimits>
    <trajectory>cartesian</trajectory>
  </encoding>
</ismrmrdHeader>
"""


def main(out):
    nx, ny, coils, slices = 40, 26, 4, 2
    x, y = np.meshgrid(np.arange(nx) - nx / 2, np.arange(ny) - ny / 2, indexing="ij")
    images = []
    for s in range(slices):
        inside = (x / (9 + 2 * s)) ** 2 + (y / 7) ** 2 <= 1
        small = ((x - 3) / 3) ** 2 + ((y + 2 + s) / 2) ** 2 <= 1
        images.append(inside * 1.0 + small * 0.5)
    angles = 2 * np.pi * np.arange(coils) / coils
    sens = np.stack([np.exp(-((x - 12 * np.cos(a)) ** 2 + (y - 8 * np.sin(a)) ** 2) / 400) * np.exp(1j * (0.05 * x + a))
                     for a in angles])
    axes = (-2, -1)
    coil_images = np.stack([sens * im for im in images])  # [slices, coils, x, y]
    kspace = np.fft.fftshift(np.fft.fft2(np.fft.ifftshift(coil_images, axes=axes), norm="ortho"), axes=axes)
    kspace = kspace.astype(np.complex64)
    recon = np.fft.fftshift(np.fft.ifft2(np.fft.ifftshift(kspace, axes=axes), norm="ortho"), axes=axes)
    rss = np.sqrt((np.abs(recon) ** 2).sum(axis=1))
    w0, h0 = (nx - 20) // 2, (ny - 20) // 2
    rss = rss[:, w0:w0 + 20, h0:h0 + 20].astype(np.float32)
    with h5py.File(out, "w") as f:
        f.create_dataset("kspace", data=kspace)
        f.create_dataset("ismrmrd_header", data=HEADER)
        f.create_dataset("reconstruction_rss", data=rss)
        f.attrs["acquisition"] = "CORPD_FBK"
        f.attrs["max"] = float(rss.max())
    print(f"{out}: kspace {kspace.shape}, reconstruction_rss {rss.shape}")


if __name__ == "__main__":
    main(sys.argv[1])
