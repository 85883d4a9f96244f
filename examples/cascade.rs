//! A cascade on one device with no transfers between its steps: the Shepp-Logan phantom generated on the
//! device → pad 32 px (mirror) → 17 × 17 Gaussian-blur convolution (σ = 2) ("valid", so the padding is used up) →
//! transpose → 2-norm of every row; then one read of the result and the per-kernel profile table.
//!
//! Run with `cargo run --release --example cascade [-- SIZE]` (default 2048; `CLIPER_DEVICE=gpu` or `cpu`).

use cliper::prelude::*;

fn main() -> cliper::Result<()> {
    let n: usize = match std::env::args().nth(1) {
        Some(text) => text
            .parse()
            .map_err(|_| cliper::Error::invalid("cascade", format!("SIZE {text:?} is not a whole number")))?,
        None => 2048,
    };
    let app = ClApp::builder().use_env(true).profiling(true).build()?;
    println!("device: {} ({})", app.device().name, app.device().kind);

    let pad = 32;
    let filter = Filter::<f32>::gaussian(2.0, 2)?; // 17 × 17 (scipy's radius ⌊4σ + 0.5⌋ = 8)
    let padded_n = n + 2 * pad;
    let blurred_n = padded_n - filter.shape()[0] + 1;
    let image = XData::<f32>::zeros(&app, &[n, n])?;
    let padded = XData::<f32>::zeros(&app, &[padded_n, padded_n])?;
    let blurred = XData::<f32>::zeros(&app, &[blurred_n, blurred_n])?;
    let transposed = XData::<f32>::zeros(&app, &[blurred_n, blurred_n])?;
    let row_norms = XData::<f32>::zeros(&app, &[blurred_n])?;

    let mut cascade = Pipeline::new(&app)
        .then(SheppLogan::new(&image))
        .then(Pad::new(&image, &padded, PadParams::new(&[(pad, pad)]).border(Border::Mirror)))
        .then(Convolution::new(&padded, &filter, &blurred, ConvParams::default().output(ConvOutput::Valid)))
        .then(Transpose::new(&blurred, &transposed))
        .then(NormN::new(&transposed, &row_norms, NormParams::new(NormOrder::P(2.0)).along(1)));
    cascade.init()?; // programs built, plans made: nothing of this is repeated per launch

    let before = app.transfer_stats();
    let report = cascade.profile()?;
    let moved = app.transfer_stats() - before;
    println!("{report}");
    println!(
        "{} processes, {} kernels, {:.3} ms on the device; transfers during the cascade: {} ({} B)",
        cascade.len(),
        report.launches.len(),
        report.total_ms(),
        moved.total_calls(),
        moved.host_to_device_bytes + moved.device_to_host_bytes
    );
    assert_eq!(moved.total_calls(), 0, "the cascade stays on the device");

    let norms = row_norms.to_vec()?; // the one read
    let middle = blurred_n / 2;
    println!("{blurred_n} row norms of the transposed blur; row {middle}: {:.4}", norms[middle]);
    Ok(())
}
