//! Undersampled MRI reconstruction, the whole way: BART-format k-space with its ESPIRiT maps and Poisson-disc mask
//! (acceleration ≈ 4), the zero-filled image, CG-SENSE, ℓ1-wavelet compressed sensing and total variation — each
//! compared with the fully sampled image and saved as a magnitude PNG and a complex CFL.
//!
//! Run with `cargo run --release --example undersampled_recon [-- KSPACE.cfl [OUT_DIR]]` (default: BART's 8-coil
//! phantom in tests/fixtures/bart, made by its make.sh; maps `NAME_sens` and mask `NAME_mask` are read from beside
//! the k-space, BART's naming). The same runs are `cliper recon KSPACE OUT --method cg-sense|l1-wavelet|tv`.

use cliper::prelude::*;
use cliper::{CgParams, CgSense, L1WaveletParams, L1WaveletSense, SenseOperator, TvParams, TvSense};
use std::path::PathBuf;

fn main() -> cliper::Result<()> {
    let mut args = std::env::args().skip(1);
    let input = PathBuf::from(args.next().unwrap_or_else(|| "tests/fixtures/bart/phantom8.cfl".into()));
    let out_dir = PathBuf::from(args.next().unwrap_or_else(|| "out/recon".into()));
    std::fs::create_dir_all(&out_dir).map_err(|source| Error::Io { path: out_dir.clone(), source })?;
    let app = ClApp::builder().use_env(true).build()?;
    println!("device: {}", app.device().name);

    // k-space [coils, x, y] with maps [coils, x, y] and a mask [x, y] attached from the files beside it.
    let k = KData::<Complex32>::load(&app, &input)?;
    let maps = k.sensitivity_maps().ok_or_else(|| Error::invalid("example", "no NAME_sens maps beside the k-space"))?;
    let mask = k.sampling_mask().ok_or_else(|| Error::invalid("example", "no NAME_mask beside the k-space"))?;
    let taken = mask.to_vec()?.iter().filter(|&&m| m != 0.0).count();
    println!(
        "{}: {} coils × {:?}, {taken} of {} samples (acceleration {:.2})",
        input.display(),
        k.num_coils(),
        k.spatial_shape(),
        mask.len(),
        mask.len() as f64 / taken as f64
    );

    // The reference: every sample (the file holds them all; the mask says which an undersampled scan keeps),
    // combined through the maps; and the zero-filled image, Aᴴy with the mask.
    let shape = k.spatial_shape().to_vec();
    let full = XData::<Complex32>::zeros(&app, &shape)?;
    SenseOperator::new(maps, None)?.adjoint(k.as_xdata(), &full)?;
    let zero_filled = XData::<Complex32>::zeros(&app, &shape)?;
    SenseOperator::new(maps, Some(mask))?.adjoint(k.as_xdata(), &zero_filled)?;

    // λ on the data as stored (bart pics -w 1): BART would divide k-space by its scale estimate (~1000 here) and
    // use λ 1000× smaller.
    let runs: Vec<(&str, XData<Complex32>)> = vec![
        ("zero-filled", zero_filled),
        ("cg-sense", CgSense::apply(&k, CgParams::new(30).lambda(0.01))?),
        ("l1-wavelet", L1WaveletSense::apply(&k, L1WaveletParams::new(5.0, 30))?),
        ("tv", TvSense::apply(&k, TvParams::new(10.0, 50))?),
    ];
    let reference = full.to_vec()?;
    let norm: f64 = reference.iter().map(|v| v.norm_sqr() as f64).sum::<f64>().sqrt();
    for (name, image) in &runs {
        let values = image.to_vec()?;
        let error: f64 = values.iter().zip(&reference).map(|(a, b)| (a - b).norm_sqr() as f64).sum::<f64>().sqrt();
        image.save(out_dir.join(format!("{name}.cfl")))?;
        let png = out_dir.join(format!("{name}.png"));
        let options = PngOptions { depth: PngDepth::Sixteen, scale: Scale::MinMax, clip: false, colour: false };
        ComplexAbs::apply(image)?.save_png(&png, options)?;
        println!("{name:>12}: error to the fully sampled image {:.4} (NRMSE), {}", error / norm, png.display());
    }
    Ok(())
}
