//! The peers' timings: lines of their output (`peer op… size ms …`, from clblast_bench, peer_torch.py,
//! peer_filterbank.py, scripts/bench/peer_numpy.py) parsed and matched to the suite's case families and sizes.

use crate::suite::Record;
use cliper::Result;
use cliper::prelude::*;
use std::path::Path;

/// One timed peer operation, mapped to the suite's case family and size.
#[derive(Clone, Debug)]
pub(crate) struct PeerTime {
    /// Who ran it: `cuBLAS`, `cuDNN`, `torch`, `CuPy`, `CuPy FFT`, `CLBlast`, `OpenCL copy`, `numpy`, `scipy`, ….
    pub(crate) peer: String,
    /// The suite's case family (`sgemm`, `conv15`, `norm2_f32`, …; see [`family`]).
    pub(crate) family: String,
    /// The size in the suite's notation.
    pub(crate) size: String,
    pub(crate) ms: f64,
}

/// The case id without its size suffix: `sgemm_4096` → `sgemm`, `conv3_batch64_512` → `conv3_batch64`,
/// `copy_buffer` and `copy_kernel` → `copy`.
pub(crate) fn family(case: &str) -> &str {
    if case.starts_with("copy_") {
        return "copy";
    }
    case.rsplit_once('_').map_or(case, |(head, _)| head)
}

/// Parses one peer line; `None` for headers, failures and operations the suite has no case for.
fn parse_peer_line(line: &str) -> Option<PeerTime> {
    let tokens: Vec<&str> = line.split_whitespace().collect();
    let at = tokens.iter().position(|&t| t == "ms")?;
    // `WHO OP… SIZE TIME ms`: at least who, size and time before "ms".
    let &[who, ref op_tokens @ .., raw_size, ms] = tokens.get(..at)? else {
        return None;
    };
    let ms: f64 = ms.parse().ok()?;
    if who == "cliper" || who.ends_with(':') || ms.is_nan() || ms <= 0.0 {
        return None;
    }
    let op = op_tokens.join(" ").to_lowercase();
    let (family, size) = match_case(&op, raw_size)?;
    let gemm = ["sgemm", "cgemm", "dgemm", "zgemm", "matpow100"].contains(&family.as_str());
    let conv = family.starts_with("conv") || family == "filterbank";
    let peer = match who {
        "torch" if gemm => "cuBLAS".to_string(),
        "torch" if conv => "cuDNN".to_string(),
        "torch" if family.starts_with("fft") => "cuFFT".to_string(),
        "cupy" | "scipy" if op.contains("fftconvolve") => format!("{} FFT", display_name(who)),
        "cupy" if op.contains("fused") => "CuPy fuse".to_string(),
        "opencl" => "OpenCL copy".to_string(),
        other => display_name(other),
    };
    Some(PeerTime { peer, family, size, ms })
}

fn display_name(who: &str) -> String {
    match who {
        "cupy" => "CuPy".into(),
        "clblast" => "CLBlast".into(),
        other => other.to_string(),
    }
}

