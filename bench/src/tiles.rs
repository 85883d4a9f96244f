//! `cliper-bench tiles`: a chain on an image larger than a device memory budget, run in tiles from an NPY file
//! to an NPY file, against the time to copy the same bytes to the device and back once (issue 28's target:
//! ≤ 1.2×) and to copy the input file once on its file system, as `cp` does (issue 50's: ≤ 2× on tmpfs, ≤ 3× on
//! ext4), and the same chain with the whole device memory as the budget.

use cliper::chain::{Chain, TileProgress, TileTiming};
use cliper::{ClApp, Dtype, Result, SlabWriter, XData};
use std::path::Path;
use std::time::Instant;

/// Writes a `rows × cols` f32 NPY of smooth structure plus noise, `slab` rows at a time, on all cores.
pub(crate) fn make_input(path: &Path, rows: usize, cols: usize) -> Result<()> {
    let out = SlabWriter::npy(path, Dtype::F32, &[rows, cols])?;
    let slab = (256 << 20) / (4 * cols).max(1);
    for r0 in (0..rows).step_by(slab.max(1)) {
        let n = slab.min(rows - r0);
        let mut values = vec![0f32; n * cols];
        let threads = std::thread::available_parallelism().map_or(4, |t| t.get());
        std::thread::scope(|scope| {
            for (t, part) in values.chunks_mut((n * cols).div_ceil(threads).max(1)).enumerate() {
                let base = t * (n * cols).div_ceil(threads).max(1);
                scope.spawn(move || {
                    for (k, v) in part.iter_mut().enumerate() {
                        let (i, j) = ((r0 + (base + k) / cols) as u64, ((base + k) % cols) as u64);
                        let hash = (i.wrapping_mul(2_654_435_761) ^ j.wrapping_mul(40_503)) % 1009;
                        *v = ((i % 512) as f32 / 512.0) + ((j % 700) as f32 / 700.0) + hash as f32 / 4036.0;
                    }
                });
            }
        });
        let array = ndarray::ArrayD::from_shape_vec(ndarray::IxDyn(&[n, cols]), values)
            .map_err(|e| cliper::Error::invalid("cliper-bench", e.to_string()))?;
        out.write_rows(r0, &cliper::HostArray::F32(array), 0..n)?;
    }
    out.finish()
}

/// Host→device and device→host copies of `bytes` bytes through one `chunk`-element device array, from and to
/// pageable host memory as the tiles' copies are: (upload s, download s).
fn copy_once(app: &ClApp, bytes: usize, chunk: usize) -> Result<(f64, f64)> {
    let host = vec![1.0f32; chunk];
    let device = XData::<f32>::zeros(app, &[chunk])?;
    let pieces = bytes.div_ceil(4 * chunk);
    device.write(&host)?;
    app.finish()?;
    let clock = Instant::now();
    for _ in 0..pieces {
        device.write(&host)?;
    }
    app.finish()?;
    let up = clock.elapsed().as_secs_f64();
    // Into one host buffer used again and again, as the tiles' downloads are.
    let mut back = vec![0f32; chunk];
    device.read_into(&mut back)?;
    let clock = Instant::now();
    for _ in 0..pieces {
        device.read_into(&mut back)?;
    }
    std::hint::black_box(&back);
    Ok((up, clock.elapsed().as_secs_f64()))
}

/// Copying the input file once on its own file system, as `cp` does (`std::fs::copy`: the kernel copies, by
/// `copy_file_range`), and flushing the copy to disk: the seconds, the copy removed.
fn file_copy_once(input: &Path, dir: &Path) -> Result<f64> {
    let copy = dir.join("tiles-copy.npy");
    let io = |source| cliper::Error::Io { path: copy.clone(), source };
    let clock = Instant::now();
    std::fs::copy(input, &copy).map_err(io)?;
    std::fs::File::open(&copy).and_then(|f| f.sync_all()).map_err(io)?;
    let seconds = clock.elapsed().as_secs_f64();
    std::fs::remove_file(&copy).map_err(io)?;
    Ok(seconds)
}

