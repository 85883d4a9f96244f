//! MRI raw data in HDF5 files ([`read_mri_h5`]): ISMRMRD (`/dataset/data`, the acquisitions, and `/dataset/xml`, the
//! header) and the fastMRI layout (`kspace`, `ismrmrd_header`, `reconstruction_rss` / `reconstruction_esc`), read
//! with their header's encoding: matrix sizes, fields of view, the k-space centre. Cartesian only; everything a
//! file says that does not fit its data is refused naming the file and the field.

mod records;

use crate::error::{Error, Result};
use crate::io::check_host_memory;
use hdf5_metno::File;
use num_complex::Complex32;
use records::{Acquisition, ComplexRI};
use std::path::{Path, PathBuf};

/// Which layout an HDF5 file holds.
///
/// ```
/// assert_ne!(cliper::MriFormat::Ismrmrd, cliper::MriFormat::FastMri);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MriFormat {
    /// ISMRMRD: acquisitions (one readout line of every channel each) placed by their encoding counters.
    Ismrmrd,
    /// fastMRI: `kspace` `[slices, coils, x, y]` (`[slices, x, y]` single-coil), x the readout.
    FastMri,
}

/// One encoding space of an ISMRMRD header: the matrix (x, y, z) and field of view in mm.
///
/// ```
/// let s = cliper::EncodingSpace { matrix: [116, 58, 1], fov_mm: [600.0, 300.0, 6.0] };
/// assert_eq!(s.matrix[0], 116);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EncodingSpace {
    /// Samples along x (the readout), y and z.
    pub matrix: [usize; 3],
    /// The field of view along x, y and z, in mm.
    pub fov_mm: [f64; 3],
}

/// What an ISMRMRD XML header says of the (first) encoding.
///
/// ```
/// let xml = r#"<ismrmrdHeader><encoding><encodedSpace><matrixSize><x>8</x><y>6</y><z>1</z></matrixSize>
///   <fieldOfView_mm><x>20</x><y>10</y><z>5</z></fieldOfView_mm></encodedSpace>
///   <reconSpace><matrixSize><x>4</x><y>6</y><z>1</z></matrixSize>
///   <fieldOfView_mm><x>10</x><y>10</y><z>5</z></fieldOfView_mm></reconSpace>
///   <trajectory>cartesian</trajectory></encoding></ismrmrdHeader>"#;
/// let h = cliper::MriHeader::parse(xml, "scan.h5")?;
/// assert_eq!((h.encoded.matrix, h.recon.matrix, h.center_line), ([8, 6, 1], [4, 6, 1], None));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct MriHeader {
    /// The encoded space (k-space as acquired; x oversampled as the scanner sampled it).
    pub encoded: EncodingSpace,
    /// The reconstruction space (the image the scan is meant to give).
    pub recon: EncodingSpace,
    /// The trajectory (`cartesian`, `radial`, …).
    pub trajectory: String,
    /// `encodingLimits/kspace_encoding_step_1/center`: the line at the centre of k-space, when given.
    pub center_line: Option<usize>,
    /// `encodingLimits/kspace_encoding_step_2/center`, when given.
    pub center_partition: Option<usize>,
}

impl MriHeader {
    /// Parses the XML header of the file `source` (named in refusals).
    pub fn parse(xml: &str, source: &str) -> Result<MriHeader> {
        let format = |reason: String| Error::Format { path: PathBuf::from(source), reason };
        let doc = roxmltree::Document::parse(xml).map_err(|e| format(format!("the ISMRMRD header is not XML: {e}")))?;
        let encoding = child(doc.root_element(), "encoding")
            .ok_or_else(|| format("the ISMRMRD header has no encoding".to_string()))?;
        let number = |path: &[&str]| -> Result<f64> {
            let text = path
                .iter()
                .try_fold(encoding, |node, name| child(node, name))
                .and_then(|n| n.text())
                .ok_or_else(|| format(format!("the ISMRMRD header has no encoding/{}", path.join("/"))))?;
            text.trim()
                .parse::<f64>()
                .map_err(|_| format(format!("encoding/{} = {text:?} is not a number", path.join("/"))))
        };
        let space = |name: &str| -> Result<EncodingSpace> {
            let mut matrix = [0usize; 3];
            let mut fov_mm = [0.0f64; 3];
            for (axis, (m, f)) in ["x", "y", "z"].iter().zip(matrix.iter_mut().zip(fov_mm.iter_mut())) {
                let n = number(&[name, "matrixSize", axis])?;
                if !(n >= 1.0 && n.fract() == 0.0 && n <= 65535.0) {
                    return Err(format(format!(
                        "encoding/{name}/matrixSize/{axis} = {n}: a size is a whole number ≥ 1"
                    )));
                }
                *m = n as usize;
                *f = number(&[name, "fieldOfView_mm", axis])?;
            }
            Ok(EncodingSpace { matrix, fov_mm })
        };
        let center = |step: &str| {
            number(&["encodingLimits", step, "center"])
                .ok()
                .filter(|c| *c >= 0.0 && c.fract() == 0.0)
                .map(|c| c as usize)
        };
        Ok(MriHeader {
            encoded: space("encodedSpace")?,
            recon: space("reconSpace")?,
            trajectory: child(encoding, "trajectory").and_then(|n| n.text()).unwrap_or("cartesian").trim().to_string(),
            center_line: center("kspace_encoding_step_1"),
            center_partition: center("kspace_encoding_step_2"),
        })
    }
}