/// The suite family and size of a peer operation.
fn match_case(op: &str, size: &str) -> Option<(String, String)> {
    let square = |s: &str| s.trim_end_matches("^3").split('x').next().map(str::to_string);
    let cube = |s: &str| match s.strip_suffix("^3") {
        Some(n) => format!("{n}x{n}x{n}"),
        None => s.to_string(),
    };
    let kernel_size =
        |op: &str| op.split_whitespace().find_map(|t| t.split_once('x').and_then(|(k, _)| k.parse::<usize>().ok()));
    let tf32 = op.contains("tf32") && !op.contains("no tf32");
    if tf32 || op.contains("c64 norm") || op.starts_with("norm2 c64") || op.contains("sasum") {
        return None;
    }
    let simple = [
        ("sgemm", "sgemm"),
        ("cgemm", "cgemm"),
        ("dgemm", "dgemm"),
        ("zgemm", "zgemm"),
        ("matrix_power 100", "matpow100"),
        ("norm2 f32", "norm2_f32"),
        ("snrm2", "norm2_f32"),
        ("norm p=20 f32", "normp20_f32"),
        ("dot f32", "dot_f32"),
        ("sdot", "dot_f32"),
        ("vdot c64", "dotc_c32"),
        ("cdotc", "dotc_c32"),
        ("pad constant 8", "pad8_constant"),
        ("pad reflect 8", "pad8_reflect"),
    ];
    if let Some((_, family)) = simple.iter().find(|(prefix, _)| op.starts_with(prefix)) {
        let size = if family.ends_with("gemm") { square(size)? } else { size.to_string() };
        return Some((family.to_string(), size));
    }
    // FFTs: `fftn c64 2-D` on 8192x8192 (fft2), on 64x512x512 (batched: fft2_batch64), `fft2 c64` (CuPy).
    if let Some(rest) = op.strip_prefix("fftn c64 ").or(op.strip_prefix("fftn c32 ")) {
        let d: usize = rest.strip_suffix("-d")?.parse().ok()?;
        let dims: Vec<&str> = size.split('x').collect();
        return Some(if dims.len() == d {
            (format!("fft{d}"), size.to_string())
        } else {
            (format!("fft{d}_batch{}", dims.first()?), size.to_string())
        });
    }
    if op == "fft2 c64" {
        return Some(("fft2".into(), size.to_string()));
    }
    if op == "simplemrirecon" {
        return Some(("recon_sense".into(), size.to_string()));
    }
    if op == "rsos recon" {
        return Some(("recon_rsos".into(), size.to_string()));
    }
    if op.starts_with("transpose") || op.starts_with("somatcopy") {
        return Some(("transpose".into(), size.to_string()));
    }
    if op == "copy" || op.starts_with("copybuffer") {
        return Some(("copy".into(), size.to_string()));
    }
    if op.starts_with("conv2d bank") {
        let input = op.split_whitespace().nth(2)?;
        return Some(("filterbank".into(), format!("{input} * {size}")));
    }
    // scripts/bench/peer_ndimage.py: the operations of issue 25.
    if op.starts_with("elementwise chain") {
        return Some(("ewchain".into(), size.to_string()));
    }
    if op == "hypot" {
        return Some(("ewhypot".into(), size.to_string()));
    }
    if op == "gradient_magnitude sobel" {
        return Some(("gradmag_sobel".into(), size.to_string()));
    }
    if op == "gradient_magnitude gaussian 2" {
        return Some(("gradmag_gauss2".into(), size.to_string()));
    }
    if let Some(window) = op.strip_prefix("median_filter ") {
        return Some(if window.matches('x').count() == 2 {
            (format!("median{window}"), cube(size))
        } else {
            (format!("median{}", kernel_size(op)?), size.to_string())
        });
    }
    if op.starts_with("grey_erosion") {
        return Some((format!("erosion{}", kernel_size(op)?), size.to_string()));
    }
    if op == "zoom x2 order 3" {
        return Some(("zoom2o3".into(), cube(size)));
    }
    if op == "rotate 30 order 3" {
        return Some(("rotate30o3".into(), size.to_string()));
    }
    if op == "label" {
        return Some(("label".into(), size.to_string()));
    }
    if op == "slices pad gaussian sobel norm" {
        return Some(("slices1000".into(), size.to_string()));
    }
    let convolution = ["conv2d", "conv3d", "ndimage.convolve", "signal.fftconvolve"];
    if convolution.iter().any(|c| op.starts_with(c)) {
        if op.contains("reflect") || op.contains("mirror") || op.contains("nearest") {
            return None;
        }
        let k = kernel_size(op)?;
        return Some(if op.contains("3x3x3") {
            ("conv3d3".into(), cube(size))
        } else if op.contains("batch") {
            (format!("conv{k}_batch64"), size.to_string())
        } else {
            (format!("conv{k}"), size.to_string())
        });
    }
    None
}

/// Every peer line found in the files.
pub(crate) fn read_peers(paths: &[impl AsRef<Path>]) -> Result<Vec<PeerTime>> {
    let mut peers = Vec::new();
    for path in paths {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
        peers.extend(text.lines().filter_map(parse_peer_line));
    }
    Ok(peers)
}

