#!/usr/bin/env python3
"""Derived files of tests/fixtures/mri_h5 (make.sh runs this after writing ismrmrd.h5 and fastmri.h5), with h5py:
  ismrmrd_reference.npy   /dataset/cpp/data of ismrmrd.h5 (ismrmrd_recon_cartesian_2d's image, float32 [42, 42])
  fastmri_reference.npy   reconstruction_rss of fastmri.h5 (float32 [2, 20, 20])
and files the reader must refuse, each naming the field:
  fastmri_bad_header.h5   fastmri.h5 whose header says encodedSpace x 44 for k-space of 40
  ismrmrd_bad_line.h5     ismrmrd.h5's acquisitions and header, the 6th acquisition with kspace_encode_step_1 = 50 (of 42 lines)
  no_raw_data.h5          an HDF5 file with one unrelated dataset
    usage: python3 scripts/mri_h5/derive.py DIR
"""
import shutil
import sys
from pathlib import Path

import h5py
import numpy as np


def main(d):
    d = Path(d)
    with h5py.File(d / "ismrmrd.h5", "r") as f:
        np.save(d / "ismrmrd_reference.npy", f["dataset/cpp/data"][()].reshape(42, 42).astype(np.float32))
    with h5py.File(d / "fastmri.h5", "r") as f:
        np.save(d / "fastmri_reference.npy", f["reconstruction_rss"][()].astype(np.float32))
    shutil.copy(d / "fastmri.h5", d / "fastmri_bad_header.h5")
    with h5py.File(d / "fastmri_bad_header.h5", "r+") as f:
        text = f["ismrmrd_header"][()].decode()
        del f["ismrmrd_header"]
        f.create_dataset("ismrmrd_header", data=text.replace("<x>40</x>", "<x>44</x>", 1))
    with h5py.File(d / "ismrmrd.h5", "r") as src, h5py.File(d / "ismrmrd_bad_line.h5", "w") as f:
        group = f.create_group("dataset")
        src.copy("dataset/data", group)
        src.copy("dataset/xml", group)
        acquisitions = f["dataset/data"]
        record = acquisitions[5]
        record["head"]["idx"]["kspace_encode_step_1"] = 50
        acquisitions[5] = record
    with h5py.File(d / "no_raw_data.h5", "w") as f:
        f.create_dataset("image", data=np.zeros((3, 4), np.float32))


if __name__ == "__main__":
    main(sys.argv[1])
