//! Linear algebra on matrices from a MAT file: `C = A·B`, `P = C⁸`, their Frobenius norms and the column norms
//! of `P`, saved to one MAT file that MATLAB or `scipy.io.loadmat` opens.
//!
//! Run with `cargo run --release --example mat_pipeline [-- INPUT.mat [OUTPUT.mat]]` (default
//! `data/matrices.mat`, variables `A` and `B`, into `out/mat_pipeline.mat`).

use cliper::prelude::*;
use cliper::write_mat;
use std::path::PathBuf;

fn main() -> cliper::Result<()> {
    let mut args = std::env::args().skip(1);
    let input = PathBuf::from(args.next().unwrap_or_else(|| "data/matrices.mat".into()));
    let output = PathBuf::from(args.next().unwrap_or_else(|| "out/mat_pipeline.mat".into()));
    if let Some(dir) = output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| Error::Io { path: dir.to_path_buf(), source })?;
    }

    let app = ClApp::builder().use_env(true).profiling(true).build()?;
    println!("device: {} ({})", app.device().name, app.device().kind);
    app.require::<f64>()?; // PoCL and NVIDIA's OpenCL both have doubles; the error says so when a device has not

    // MATLAB's shape and indexing: A(i+1, j+1) is a[i][j].
    let a = XData::<f64>::load_mat(&app, &input, "A")?;
    let b = XData::<f64>::load_mat(&app, &input, "B")?;
    println!("A {:?}, B {:?} from {}", a.shape(), b.shape(), input.display());

    // Outputs allocated up front; the five processes then run back to back on the device.
    let c = XData::<f64>::zeros(&app, &[a.shape()[0], b.shape()[1]])?;
    let p = XData::<f64>::zeros(&app, c.shape())?;
    let (norm_c, norm_p) = (XData::<f64>::zeros(&app, &[])?, XData::<f64>::zeros(&app, &[])?);
    let column_norms = XData::<f64>::zeros(&app, &[c.shape()[1]])?;
    let mut chain = Pipeline::new(&app)
        .then(MatMul::new(&a, &b, &c, MatMulParams::default()))
        .then(MatrixPower::new(&c, &p, 8))
        .then(NormN::new(&c, &norm_c, NormParams::new(NormOrder::P(2.0))))
        .then(NormN::new(&p, &norm_p, NormParams::new(NormOrder::P(2.0))))
        .then(NormN::new(&p, &column_norms, NormParams::new(NormOrder::P(2.0)).along(0)));
    println!("{}", chain.profile()?);

    println!("‖A·B‖_F = {:.6e}, ‖(A·B)⁸‖_F = {:.6e}", norm_c.to_vec()?[0], norm_p.to_vec()?[0]);
    // MAT variables have at least two axes: the column norms go out as a 1 × N row, as MATLAB keeps them.
    let row = column_norms.reshape(&[1, c.shape()[1]])?;
    let variables = [
        ("C", HostArray::F64(c.to_ndarray()?)),
        ("P", HostArray::F64(p.to_ndarray()?)),
        ("column_norms", HostArray::F64(row.to_ndarray()?)),
    ];
    let named: Vec<(&str, &HostArray)> = variables.iter().map(|(n, v)| (*n, v)).collect();
    write_mat(&output, &named, true)?;
    println!("wrote C, P and column_norms to {}", output.display());
    Ok(())
}