/// The first child element of `node` named `name` (namespaces ignored).
fn child<'a, 'i>(node: roxmltree::Node<'a, 'i>, name: &str) -> Option<roxmltree::Node<'a, 'i>> {
    node.children().find(|n| n.is_element() && n.tag_name().name() == name)
}

/// Cartesian k-space read from an HDF5 raw-data file, with its header.
///
/// The k-space is `[frames, coils, spatial…]`, centred (zero frequency at ⌊n/2⌋ along each axis):
/// - ISMRMRD: frames are repetition × slice (repetition slowest); spatial `[y, x]` or `[z, y, x]` (x fastest, as
///   ISMRMRD's images are stored), lines placed by `kspace_encode_step_1/2` shifted so that the header's centre line
///   is at ⌊n/2⌋, samples by `center_sample`;
/// - fastMRI: frames are slices; spatial `[x, y]` as the file holds them (x the readout), so the images line up
///   with `reconstruction_rss`.
///
/// ```no_run
/// let raw = cliper::read_mri_h5("scan.h5")?;
/// println!("{:?}: k-space {:?}, recon matrix {:?}", raw.format, raw.shape, raw.header.recon.matrix);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct MriRaw {
    /// The layout the file held.
    pub format: MriFormat,
    /// `[frames, coils, spatial…]`.
    pub shape: Vec<usize>,
    /// The samples, row-major in `shape`.
    pub kspace: Vec<Complex32>,
    /// The header's encoding.
    pub header: MriHeader,
    /// The file's own reconstruction when it holds one (fastMRI's `reconstruction_rss` or `_esc`: `[slices, x, y]`
    /// cropped to the recon matrix), with its shape.
    pub reference: Option<(Vec<usize>, Vec<f32>)>,
}

impl MriRaw {
    /// The spatial shape of the images the header asks for: each spatial axis of the k-space cut to the recon
    /// matrix where that is smaller (readout oversampling removed; fastMRI's 320 × 320).
    ///
    /// ```
    /// use cliper::{EncodingSpace, MriFormat, MriHeader, MriRaw};
    /// let space = |m| EncodingSpace { matrix: m, fov_mm: [1.0; 3] };
    /// let header = MriHeader { encoded: space([8, 6, 1]), recon: space([4, 6, 1]), trajectory: "cartesian".into(),
    ///     center_line: None, center_partition: None };
    /// let raw = MriRaw { format: MriFormat::Ismrmrd, shape: vec![1, 2, 6, 8], kspace: vec![Default::default(); 96],
    ///     header, reference: None };
    /// assert_eq!(raw.recon_shape(), vec![6, 4]);
    /// ```
    pub fn recon_shape(&self) -> Vec<usize> {
        let spatial = self.shape.get(2..).unwrap_or_default();
        spatial
            .iter()
            .zip(self.header_axes())
            .map(|(&n, axis)| n.min(self.header.recon.matrix.get(axis).copied().unwrap_or(n)))
            .collect()
    }

    /// Which header axis (0 x, 1 y, 2 z) each spatial axis is.
    fn header_axes(&self) -> Vec<usize> {
        match (self.format, self.shape.len().saturating_sub(2)) {
            (MriFormat::FastMri, _) => vec![0, 1],
            (MriFormat::Ismrmrd, 3) => vec![2, 1, 0],
            (MriFormat::Ismrmrd, _) => vec![1, 0],
        }
    }

