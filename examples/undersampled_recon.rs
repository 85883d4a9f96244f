//! Undersampled MRI reconstruction, the whole way: BART-format k-space with its ESPIRiT maps and Poisson-disc mask
//! (acceleration ≈ 4), the zero-filled image, CG-SENSE, ℓ1-wavelet compressed sensing and total variation, and
//! CG-SENSE again with coil maps estimated from the undersampled data itself (ESPIRiT as `bart ecalib -m1`, and
//! Walsh's method) — each compared with the fully sampled image and saved as a magnitude PNG and a complex CFL.
//!
//! Run with `cargo run --release --example undersampled_recon [-- KSPACE.cfl [OUT_DIR]]` (default: BART's 8-coil
//! phantom in tests/fixtures/bart, made by its make.sh; maps `NAME_sens` and mask `NAME_mask` are read from beside
//! the k-space, BART's naming). The same runs are `cliper recon KSPACE OUT --method cg-sense|l1-wavelet|tv`.

use cliper::prelude::*;
use cliper::{
    CgParams, CgSense, EspiritMaps, EspiritParams, L1WaveletParams, L1WaveletSense, SenseOperator, TvParams, TvSense,
    WalshMaps, WalshParams,
};
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
    let cg = CgParams::new(30).lambda(0.01);
    // Maps from what an undersampled scan delivers: the k-space times its mask. ESPIRiT's maps equal BART's up to
    // one global sign; Walsh's differ from them by a phase per pixel, which moves into the image's phase.
    let scan = KData::new(ApplyMask::apply(k.as_xdata(), mask)?, 2)?.with_sampling_mask(mask.clone())?;
    let espirit = EspiritMaps::apply(&scan, EspiritParams::default())?;
    let walsh = XData::zeros(&app, k.as_xdata().shape())?;
    WalshMaps::from_kspace(&scan, &walsh, WalshParams::default()).run()?;
    let runs: Vec<(&str, XData<Complex32>)> = vec![
        ("zero-filled", zero_filled),
        ("cg-sense", CgSense::apply(&k, cg)?),
        ("l1-wavelet", L1WaveletSense::apply(&k, L1WaveletParams::new(5.0, 30))?),
        ("tv", TvSense::apply(&k, TvParams::new(10.0, 50))?),
        ("cg-espirit", CgSense::apply(&scan.clone().with_sensitivity_maps(espirit)?, cg)?),
        ("cg-walsh", CgSense::apply(&scan.with_sensitivity_maps(walsh)?, cg)?),
    ];
    let reference = full.to_vec()?;
    let norm: f64 = reference.iter().map(|v| v.norm_sqr() as f64).sum::<f64>().sqrt();
    for (name, image) in &runs {
        let values = image.to_vec()?;
        // Complex NRMSE, after the global sign that fits best (estimated maps fix the phase only up to it); the
        // magnitudes' NRMSE beside it (Walsh's maps leave a phase per pixel).
        let sign = if values.iter().zip(&reference).map(|(a, b)| (a * b.conj()).re as f64).sum::<f64>() < 0.0 {
            -1.0
        } else {
            1.0
        };
        let error: f64 =
            values.iter().zip(&reference).map(|(a, b)| (a * sign - b).norm_sqr() as f64).sum::<f64>().sqrt();
        let magnitude: f64 =
            values.iter().zip(&reference).map(|(a, b)| ((a.norm() - b.norm()) as f64).powi(2)).sum::<f64>().sqrt();
        image.save(out_dir.join(format!("{name}.cfl")))?;
        let png = out_dir.join(format!("{name}.png"));
        let options = PngOptions { depth: PngDepth::Sixteen, scale: Scale::MinMax, clip: false, colour: false };
        ComplexAbs::apply(image)?.save_png(&png, options)?;
        println!(
            "{name:>12}: error to the fully sampled image {:.4} (NRMSE; magnitudes {:.4}), {}",
            error / norm,
            magnitude / norm,
            png.display()
        );
    }
    Ok(())
}
