//! `cliper devices`, `cliper info` and `cliper convert`: looking at devices and files, converting files.

use crate::CliError;
use crate::chain::{Context, batch_files};
use crate::output::show;
use cliper::chain::{FileSpec, OutputOptions, output_path};
use cliper::prelude::*;
use cliper::{Result, read_mat, write_file};
use num_complex::{Complex32, Complex64};
use serde_json::{Value, json};
use std::path::Path;

pub fn devices(ctx: &Context) -> Result<()> {
    let devices = ClApp::devices()?;
    // ClApp::devices marks the environment's choice; --device overrides it.
    let chosen = match &ctx.device {
        Some(spec) => Some(ClApp::builder().select(spec).build()?.device().id()),
        None => devices.iter().find(|d| d.preferred).map(|d| d.id()),
    };
    let why = match (&ctx.device, std::env::var(cliper::DEVICE_ENV).ok()) {
        (Some(spec), _) => format!("--device {spec}"),
        (None, Some(spec)) => format!("{}={spec}", cliper::DEVICE_ENV),
        (None, None) => "the best device: GPU before accelerator before CPU, then compute units × clock × lanes per \
                         unit (the score column)"
            .into(),
    };
    if ctx.json {
        let list: Vec<Value> = devices
            .iter()
            .map(|d| {
                json!({
                    "id": d.id(), "kind": d.kind.to_string(), "name": d.name, "platform": d.platform_name,
                    "vendor": d.vendor, "version": d.version, "driver": d.driver_version,
                    "compute_units": d.compute_units, "clock_mhz": d.clock_mhz, "global_mem_bytes": d.global_mem_bytes,
                    "local_mem_bytes": d.local_mem_bytes, "max_alloc_bytes": d.max_alloc_bytes,
                    "max_work_group_size": d.max_work_group_size, "fp64": d.fp64, "score": d.score(),
                    "default": chosen.as_deref() == Some(d.id().as_str()),
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&json!({ "devices": list, "why": why })).unwrap_or_default());
        return Ok(());
    }
    println!(
        "  {:<5} {:<11} {:<36} {:<30} {:<18} {:>4} {:>5} {:>9} {:>7} {:>6} {:>4} {:>10}",
        "id", "kind", "device", "platform", "version", "CUs", "MHz", "memory", "local", "max WG", "fp64", "score"
    );
    for d in &devices {
        println!(
            "{} {:<5} {:<11} {:<36} {:<30} {:<18} {:>4} {:>5} {:>9} {:>7} {:>6} {:>4} {:>10.3e}",
            if chosen.as_deref() == Some(d.id().as_str()) { "*" } else { " " },
            d.id(),
            d.kind.to_string(),
            clip(&d.name, 36),
            clip(&d.platform_name, 30),
            clip(&d.version, 18),
            d.compute_units,
            d.clock_mhz,
            format!("{:.1} GiB", d.global_mem_bytes as f64 / (1u64 << 30) as f64),
            format!("{} KiB", d.local_mem_bytes / 1024),
            d.max_work_group_size,
            if d.fp64 { "yes" } else { "no" },
            d.score()
        );
    }
    match chosen {
        Some(id) => println!("\nthe device cliper uses (marked *): {id}, chosen by {why}"),
        None => {
            ClApp::new()?; // CLIPER_DEVICE matches nothing: the library's error says what it lists
        }
    }
    Ok(())
}

fn clip(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_string()
    } else {
        let mut c: String = s.chars().take(width - 1).collect();
        c.push('…');
        c
    }
}

/// Statistics of one array: element count, min/max (of |z| for complex), mean, NaN count.
fn stats(name: &str, a: &HostArray) -> Value {
    // Every type as complex f64 (64-bit integers beyond 2⁵³ rounded: fine for statistics).
    let values: Vec<Complex64> = match a.cast(Dtype::C64, Scale::Raw, false) {
        Ok(HostArray::C64(x)) => x.into_iter().collect(),
        _ => Vec::new(),
    };
    let complex = matches!(a, HostArray::C32(_) | HostArray::C64(_));
    let nan = values.iter().filter(|z| z.re.is_nan() || z.im.is_nan()).count();
    let finite: Vec<&Complex64> = values.iter().filter(|z| !(z.re.is_nan() || z.im.is_nan())).collect();
    let magnitude = |z: &Complex64| if complex { z.norm() } else { z.re };
    let min = finite.iter().map(|z| magnitude(z)).fold(f64::INFINITY, f64::min);
    let max = finite.iter().map(|z| magnitude(z)).fold(f64::NEG_INFINITY, f64::max);
    let mean = finite.iter().fold(Complex64::new(0.0, 0.0), |s, z| s + **z) / finite.len().max(1) as f64;
    let number = |v: f64| if v.is_finite() { json!(v) } else { Value::Null };
    json!({
        "name": name, "shape": a.shape(), "type": a.dtype().name(), "elements": values.len(),
        "min": number(min), "max": number(max),
        "mean": if complex { json!([mean.re, mean.im]) } else { number(mean.re) },
        "mean_text": show(mean), "nan": nan, "complex": complex,
    })
}

pub fn info(ctx: &mut Context, text: &str) -> Result<()> {
    let spec = FileSpec::parse(text);
    let is_mat = spec.path.extension().is_some_and(|e| e.eq_ignore_ascii_case("mat"));
    let variables: Vec<(String, HostArray)> = match (&spec.variable, is_mat) {
        (None, true) => read_mat(&spec.path)?,
        _ => vec![(spec.variable.clone().unwrap_or_default(), spec.read()?)],
    };
    let report: Vec<Value> = variables.iter().map(|(n, a)| stats(n, a)).collect();
    let kspace = kspace_info(ctx, &spec.path, &variables);
    if ctx.json {
        let doc = json!({ "path": text, "variables": report, "kspace": kspace });
        println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        return Ok(());
    }
    println!("{text}");
    for v in &report {
        let label = v["name"].as_str().filter(|n| !n.is_empty()).map(|n| format!("{n}: ")).unwrap_or_default();
        let (lo, hi) = if v["complex"] == json!(true) { ("min |z|", "max |z|") } else { ("min", "max") };
        println!(
            "  {label}shape {} {}  {lo} {}  {hi} {}  mean {}  NaN {}",
            v["shape"],
            v["type"].as_str().unwrap_or(""),
            v["min"],
            v["max"],
            v["mean_text"].as_str().unwrap_or(""),
            v["nan"]
        );
    }
    if let Some(k) = kspace.as_object() {
        println!(
            "  as k-space: frames {} coils {} spatial {}  sensitivity maps: {}  mask: {}",
            k["frames"], k["coils"], k["spatial"], k["sensitivity_maps"], k["mask"]
        );
    }
    Ok(())
}

/// For files that hold k-space (a CFL pair, or a MAT file with a `kspace` variable): its frames, coils and
/// spatial shape as KData reads them.
fn kspace_info(ctx: &mut Context, path: &Path, variables: &[(String, HostArray)]) -> Value {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    let holds_kspace = match ext.as_str() {
        "cfl" | "hdr" => variables.iter().all(|(_, a)| matches!(a, HostArray::C32(_))),
        "mat" => variables.iter().any(|(n, _)| n == "kspace"),
        _ => false,
    };
    if !holds_kspace {
        return Value::Null;
    }
    let Ok(app) = ctx.app() else { return Value::Null };
    match KData::<Complex32>::load(&app, path) {
        Ok(k) => json!({
            "frames": k.frame_shape(), "coils": k.num_coils(), "spatial": k.spatial_shape(),
            "sensitivity_maps": k.sensitivity_maps().is_some(), "mask": k.sampling_mask().is_some(),
        }),
        Err(_) => Value::Null,
    }
}

/// Converts one file or a batch, on the host (no device needed).
pub fn convert(ctx: &Context, input: &str, output: &str, options: &OutputOptions) -> std::result::Result<(), CliError> {
    let one = |spec: &FileSpec, out: &Path| -> Result<HostArray> {
        let host = spec.read()?;
        let host = match (options.dtype, options.scale) {
            (None, None) if !options.clip => host,
            (dtype, scale) => host.cast(dtype.unwrap_or(host.dtype()), scale.unwrap_or_default(), options.clip)?,
        };
        if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| Error::Io { path: dir.to_path_buf(), source })?;
        }
        write_file(out, &host).map_err(|e| match e {
            Error::Format { path, reason } if reason.contains("u8 or u16") || reason.contains("PNG") => Error::Format {
                path,
                reason: format!("{reason} (pass --type u16 or u8, with --scale minmax for float data)"),
            },
            other => other,
        })?;
        Ok(host)
    };
    let spec = FileSpec::parse(input);
    let Some(files) = batch_files(input)? else {
        let out = output_path(output, Some(&spec.path), false)?;
        let host = one(&spec, &out)?;
        report_convert(ctx, &spec.path, &out, &host);
        return Ok(());
    };
    let mut failed = 0;
    let mut worst = 0;
    for file in &files {
        let result = output_path(output, Some(file), true)
            .and_then(|out| one(&spec.with_path(file.clone()), &out).map(|h| (out, h)));
        match result {
            Ok((out, host)) => report_convert(ctx, file, &out, &host),
            Err(e) => {
                eprintln!("error: {}", crate::chain::naming(&file.display().to_string(), &e));
                failed += 1;
                worst = worst.max(crate::exit_code(&e));
            }
        }
    }
    if failed > 0 {
        return Err(CliError::Batch { failed, total: files.len(), code: worst });
    }
    Ok(())
}

fn report_convert(ctx: &Context, from: &Path, to: &Path, host: &HostArray) {
    if ctx.json {
        let line = json!({ "input": from.display().to_string(), "output": to.display().to_string(), "shape": host.shape(), "type": host.dtype().name() });
        println!("{line}");
    } else {
        println!("{} → {} {:?} {}", from.display(), to.display(), host.shape(), host.dtype().name());
    }
}