    /// `images` (`[frames, spatial…]` of the k-space's spatial shape, row-major) cut around the centre to
    /// [`MriRaw::recon_shape`]: along an axis of n cut to m the first kept index is ⌊(n − m)/2⌋, as ISMRMRD's
    /// `recon_cartesian_2d` and fastMRI's `center_crop` cut.
    pub fn crop<E: Copy>(&self, images: &[E]) -> Vec<E> {
        let spatial = self.shape.get(2..).unwrap_or_default().to_vec();
        let kept = self.recon_shape();
        let starts: Vec<usize> = spatial.iter().zip(&kept).map(|(n, m)| (n - m) / 2).collect();
        let (size, out_size): (usize, usize) = (spatial.iter().product(), kept.iter().product());
        let mut out = Vec::with_capacity(images.len() / size.max(1) * out_size);
        for frame in images.chunks(size.max(1)) {
            for i in 0..out_size {
                // Output element i's index along each axis (row-major in `kept`), moved by the axis's start.
                let (mut rest, mut at, mut divisor) = (i, 0usize, out_size);
                for ((&m, &s), &n) in kept.iter().zip(&starts).zip(&spatial) {
                    divisor /= m.max(1);
                    let index = rest / divisor.max(1);
                    rest %= divisor.max(1);
                    at = at * n + s + index;
                }
                if let Some(&v) = frame.get(at) {
                    out.push(v);
                }
            }
        }
        out
    }
}

/// Reads an ISMRMRD or fastMRI HDF5 file (which one is told by its datasets), checking the samples' memory
/// against the host budget first.
pub fn read_mri_h5(path: impl AsRef<Path>) -> Result<MriRaw> {
    let path = path.as_ref();
    let file = File::open(path).map_err(|e| h5_error(path, "open", &e))?;
    if file.link_exists("dataset/data") {
        read_ismrmrd(path, &file)
    } else if file.link_exists("kspace") {
        read_fastmri(path, &file)
    } else {
        Err(Error::Format {
            path: path.to_path_buf(),
            reason: "an HDF5 file without /dataset/data (ISMRMRD) or /kspace (fastMRI): no MRI raw data to read"
                .to_string(),
        })
    }
}

fn h5_error(path: &Path, what: &str, e: &hdf5_metno::Error) -> Error {
    Error::Format { path: path.to_path_buf(), reason: format!("HDF5: cannot {what}: {e}") }
}

