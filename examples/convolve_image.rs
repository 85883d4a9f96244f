//! Edge detection on an image file: Gaussian blur (σ = 2) → Sobel x and y → gradient magnitude, all on the
//! device, saved as a 16-bit PNG (min–max stretched) and an f32 TIFF (exact values).
//!
//! Run with `cargo run --release --example convolve_image [-- INPUT [OUT_DIR]]` (default
//! `data/phantom_256.png` into `out/`; any grey PNG or TIFF works; `CLIPER_DEVICE=cpu` forces PoCL).

use cliper::prelude::*;
use std::path::PathBuf;

fn main() -> cliper::Result<()> {
    let mut args = std::env::args().skip(1);
    let input = PathBuf::from(args.next().unwrap_or_else(|| "data/phantom_256.png".into()));
    let out_dir = PathBuf::from(args.next().unwrap_or_else(|| "out".into()));
    std::fs::create_dir_all(&out_dir).map_err(|source| Error::Io { path: out_dir.clone(), source })?;

    let app = ClApp::builder().use_env(true).profiling(true).build()?;
    println!("device: {} ({})", app.device().name, app.device().kind);

    // A 16-bit PNG loads exactly into f32; a colour image is refused with a clear message rather than mixed.
    let image = XData::<f32>::load(&app, &input)?;
    let [h, w] = image.shape()[..] else {
        return Err(Error::invalid(
            "convolve_image",
            format!("{} has shape {:?}; this example takes a grey [H, W] image", input.display(), image.shape()),
        ));
    };
    println!("input: {} [{h}, {w}]", input.display());

    // Every array is allocated up front; the chain then runs without a host round trip. The two gradients are
    // the two rows of one [2, H, W] array, so a norm along axis 0 is the gradient magnitude.
    let blurred = XData::<f32>::zeros(&app, &[h, w])?;
    let gradients = XData::<f32>::zeros(&app, &[2, h, w])?;
    let magnitude = XData::<f32>::zeros(&app, &[h, w])?;
    // scipy.ndimage's default border ("reflect": the edge sample repeated in mirror order).
    let params = ConvParams::default().border(Border::scipy("reflect")?);
    let mut chain = Pipeline::new(&app)
        .then(Convolution::new(&image, &Filter::<f32>::gaussian(2.0, 2)?, &blurred, params.clone()))
        .then(Convolution::new(&blurred, &Filter::<f32>::sobel_x(), &gradients.index_axis(0, 0)?, params.clone()))
        .then(Convolution::new(&blurred, &Filter::<f32>::sobel_y(), &gradients.index_axis(0, 1)?, params))
        .then(NormN::new(&gradients, &magnitude, NormParams::new(NormOrder::P(2.0)).along(0)));
    let report = chain.profile()?;
    println!("{report}");

    let png = out_dir.join("edges.png");
    let tiff = out_dir.join("edges.tif");
    magnitude
        .save_png(&png, PngOptions { depth: PngDepth::Sixteen, scale: Scale::MinMax, clip: false, colour: false })?;
    magnitude.save(&tiff)?;
    let values = magnitude.to_vec()?;
    let max = values.iter().fold(0.0f32, |a, &b| a.max(b));
    println!("largest gradient magnitude {max:.4}; wrote {} and {}", png.display(), tiff.display());
    Ok(())
}
