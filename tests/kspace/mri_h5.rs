//! HDF5 raw data (`read_mri_h5`) on tests/fixtures/mri_h5 (make.sh there): ISMRMRD 1.8.0's generated Shepp–Logan
//! file and a fastMRI-layout file written by h5py. Each is reconstructed here by `RSoSRecon` from what the reader
//! gives (k-space, header) and compared with the file's own reconstruction: `ismrmrd_recon_cartesian_2d`'s (FFTW's
//! unnormalised inverse FFT: √N times the unitary one) and fastMRI's `reconstruction_rss` (unitary). Float32 FFTs
//! of these sizes agree to a few 1e-7: the tolerance is 1e-5 NRMSE. Files whose header does not fit their data are
//! refused naming the field.

use super::common;
use cliper::prelude::*;
use cliper::{MriFormat, read_mri_h5, read_npy};
use num_complex::Complex32;

const DIR: &str = "tests/fixtures/mri_h5";

/// The RSoS image of `raw` on the unitary transform's scale, cut to the recon matrix.
fn rsos(raw: &cliper::MriRaw) -> Vec<f32> {
    let app = common::app();
    let n: usize = raw.shape[2..].iter().product();
    let k = XData::from_slice(app, &raw.shape, &raw.kspace).unwrap();
    let image = RSoSRecon::apply(&KData::new(k, raw.shape.len() - 2).unwrap(), ReconParams::default()).unwrap();
    // RSoSRecon scales by 1/N (numpy's ifftn): × √N is the unitary transform's image.
    let unitary: Vec<f32> = image.to_vec().unwrap().iter().map(|v| v * (n as f32).sqrt()).collect();
    raw.crop(&unitary)
}

fn nrmse(a: &[f32], b: &[f32]) -> f64 {
    let d: f64 = a.iter().zip(b).map(|(x, y)| f64::from(x - y).powi(2)).sum();
    let n: f64 = b.iter().map(|y| f64::from(*y).powi(2)).sum();
    (d / n).sqrt()
}

fn reference(name: &str) -> Vec<f32> {
    let path = format!("{DIR}/{name}");
    read_npy(&path).unwrap().to_elements::<f32>(std::path::Path::new(&path)).unwrap().iter().copied().collect()
}

#[test]
fn ismrmrd_file_reads_with_its_header_and_matches_its_reconstruction() {
    let raw = read_mri_h5(format!("{DIR}/ismrmrd.h5")).unwrap();
    assert_eq!(raw.format, MriFormat::Ismrmrd);
    assert_eq!(raw.shape, vec![1, 4, 42, 84]);
    assert_eq!((raw.header.encoded.matrix, raw.header.recon.matrix), ([84, 42, 1], [42, 42, 1]));
    assert_eq!(raw.header.trajectory, "cartesian");
    assert_eq!(raw.recon_shape(), vec![42, 42]);
    assert!(raw.kspace.iter().all(|v| v.re.is_finite()) && raw.kspace.iter().any(|v| *v != Complex32::default()));
    let ours = rsos(&raw);
    // The tool's image is √(84 · 42) times the unitary one.
    let tool: Vec<f32> = reference("ismrmrd_reference.npy").iter().map(|v| v / (84.0f32 * 42.0).sqrt()).collect();
    let e = nrmse(&ours, &tool);
    assert!(e < 1e-5, "against ismrmrd_recon_cartesian_2d: {e:e}");
}

#[test]
fn fastmri_file_reads_and_matches_reconstruction_rss() {
    let raw = read_mri_h5(format!("{DIR}/fastmri.h5")).unwrap();
    assert_eq!(raw.format, MriFormat::FastMri);
    assert_eq!(raw.shape, vec![2, 4, 40, 26]);
    assert_eq!((raw.header.encoded.matrix, raw.header.recon.matrix), ([40, 26, 1], [20, 20, 1]));
    assert_eq!(raw.header.encoded.fov_mm, [280.0, 182.0, 4.5]);
    assert_eq!(raw.header.center_line, Some(13));
    let (shape, values) = raw.reference.clone().unwrap();
    assert_eq!(shape, vec![2, 20, 20]);
    assert_eq!(values, reference("fastmri_reference.npy"));
    let e = nrmse(&rsos(&raw), &values);
    assert!(e < 1e-5, "against reconstruction_rss: {e:e}");
}

#[test]
fn raw_files_that_do_not_fit_their_header_are_refused_naming_the_field() {
    for (name, expected) in [
        ("fastmri_bad_header.h5", "encodedSpace/matrixSize is x 44"),
        ("ismrmrd_bad_line.h5", "acquisition 5: kspace_encode_step_1 places it at 50, outside the encoded 42"),
        ("no_raw_data.h5", "without /dataset/data (ISMRMRD) or /kspace (fastMRI)"),
        ("missing.h5", "missing.h5"),
    ] {
        let text = read_mri_h5(format!("{DIR}/{name}")).unwrap_err().to_string();
        assert!(text.contains(expected) && text.contains(name) && !text.contains('\n'), "{name}: {text}");
    }
}
