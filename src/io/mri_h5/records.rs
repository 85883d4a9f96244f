//! The HDF5 compound records cliper reads from MRI raw-data files, as `hdf5-metno` types. Each is `#[repr(C)]` and
//! its `H5Type` is derived: the derive computes the members' offsets from the Rust layout, which is the guarantee its
//! `unsafe impl` states, and libhdf5 converts a file's record into it by member name (a record here names a subset
//! of the file's members; the others are skipped). Nothing else here is unsafe, and nothing is hand-written unsafe.
#![allow(unsafe_code)]

use hdf5_metno::H5Type;
use hdf5_metno::types::VarLenArray;

/// ISMRMRD's encoding counters (`idx` of an acquisition header), the ones cliper places lines by.
#[derive(H5Type, Clone, Copy, Debug, Default)]
#[repr(C)]
pub(super) struct EncodingCounters {
    pub kspace_encode_step_1: u16,
    pub kspace_encode_step_2: u16,
    pub average: u16,
    pub slice: u16,
    pub contrast: u16,
    pub phase: u16,
    pub repetition: u16,
    pub set: u16,
}

/// ISMRMRD's acquisition header, the members cliper reads.
#[derive(H5Type, Clone, Copy, Debug, Default)]
#[repr(C)]
pub(super) struct AcquisitionHeader {
    pub flags: u64,
    pub number_of_samples: u16,
    pub active_channels: u16,
    pub center_sample: u16,
    pub trajectory_dimensions: u16,
    pub idx: EncodingCounters,
}

/// One ISMRMRD acquisition: its header and its samples, `[channels][samples]` as interleaved float pairs (the
/// trajectory is not read: cliper reads Cartesian ISMRMRD files).
#[derive(H5Type, Clone, Debug)]
#[repr(C)]
pub(super) struct Acquisition {
    pub head: AcquisitionHeader,
    pub data: VarLenArray<f32>,
}

/// A complex64 element as h5py writes numpy's complex64 (members `r`, `i`: fastMRI's `kspace`).
#[derive(H5Type, Clone, Copy, Debug, Default)]
#[repr(C)]
pub(super) struct ComplexRI {
    pub r: f32,
    pub i: f32,
}