/// A string dataset (ISMRMRD's `/dataset/xml`, a one-element array; fastMRI's `ismrmrd_header`, a scalar), whichever
/// string type it was written with.
fn read_text(path: &Path, file: &File, name: &str) -> Result<String> {
    use hdf5_metno::types::{VarLenAscii, VarLenUnicode};
    let ds = file.dataset(name).map_err(|e| h5_error(path, &format!("open {name}"), &e))?;
    let first = |v: Vec<String>| v.into_iter().next();
    ds.read_raw::<VarLenUnicode>()
        .ok()
        .and_then(|v| first(v.iter().map(|s| s.as_str().to_string()).collect()))
        .or_else(|| {
            ds.read_raw::<VarLenAscii>().ok().and_then(|v| first(v.iter().map(|s| s.as_str().to_string()).collect()))
        })
        .or_else(|| ds.read_raw::<u8>().ok().map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
        .ok_or_else(|| Error::Format { path: path.to_path_buf(), reason: format!("{name} is not a string dataset") })
}

/// ISMRMRD flags (bit = flag − 1) of acquisitions that are not imaging lines: noise, navigator, phase correction,
/// feedback, dummy scans, surface-coil correction.
const NOT_IMAGING: [u32; 7] = [19, 23, 24, 25, 26, 27, 28];

fn read_ismrmrd(path: &Path, file: &File) -> Result<MriRaw> {
    let source = path.display().to_string();
    let header = MriHeader::parse(&read_text(path, file, "dataset/xml")?, &source)?;
    let refuse = |reason: String| Error::Format { path: path.to_path_buf(), reason };
    if header.trajectory != "cartesian" {
        return Err(refuse(format!(
            "encoding/trajectory is {:?}: only Cartesian ISMRMRD files are read",
            header.trajectory
        )));
    }
    let acquisitions = file
        .dataset("dataset/data")
        .and_then(|d| d.read_raw::<Acquisition>())
        .map_err(|e| h5_error(path, "read /dataset/data", &e))?;
    let imaging: Vec<&Acquisition> = acquisitions
        .iter()
        .filter(|a| NOT_IMAGING.iter().all(|flag| a.head.flags & (1u64 << (flag - 1)) == 0))
        .collect();
    let Some(first) = imaging.first() else {
        return Err(refuse("/dataset/data holds no imaging acquisition".to_string()));
    };
    let coils = usize::from(first.head.active_channels);
    let [nx, ny, nz] = header.encoded.matrix;
    let (slices, repetitions) = imaging.iter().fold((1usize, 1usize), |(s, r), a| {
        (s.max(usize::from(a.head.idx.slice) + 1), r.max(usize::from(a.head.idx.repetition) + 1))
    });
    let frames = slices * repetitions;
    let count = frames * coils * nx * ny * nz;
    check_host_memory(path, "the k-space", (count * std::mem::size_of::<Complex32>()) as u64)?;
    let mut kspace = vec![Complex32::default(); count];
    let line_shift = header.center_line.map_or(0, |c| ny as i64 / 2 - c as i64);
    let partition_shift = header.center_partition.map_or(0, |c| nz as i64 / 2 - c as i64);
    for (number, a) in imaging.iter().enumerate() {
        let h = &a.head;
        let at = |field: &str, value: i64, n: usize| -> Result<usize> {
            usize::try_from(value).ok().filter(|&v| v < n).ok_or_else(|| {
                refuse(format!("acquisition {number}: {field} places it at {value}, outside the encoded {n}"))
            })
        };
        if usize::from(h.active_channels) != coils {
            return Err(refuse(format!(
                "acquisition {number}: active_channels {} where the first imaging acquisition has {coils}",
                h.active_channels
            )));
        }
        let samples = usize::from(h.number_of_samples);
        if a.data.len() != 2 * samples * coils {
            return Err(refuse(format!(
                "acquisition {number}: {} floats of data for number_of_samples {samples} × active_channels {coils}",
                a.data.len()
            )));
        }
        if h.idx.contrast != 0 || h.idx.phase != 0 || h.idx.set != 0 || h.idx.average != 0 {
            return Err(refuse(format!(
                "acquisition {number}: contrast/phase/set/average counters ({}, {}, {}, {}) are not read (only slices \
                 and repetitions)",
                h.idx.contrast, h.idx.phase, h.idx.set, h.idx.average
            )));
        }
        let y = at("kspace_encode_step_1", i64::from(h.idx.kspace_encode_step_1) + line_shift, ny)?;
        let z = at("kspace_encode_step_2", i64::from(h.idx.kspace_encode_step_2) + partition_shift, nz)?;
        let x0 = nx as i64 / 2 - i64::from(h.center_sample);
        at("center_sample", x0, nx)?;
        at("number_of_samples", x0 + samples as i64 - 1, nx)?;
        let frame = usize::from(h.idx.repetition) * slices + usize::from(h.idx.slice);
        for c in 0..coils {
            let row = (((frame * coils + c) * nz + z) * ny + y) * nx;
            for s in 0..samples {
                let value = Complex32::new(
                    a.data.get(2 * (c * samples + s)).copied().unwrap_or(0.0),
                    a.data.get(2 * (c * samples + s) + 1).copied().unwrap_or(0.0),
                );
                if let Some(slot) = kspace.get_mut(row + x0 as usize + s) {
                    *slot = value;
                }
            }
        }
    }
    let shape = if nz > 1 { vec![frames, coils, nz, ny, nx] } else { vec![frames, coils, ny, nx] };
    Ok(MriRaw { format: MriFormat::Ismrmrd, shape, kspace, header, reference: None })
}

fn read_fastmri(path: &Path, file: &File) -> Result<MriRaw> {
    let source = path.display().to_string();
    let header = MriHeader::parse(&read_text(path, file, "ismrmrd_header")?, &source)?;
    let refuse = |reason: String| Error::Format { path: path.to_path_buf(), reason };
    let ds = file.dataset("kspace").map_err(|e| h5_error(path, "open /kspace", &e))?;
    let dims = ds.shape();
    let (slices, coils, nx, ny) = match dims[..] {
        [s, c, x, y] => (s, c, x, y),
        [s, x, y] => (s, 1, x, y),
        _ => {
            return Err(refuse(format!(
                "kspace has shape {dims:?}: fastMRI's is [slices, coils, x, y] or [slices, x, y]"
            )));
        }
    };
    let [ex, ey, _] = header.encoded.matrix;
    if (nx, ny) != (ex, ey) && (nx, ny) != (ex, header.recon.matrix[1]) {
        return Err(refuse(format!(
            "kspace is {nx} × {ny} but the header's encodedSpace/matrixSize is x {ex}, y {ey}"
        )));
    }
    check_host_memory(path, "the k-space", (slices * coils * nx * ny * std::mem::size_of::<Complex32>()) as u64)?;
    let kspace: Vec<Complex32> = ds
        .read_raw::<ComplexRI>()
        .map_err(|e| h5_error(path, "read /kspace (complex64 as h5py writes it, members r and i)", &e))?
        .into_iter()
        .map(|v| Complex32::new(v.r, v.i))
        .collect();
    let reference = ["reconstruction_rss", "reconstruction_esc"]
        .iter()
        .find(|name| file.link_exists(name))
        .map(|name| -> Result<(Vec<usize>, Vec<f32>)> {
            let ds = file.dataset(name).map_err(|e| h5_error(path, &format!("open /{name}"), &e))?;
            let values = ds.read_raw::<f32>().map_err(|e| h5_error(path, &format!("read /{name}"), &e))?;
            Ok((ds.shape(), values))
        })
        .transpose()?;
    Ok(MriRaw { format: MriFormat::FastMri, shape: vec![slices, coils, nx, ny], kspace, header, reference })
}
