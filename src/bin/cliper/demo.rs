//! `cliper demo`: the main job on the default device, end to end.

use clap::Args;
use cliper::{ClApp, Error, Permute, Pipeline, Result, SheppLogan, Transpose, XData};

#[derive(Args)]
pub struct DemoArgs {
    /// Width and height of each axial slice of the phantom volume.
    #[arg(long, default_value_t = 256)]
    size: usize,
    /// Number of axial slices.
    #[arg(long, default_value_t = 64)]
    slices: usize,
}

/// Fraction of voxels allowed to differ from the float64 reference: only voxels on an ellipse's edge, where
/// float32 and float64 can round the inside test differently.
const EDGE_FRACTION: f64 = 1e-3;

pub fn run(args: &DemoArgs) -> Result<()> {
    let (d, n) = (args.slices, args.size);
    if d == 0 || n == 0 {
        return Err(Error::InvalidArgument {
            op: "demo".into(),
            reason: "--size and --slices must be positive".into(),
        });
    }
    let app = ClApp::builder().use_env(true).profiling(true).build()?;
    let dev = app.device();
    println!("cliper demo on {} ({}, {}, {})", dev.name, dev.kind, dev.platform_name, dev.version);

    // Axial volume [z, y, x] → each slice transposed [z, x, y] → axes reordered to [x, z, y]: a stack of
    // sagittal slices (multiplanar reformatting), all on the device.
    let axial = XData::<f32>::zeros(&app, &[d, n, n])?;
    let transposed = XData::<f32>::zeros(&app, &[d, n, n])?;
    let sagittal = XData::<f32>::zeros(&app, &[n, d, n])?;
    let mut chain = Pipeline::new(&app)
        .then(SheppLogan::new(&axial))
        .then(Transpose::new(&axial, &transposed))
        .then(Permute::new(&transposed, &sagittal, &[1, 0, 2]));
    println!("chain: SheppLogan [{d}×{n}×{n}] → Transpose → Permute [1, 0, 2] (axial → sagittal slices)");

    chain.init()?;
    let before = app.transfer_stats();
    chain.run()?; // a first run warms the device up (clocks, lazy kernel loading); the second is timed
    let report = chain.profile()?;
    let during = app.transfer_stats() - before;
    let voxels = sagittal.to_vec()?;
    let read = app.transfer_stats() - before - during;
    println!(
        "host↔device copies during the chain: {}; for the final read: {} ({:.1} MiB)",
        during.total_calls(),
        read.total_calls(),
        read.device_to_host_bytes as f64 / (1u64 << 20) as f64
    );
    println!("\n{report}\n");

    // out[j][k][i] must equal the phantom at (k, i, j).
    let reference = SheppLogan::<f32>::reference(&[d, n, n])?;
    let mut mismatches = 0usize;
    for j in 0..n {
        for k in 0..d {
            for i in 0..n {
                let got = f64::from(voxels[(j * d + k) * n + i]);
                if (got - reference[(k * n + i) * n + j]).abs() > 1e-5 {
                    mismatches += 1;
                }
            }
        }
    }
    let fraction = mismatches as f64 / voxels.len() as f64;
    println!(
        "check against the float64 CPU reference: {mismatches} of {} voxels differ ({:.4}%; edge voxels may round \
         differently in float32, at most {:.1}% allowed)",
        voxels.len(),
        fraction * 100.0,
        EDGE_FRACTION * 100.0
    );
    println!("\nsagittal slice x = {} (rows: z, columns: y):", n / 2);
    print!("{}", ascii_slice(&voxels[(n / 2) * d * n..(n / 2 + 1) * d * n], d, n));
    if fraction > EDGE_FRACTION {
        return Err(Error::InvalidArgument {
            op: "demo".into(),
            reason: format!("{mismatches} voxels differ from the reference; the device computed a wrong result"),
        });
    }
    println!("demo OK");
    Ok(())
}

/// A small character picture of a `rows` × `cols` slice (at most 24 × 72 characters).
fn ascii_slice(slice: &[f32], rows: usize, cols: usize) -> String {
    let (h, w) = (rows.min(24), cols.min(72));
    let mut out = String::new();
    for r in 0..h {
        out.push_str("  ");
        for c in 0..w {
            let v = slice[(r * rows / h) * cols + c * cols / w];
            out.push(match v {
                v if v <= 0.01 => ' ',
                v if v <= 0.15 => '.',
                v if v <= 0.25 => ':',
                v if v <= 0.35 => '+',
                v if v <= 0.6 => '*',
                _ => '#',
            });
        }
        out.push('\n');
    }
    out
}
