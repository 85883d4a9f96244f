//! `cliper cc IN OUT`: coil compression of Cartesian k-space as `bart cc` (BART 0.8.00): SVD (`-S`) or geometric
//! (`-G`), the compressed k-space or (`--matrix`, BART's `-M`) the compression matrices. On the host in float64
//! (`CoilCompression`); the file's precision is kept.

use crate::failure::CliError;
use crate::recon::bart_named;
use clap::{Args, ValueEnum};
use cliper::chain::RunFiles;
use cliper::ndarray::{ArrayD, IxDyn};
use cliper::prelude::*;
use cliper::{
    CoilCompression, CompressionMethod, CompressionParams, HostArray, Result, images_from_bart, images_to_bart,
    read_file, write_file,
};
use num_complex::{Complex32, Complex64};
use std::path::Path;

/// How the compression is estimated (BART's `-S`, `-G`, `-E`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CcMethod {
    /// One matrix from the calibration data's coil covariance (bart cc -S).
    Svd,
    /// One matrix per readout position, aligned along the readout (bart cc -G).
    Geometric,
    /// ESPIRiT-based (bart cc -E): not built.
    Espirit,
}

#[derive(Args)]
pub struct CcArgs {
    /// Cartesian k-space [x, y, z, coils] (x the readout), as BART's CFL or any array file with those axes.
    input: String,
    /// The compressed k-space [x, y, z, N]; with --matrix the matrices [1 or x, 1, 1, coils, coils].
    output: String,
    /// N, the virtual coils (bart -p; 0: as many as coils).
    #[arg(short = 'p', long, value_name = "N")]
    virtual_coils: Option<usize>,
    /// svd (bart -S, the default), geometric (bart -G) or espirit (bart -E, not built).
    #[arg(long, value_enum, default_value = "svd")]
    method: CcMethod,
    /// The calibration block's largest extent: one number for every axis or X:Y:Z (bart -r; default 24).
    #[arg(short = 'r', long, default_value = "24", value_name = "S|X:Y:Z")]
    calibration: String,
    /// Estimate from all the data, not the fully sampled centre (bart -A).
    #[arg(short = 'A', long)]
    all: bool,
    /// Write the compression matrices, not the compressed k-space (bart -M): element (x, 0, 0, c, p) is coil c's
    /// weight in virtual coil p (conjugated when applied), one matrix for svd, one per readout position for
    /// geometric (before their alignment, as BART writes them).
    #[arg(short = 'M', long)]
    matrix: bool,
}

/// Estimates the compression and writes the compressed k-space or the matrices.
pub fn run(args: &CcArgs) -> std::result::Result<(), CliError> {
    let (input, output) = (bart_named(&args.input), bart_named(&args.output));
    let params = params(args)?;
    if args.virtual_coils.is_none() && !args.matrix {
        return Err(Error::invalid(
            "cliper cc",
            "give --virtual-coils N (bart cc -p N) for compressed k-space, or --matrix (bart -M) for the matrices",
        )
        .into());
    }
    RunFiles::default().read("the k-space", Path::new(&input)).write("the output", Path::new(&output)).check()?;
    let data = read_file(&input)?;
    let double = matches!(data.dtype(), Dtype::C64 | Dtype::F64);
    let k = data.to_elements::<Complex64>(Path::new(&input))?;
    let s = k.shape();
    let dims = [0, 1, 2].map(|d| s.get(d).copied().unwrap_or(1));
    let (coils, values) = images_from_bart(&k, &dims, &input)?;
    let shape = [coils, dims[0], dims[1], dims[2]];
    let cc = CoilCompression::estimate(&values, shape, params)?;
    let (result, what) = if args.matrix {
        (matrices(&cc, coils), "the compression matrices".to_string())
    } else {
        let n = match args.virtual_coils {
            Some(0) | None => coils,
            Some(n) => n,
        };
        let compressed = cc.compress(&values, shape, n)?;
        (images_to_bart(&compressed, n, &dims)?, format!("{n} virtual coils of {coils}"))
    };
    let written = result.shape().to_vec();
    let result = if double {
        HostArray::C64(result)
    } else {
        HostArray::C32(result.mapv(|v| Complex32::new(v.re as f32, v.im as f32)))
    };
    cliper::chain::create_parent(Path::new(&output))?;
    write_file(&output, &result)?;
    let kept: f64 = cc.energy().iter().take(args.virtual_coils.filter(|&n| n > 0).unwrap_or(coils)).sum();
    say!(
        "cc: {} compression, {what} ({:.2} % of the calibration data's energy); wrote {written:?} to {output}",
        match cc.method() {
            CompressionMethod::Svd => "SVD",
            CompressionMethod::Geometric => "geometric",
            CompressionMethod::Espirit => "ESPIRiT",
        },
        100.0 * kept
    );
    Ok(())
}

/// The library's settings from the options (refusing espirit and a malformed --calibration).
fn params(args: &CcArgs) -> Result<CompressionParams> {
    let method = match args.method {
        CcMethod::Svd => CompressionMethod::Svd,
        CcMethod::Geometric => CompressionMethod::Geometric,
        CcMethod::Espirit => CompressionMethod::Espirit,
    };
    let text = &args.calibration;
    let parts: Vec<Option<usize>> = text.split([':', ',']).map(|p| p.trim().parse().ok()).collect();
    let calibration = match parts[..] {
        [Some(n)] if n > 0 => [n; 3],
        [Some(x), Some(y), Some(z)] if x > 0 && y > 0 && z > 0 => [x, y, z],
        _ => {
            return Err(Error::invalid(
                "cliper cc",
                format!("--calibration {text}: give one positive whole number or X:Y:Z"),
            ));
        }
    };
    Ok(CompressionParams::new(method).calibration(calibration).all_data(args.all))
}

/// BART's `-M` layout: `[positions, 1, 1, coils, coils]`, element `(x, 0, 0, c, p)` = `w_p[c]` at position x.
fn matrices(cc: &CoilCompression, coils: usize) -> ArrayD<Complex64> {
    let m = cc.matrices();
    ArrayD::from_shape_fn(IxDyn(&[m.len(), 1, 1, coils, coils]), |i| {
        m.get(i[0]).and_then(|w| w.get(i[4] * coils + i[3])).copied().unwrap_or_default()
    })
}