/// The peers measured at a record's size, best first.
pub(crate) fn peers_for<'p>(r: &Record, peers: &'p [PeerTime]) -> Vec<&'p PeerTime> {
    let mut found: Vec<&PeerTime> = peers.iter().filter(|p| p.family == family(&r.case) && p.size == r.size).collect();
    found.sort_by(|a, b| a.ms.total_cmp(&b.ms));
    // One entry per peer (a file given twice, or a peer measured twice: keep its best).
    let mut seen = Vec::new();
    found.retain(|p| {
        let new = !seen.contains(&p.peer);
        seen.push(p.peer.clone());
        new
    });
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peer_lines_map_to_cases() {
        let cases = [
            (
                "torch   sgemm f32 (no tf32)    4096^3                 2.6500 ms    51865.3 GFLOP/s      76.0 GB/s",
                ("cuBLAS", "sgemm", "4096"),
            ),
            (
                "clblast sgemm      1024x1024x1024     0.070 ms   30000.0 GFLOP/s     60.0 GB/s",
                ("CLBlast", "sgemm", "1024"),
            ),
            ("torch   conv3d 3x3x3           512^3                  5.8500 ms", ("cuDNN", "conv3d3", "512x512x512")),
            ("cupy    signal.fftconvolve 63x63 8192x8192            5.6300 ms", ("CuPy FFT", "conv63", "8192x8192")),
            (
                "torch   conv2d 3x3 batch64     64x512x512             0.1490 ms",
                ("cuDNN", "conv3_batch64", "64x512x512"),
            ),
            (
                "torch   conv2d bank 10x4x128x128 * 10x4x16x16     0.3980 ms     2.0 GFLOP/s",
                ("cuDNN", "filterbank", "10x4x128x128 * 10x4x16x16"),
            ),
            (
                "opencl     copybuffer 268435456      0.715 ms       0.0 GFLOP/s   3004.0 GB/s",
                ("OpenCL copy", "copy", "268435456"),
            ),
            ("torch   vdot c64               134217728              0.7000 ms", ("torch", "dotc_c32", "134217728")),
            ("clblast somatcopyT 16384x16384        0.770 ms", ("CLBlast", "transpose", "16384x16384")),
            ("clblast cdotc      2097152             31.0535 ms", ("CLBlast", "dotc_c32", "2097152")),
            (
                "torch   fftn c64 2-D               64x512x512           0.1970 ms",
                ("cuFFT", "fft2_batch64", "64x512x512"),
            ),
            ("torch   fftn c64 3-D               256x256x256          0.3190 ms", ("cuFFT", "fft3", "256x256x256")),
            ("torch   fftn c64 1-D               16777216             0.2810 ms", ("cuFFT", "fft1", "16777216")),
            ("cupy    fft2 c64                   8192x8192            1.1000 ms", ("CuPy", "fft2", "8192x8192")),
            (
                "torch   SimpleMRIRecon             32x512x512           0.3010 ms",
                ("torch", "recon_sense", "32x512x512"),
            ),
            ("torch   RSoS recon                 8x256x256            0.0900 ms", ("torch", "recon_rsos", "8x256x256")),
            ("clblast dgemm      1024x1024x1024     316.0777 ms", ("CLBlast", "dgemm", "1024")),
            ("scipy   ndimage.convolve 3x3x3 128^3                119.6180 ms", ("scipy", "conv3d3", "128x128x128")),
            ("cupy    median_filter 7x7            8192x8192         12.5000 ms", ("CuPy", "median7", "8192x8192")),
            (
                "cupy    median_filter 5x5x5          512^3            900.0000 ms",
                ("CuPy", "median5x5x5", "512x512x512"),
            ),
            ("scipy   grey_erosion 15x15           2048x2048         80.0000 ms", ("scipy", "erosion15", "2048x2048")),
            ("cupy    zoom x2 order 3              512^3             40.0000 ms", ("CuPy", "zoom2o3", "512x512x512")),
            ("cupy    rotate 30 order 3            8192x8192         20.0000 ms", ("CuPy", "rotate30o3", "8192x8192")),
            ("cupy    label                        8192x8192         20.0000 ms", ("CuPy", "label", "8192x8192")),
            (
                "cupy    elementwise chain fused      8192x8192          0.2000 ms",
                ("CuPy fuse", "ewchain", "8192x8192"),
            ),
            ("cupy    hypot                        8192x8192          0.3000 ms", ("CuPy", "ewhypot", "8192x8192")),
            (
                "scipy   gradient_magnitude sobel     2048x2048         60.0000 ms",
                ("scipy", "gradmag_sobel", "2048x2048"),
            ),
            (
                "cupy    gradient_magnitude gaussian 2 8192x8192       1.2000 ms",
                ("CuPy", "gradmag_gauss2", "8192x8192"),
            ),
        ];
        for (line, (peer, family, size)) in cases {
            let p = parse_peer_line(line).unwrap_or_else(|| panic!("no match for {line}"));
            assert_eq!((p.peer.as_str(), p.family.as_str(), p.size.as_str()), (peer, family, size), "{line}");
        }
        for skipped in
            ["device: NVIDIA H100", "torch   sgemm tf32  8192^3  1.0 ms", "cliper  transpose f32 16384x16384 0.7 ms"]
        {
            assert!(parse_peer_line(skipped).is_none(), "{skipped}");
        }
    }

    #[test]
    fn families_strip_the_size() {
        for (case, want) in [
            ("sgemm_4096", "sgemm"),
            ("conv3_batch64_512", "conv3_batch64"),
            ("conv3d3_512", "conv3d3"),
            ("norm2_f32_2e28", "norm2_f32"),
            ("copy_kernel", "copy"),
            ("chain10", "chain10"),
            ("filterbank_seed004", "filterbank"),
            ("median5x5x5_512", "median5x5x5"),
            ("gradmag_sobel_8192", "gradmag_sobel"),
            ("gradmag_gauss2_8192", "gradmag_gauss2"),
        ] {
            assert_eq!(family(case), want);
        }
    }
}
