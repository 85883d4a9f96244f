//! Transposes a batch of complex matrices on the default device, conjugating them (the Hermitian transpose),
//! and checks the result on the host.
//!
//! Run with `cargo run --release --example transpose` (`CLIPER_DEVICE=cpu` to force PoCL).

use cliper::prelude::*;
use num_complex::Complex32;

fn main() -> cliper::Result<()> {
    let app = ClApp::builder().use_env(true).profiling(true).build()?;
    println!("device: {} ({})", app.device().name, app.device().kind);

    // 8 matrices of 300 × 500 complex samples.
    let (batch, rows, cols) = (8, 300, 500);
    let host: Vec<Complex32> = (0..batch * rows * cols).map(|i| Complex32::new(i as f32, -(i as f32) * 0.5)).collect();
    let a = XData::from_slice(&app, &[batch, rows, cols], &host)?;
    let ah = XData::zeros(&app, &[batch, cols, rows])?;

    let mut pipeline = Pipeline::new(&app).then(ConjugateTranspose::new(&a, &ah));
    let report = pipeline.profile()?;
    println!("{report}");

    let result = ah.to_vec()?;
    let (b, i, j) = (3, 123, 456); // a[b, i, j] must equal conj(ah[b, j, i])
    assert_eq!(result[(b * cols + j) * rows + i], host[(b * rows + i) * cols + j].conj());
    println!(
        "a[3, 123, 456] = {}  →  ah[3, 456, 123] = {}",
        host[(b * rows + i) * cols + j],
        result[(b * cols + j) * rows + i]
    );
    Ok(())
}
