//! What each fuzz target does with its input, shared by the targets (fuzz/targets/fuzz_targets/*.rs, under
//! libFuzzer) and by the replay of the committed corpora (tests/replay.rs, in `make test`).
//!
//! A loader may return any error for any input; it must not panic, hang, or allocate more than the input can
//! hold (libFuzzer's -rss_limit_mb and -malloc_limit_mb catch that).

use cliper::chain::{Chain, ConvolveArgs, Op};
use cliper::{Dtype, Endian, RawFormat};
use std::path::Path;

/// A target: the input's bytes in, whether they loaded out.
pub type Target = fn(&[u8]) -> bool;

/// The same bytes as a file read by the slab reader `open` (what tiled chains read): opened, then read in two
/// slabs of its first axis. Any error is fine; a panic is not.
fn in_slabs(data: &[u8], extension: &str, open: impl Fn(&Path) -> cliper::Result<Option<cliper::SlabFile>>) {
    let path = std::env::temp_dir().join(format!(
        "cliper-fuzz-slab-{}-{:?}.{extension}",
        std::process::id(),
        std::thread::current().id()
    ));
    if std::fs::write(&path, data).is_ok()
        && let Ok(Some(file)) = open(&path)
    {
        let n = file.shape().first().copied().unwrap_or(0);
        let _ = file.read(0, 0..n / 2);
        let _ = file.read(0, n / 2..n);
    }
    let _ = std::fs::remove_file(&path);
}

/// The targets, by the name of their corpus directory.
pub const TARGETS: [(&str, Target); 11] = [
    ("png", png),
    ("tiff", tiff),
    ("mat", mat),
    ("cfl", cfl),
    ("npy", npy),
    ("raw", raw),
    ("pipeline", pipeline),
    ("nifti", nifti),
    ("nrrd", nrrd),
    ("metaimage", metaimage),
    ("dicom", dicom),
];

pub fn png(data: &[u8]) -> bool {
    cliper::decode_png(data).is_ok()
}

pub fn tiff(data: &[u8]) -> bool {
    in_slabs(data, "tif", |p| cliper::SlabFile::open_tiff(p));
    cliper::decode_tiff(data).is_ok()
}

pub fn mat(data: &[u8]) -> bool {
    cliper::decode_mat(data).is_ok()
}

/// The header's text, a NUL byte, then the data file's bytes.
pub fn cfl(data: &[u8]) -> bool {
    let (header, bytes) = match data.iter().position(|&b| b == 0) {
        Some(at) => (data.get(..at).unwrap_or_default(), data.get(at + 1..).unwrap_or_default()),
        None => (data, &[][..]),
    };
    cliper::decode_cfl(&String::from_utf8_lossy(header), bytes).is_ok()
}

pub fn npy(data: &[u8]) -> bool {
    cliper::decode_npy(data).is_ok()
}

/// The RAW loader's header is the caller's [`RawFormat`]: byte 0 picks the type (low 4 bits, modulo 12) and the
/// byte order (bit 7), byte 1 the number of axes (0 to 7), then 8 little-endian bytes per extent (any u64, so
/// shapes claiming 2⁴⁰ elements or overflowing come up), then the data.
pub fn raw(data: &[u8]) -> bool {
    let [kind, axes, rest @ ..] = data else { return false };
    let dtype = Dtype::ALL.get(usize::from(kind & 0x0f) % Dtype::ALL.len()).copied().unwrap_or(Dtype::U8);
    let endian = if kind & 0x80 != 0 { Endian::Big } else { Endian::Little };
    let axes = usize::from(axes % 8);
    let (extents, bytes) = rest.split_at(rest.len().min(axes * 8));
    let shape: Vec<usize> = extents
        .chunks(8)
        .map(|c| {
            let mut word = [0u8; 8];
            word.iter_mut().zip(c).for_each(|(w, b)| *w = *b);
            u64::from_le_bytes(word) as usize
        })
        .collect();
    // A successful load used every byte: the size check before decoding is what keeps huge claims out.
    match cliper::decode_raw(bytes, &RawFormat { shape, dtype, endian }) {
        Ok(a) => {
            assert_eq!(a.shape().iter().product::<usize>() * dtype.size(), bytes.len(), "{:?} {dtype:?}", a.shape());
            true
        }
        Err(_) => false,
    }
}

/// The pipeline file parsed, then what each step builds on the host from its text before touching a device:
/// named filters (`gaussian:1e15` once asked for 64 PB) and borders.
pub fn pipeline(data: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(data) else { return false };
    let Ok(chain) = Chain::from_toml(text, Path::new("fuzz.toml")) else { return false };
    for step in &chain.steps {
        // Borders are parsed with the step (`ScipyBorder`): a bad one never gets this far.
        if let Op::Convolve(ConvolveArgs { kernel, rank, .. }) = &step.op {
            let _ = cliper::Filter::<f32>::named(kernel, rank.unwrap_or(2));
        }
    }
    true
}

/// NIfTI-1 or NIfTI-2 bytes, plain or gzipped, to `decode_nifti`.
pub fn nifti(data: &[u8]) -> bool {
    in_slabs(data, "nii", |p| cliper::SlabFile::open_nifti(p));
    cliper::decode_nifti(data).is_ok()
}

/// A NRRD file with attached data.
pub fn nrrd(data: &[u8]) -> bool {
    cliper::decode_nrrd(data).is_ok()
}

/// A MetaImage file with `ElementDataFile = LOCAL` data.
pub fn metaimage(data: &[u8]) -> bool {
    cliper::decode_metaimage(data).is_ok()
}

/// The bytes of one DICOM part 10 file to `decode_dicom` (parse, decode every transfer syntax, geometry).
pub fn dicom(data: &[u8]) -> bool {
    cliper::decode_dicom(data).is_ok()
}