/// A fingerprint of a file's bytes: the CRC-32 of its 64 MiB pieces' CRC-32s (read on 8 threads), to compare the
/// outputs of runs that write the same file in different ways.
fn fingerprint(path: &Path) -> Result<u32> {
    use std::os::unix::fs::FileExt;
    const PIECE: u64 = 64 << 20;
    let io = |source| cliper::Error::Io { path: path.to_path_buf(), source };
    let file = std::fs::File::open(path).map_err(io)?;
    let length = file.metadata().map_err(io)?.len();
    let pieces = length.div_ceil(PIECE) as usize;
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut crcs = vec![0u32; pieces];
    let found: Vec<(usize, u32)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..8)
            .map(|_| {
                scope.spawn(|| -> std::io::Result<Vec<(usize, u32)>> {
                    let mut buffer = vec![0u8; PIECE as usize];
                    let mut mine = Vec::new();
                    loop {
                        let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        if k >= pieces {
                            return Ok(mine);
                        }
                        let at = k as u64 * PIECE;
                        let wanted = (length - at).min(PIECE) as usize;
                        let part = buffer.get_mut(..wanted).ok_or_else(|| std::io::Error::other("piece too long"))?;
                        file.read_exact_at(part, at)?;
                        mine.push((k, crc32fast::hash(part)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_else(|_| Err(std::io::Error::other("a reading thread panicked"))))
            .collect::<std::io::Result<Vec<_>>>()
    })
    .map_err(io)?
    .into_iter()
    .flatten()
    .collect();
    for (k, crc) in found {
        if let Some(slot) = crcs.get_mut(k) {
            *slot = crc;
        }
    }
    let bytes: Vec<u8> = crcs.iter().flat_map(|c| c.to_le_bytes()).collect();
    Ok(crc32fast::hash(&bytes))
}

/// The benchmarks' tiled chain as a pipeline file: Gaussian σ → Sobel magnitude → threshold 0.05, NPY to NPY
/// (the mask in `output_type`, uint8 when `None`).
pub(crate) fn edge_chain(input: &Path, output: &Path, sigma: f64, output_type: Option<&str>) -> String {
    let output = match output_type {
        Some(t) => format!("{{ path = '{}', type = '{t}' }}", output.display()),
        None => format!("'{}'", output.display()),
    };
    format!(
        "input = {{ x = '{}' }}\n\
         [[step]]\nop = 'convolve'\nkernel = 'gaussian:{sigma}'\nin = 'x'\nout = 'g'\n\
         [[step]]\nop = 'gradient-magnitude'\nderivative = 'sobel'\nin = 'g'\nout = 'e'\n\
         [[step]]\nop = 'threshold'\nvalue = 0.05\nin = 'e'\nout = 'm'\n\
         [output]\nm = {output}\n",
        input.display(),
    )
}

/// The tiled chain once per entry of `budgets` (`None`: the whole device's memory).
pub(crate) fn run(
    shape: [usize; 2],
    budgets: &[Option<u64>],
    dir: &Path,
    sigma: f64,
    output_type: Option<&str>,
) -> Result<()> {
    let [rows, cols] = shape;
    std::fs::create_dir_all(dir).map_err(|source| cliper::Error::Io { path: dir.to_path_buf(), source })?;
    let (input, output) = (dir.join("tiles-in.npy"), dir.join("tiles-out.npy"));
    let bytes = rows * cols * 4;
    let clock = Instant::now();
    if std::fs::metadata(&input).map(|m| m.len() as usize).ok() != Some(bytes + 128) {
        make_input(&input, rows, cols)?;
    }
    println!(
        "input {rows}×{cols} f32, {:.2} GiB, ready in {:.1} s",
        bytes as f64 / (1u64 << 30) as f64,
        clock.elapsed().as_secs_f64()
    );
    let plain = ClApp::builder().use_env(true).build()?;
    let chunk = (1 << 28).min(rows * cols);
    let (up, down) = copy_once(&plain, bytes, chunk)?;
    println!(
        "copy once: upload {up:.3} s ({:.1} GB/s), download {down:.3} s ({:.1} GB/s), both {:.3} s",
        bytes as f64 / up / 1e9,
        bytes as f64 / down / 1e9,
        up + down
    );
    drop(plain);
    let file_copy = file_copy_once(&input, dir)?;
    println!(
        "file copy once (std::fs::copy, as cp, then fsync): {file_copy:.3} s ({:.1} GB/s)",
        bytes as f64 / file_copy / 1e9
    );
    let text = edge_chain(&input, &output, sigma, output_type);
    let chain = Chain::from_toml(&text, Path::new("tiles.toml"))?;
    for &budget in budgets {
        let builder = ClApp::builder().use_env(true);
        let app = match budget {
            Some(b) => builder.memory_limit(b).build()?,
            None => builder.build()?,
        };
        let clock = Instant::now();
        let mut tiles: Vec<TileTiming> = Vec::new();
        // When each tile's outputs were written, from the start.
        let mut ends: Vec<f64> = Vec::new();
        let outcome = chain.run_tiled(&app, None, |p| match p {
            TileProgress::Planned(plan) => println!(
                "budget {} bytes: {} tiles of {} rows, {} rows of context; planned at {:.3} s",
                plan.budget,
                plan.tiles(),
                plan.rows,
                plan.halo,
                clock.elapsed().as_secs_f64()
            ),
            TileProgress::Tile(t) => {
                tiles.push(t.clone());
                ends.push(clock.elapsed().as_secs_f64());
            }
            TileProgress::Shrunk(r) => println!("shrunk to {r} rows"),
        })?;
        let total = clock.elapsed().as_secs_f64();
        let sum = |f: fn(&TileTiming) -> f64| tiles.iter().map(f).sum::<f64>();
        println!(
            "tiled run: {total:.3} s end to end = {:.2}× the copy once, {:.2}× the file copy ({:.3} s before the \
             output's flush to disk: {:.2}×); {:.1} GB/s in+out; sums over {} tiles: read {:.3} s, upload {:.3}, compute {:.3}, \
             download {:.3}, write {:.3}; the device's worker waited {:.3}",
            total / (up + down),
            total / file_copy,
            total - outcome.save_s,
            (total - outcome.save_s) / (up + down),
            2.0 * bytes as f64 / total / 1e9,
            outcome.tiles.len(),
            sum(|t| t.read_s),
            sum(|t| t.upload_s),
            sum(|t| t.compute_s),
            sum(|t| t.download_s),
            sum(|t| t.write_s),
            sum(|t| t.wait_s)
        );
        println!("output fingerprint {:08x}", fingerprint(&output)?);
        for (t, end) in tiles.iter().zip(&ends) {
            println!(
                "  tile {:?}: read {:.3} upload {:.3} compute {:.3} download {:.3} write {:.3} waited {:.3}; \
                 written at {end:.3} s",
                t.rows, t.read_s, t.upload_s, t.compute_s, t.download_s, t.write_s, t.wait_s
            );
        }
    }
    std::fs::remove_file(&output).ok();
    Ok(())
}
