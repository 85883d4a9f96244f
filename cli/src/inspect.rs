//! `cliper devices`, `cliper info` and `cliper convert`: looking at devices and files, converting files.

use crate::chain::{Context, batch_files};
use crate::failure::CliError;
use cliper::chain::{FileSpec, Origin, OutputOptions, RunFiles, TileInput, output_path, save_converted};
use cliper::prelude::*;
use cliper::{DicomInfo, Result, SlabFile, read_mat, show_number, show_value};
use num_complex::{Complex32, Complex64};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// `cliper cache info|clear`: the on-disk program cache the environment selects.
pub fn cache(ctx: &Context, action: &str) -> Result<()> {
    let app = ClApp::builder().use_env(true);
    let app = match &ctx.device {
        Some(spec) => app.select(spec),
        None => app,
    };
    let Some(cache) = app.build()?.program_cache().cloned() else {
        say!(
            "the program cache is off for this device ({0}=off, PoCL without {0}=on — PoCL caches its kernels \
             itself — or no home folder to keep it in)",
            cliper::CACHE_ENV
        );
        return Ok(());
    };
    let info = if action == "clear" { cache.clear()? } else { cache.info()? };
    if ctx.json {
        say!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "dir": info.dir.display().to_string(), "entries": info.entries, "bytes": info.bytes,
                "cleared": action == "clear",
            }))
            .unwrap_or_default()
        );
    } else if action == "clear" {
        say!("removed {info}");
    } else {
        say!("{info}");
    }
    Ok(())
}

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
        say!("{}", serde_json::to_string_pretty(&json!({ "devices": list, "why": why })).unwrap_or_default());
        return Ok(());
    }
    say!(
        "  {:<5} {:<11} {:<36} {:<30} {:<18} {:>4} {:>5} {:>9} {:>7} {:>6} {:>4} {:>10}",
        "id",
        "kind",
        "device",
        "platform",
        "version",
        "CUs",
        "MHz",
        "memory",
        "local",
        "max WG",
        "fp64",
        "score"
    );
    for d in &devices {
        say!(
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
        Some(id) => say!("\nthe device cliper uses (marked *): {id}, chosen by {why}"),
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

/// A value of any file type as complex f64 (64-bit integers beyond 2⁵³ rounded: fine for statistics).
trait Widened: Copy {
    fn widened(self) -> Complex64;
}
macro_rules! widened_real {
    ($($t:ty),*) => {$(impl Widened for $t {
        fn widened(self) -> Complex64 { Complex64::new(self as f64, 0.0) }
    })*};
}
widened_real!(u8, u16, u32, u64, i8, i16, i32, i64, f32, f64);
impl Widened for Complex32 {
    fn widened(self) -> Complex64 {
        Complex64::new(f64::from(self.re), f64::from(self.im))
    }
}
impl Widened for Complex64 {
    fn widened(self) -> Complex64 {
        self
    }
}

/// Statistics of one array gathered a slab at a time (in the file's order, so the sums are those of one pass over
/// the whole array): element count, min/max (of |z| for complex) and mean over the finite values, and how many
/// are NaN, +∞ and −∞ (numpy's nanmin/nanmax would hide them; a plain mean would be NaN).
struct Stats {
    complex: bool,
    elements: usize,
    finite: usize,
    nan: usize,
    pos_inf: usize,
    neg_inf: usize,
    min: f64,
    max: f64,
    sum: Complex64,
}

impl Stats {
    fn new(complex: bool) -> Stats {
        Stats {
            complex,
            elements: 0,
            finite: 0,
            nan: 0,
            pos_inf: 0,
            neg_inf: 0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            sum: Complex64::new(0.0, 0.0),
        }
    }

    /// Takes in the elements of `a`, in its logical (row-major) order.
    fn add(&mut self, a: &HostArray) {
        match a {
            HostArray::U8(x) => self.add_values(x.iter().copied()),
            HostArray::U16(x) => self.add_values(x.iter().copied()),
            HostArray::U32(x) => self.add_values(x.iter().copied()),
            HostArray::U64(x) => self.add_values(x.iter().copied()),
            HostArray::I8(x) => self.add_values(x.iter().copied()),
            HostArray::I16(x) => self.add_values(x.iter().copied()),
            HostArray::I32(x) => self.add_values(x.iter().copied()),
            HostArray::I64(x) => self.add_values(x.iter().copied()),
            HostArray::F32(x) => self.add_values(x.iter().copied()),
            HostArray::F64(x) => self.add_values(x.iter().copied()),
            HostArray::C32(x) => self.add_values(x.iter().copied()),
            HostArray::C64(x) => self.add_values(x.iter().copied()),
        }
    }

    fn add_values<V: Widened>(&mut self, values: impl Iterator<Item = V>) {
        for v in values {
            let z = v.widened();
            self.elements += 1;
            if z.re.is_nan() || z.im.is_nan() {
                self.nan += 1;
            } else if z.re.is_finite() && z.im.is_finite() {
                let magnitude = if self.complex { z.norm() } else { z.re };
                self.min = self.min.min(magnitude);
                self.max = self.max.max(magnitude);
                self.sum += z;
                self.finite += 1;
            } else {
                self.pos_inf += usize::from(z.re == f64::INFINITY || z.im == f64::INFINITY);
                self.neg_inf += usize::from(z.re == f64::NEG_INFINITY || z.im == f64::NEG_INFINITY);
            }
        }
    }

    /// The statistics as the JSON `info` prints, with the array's name, shape, type and colour.
    fn report(&self, name: &str, shape: &[usize], dtype: Dtype, colour: bool) -> Value {
        let single = matches!(dtype, Dtype::F32 | Dtype::C32);
        let mean = self.sum / self.finite.max(1) as f64;
        let (min, max) = (self.min, self.max);
        let number = |v: f64| if v.is_finite() { json!(v) } else { Value::Null };
        let text = |v: f64| if v.is_finite() { show_number(v, single) } else { "–".into() };
        let none = self.finite == 0;
        json!({
            "name": name, "shape": shape, "type": dtype.name(), "elements": self.elements, "colour": colour,
            "finite": self.finite, "min": number(min), "max": number(max),
            "mean": if none { Value::Null } else if self.complex { json!([mean.re, mean.im]) } else { number(mean.re) },
            "min_text": text(min), "max_text": text(max),
            "mean_text": if none { "–".into() } else { show_value(mean, single) },
            "nan": self.nan, "pos_inf": self.pos_inf, "neg_inf": self.neg_inf, "complex": self.complex,
        })
    }
}

/// The statistics of an array in memory.
fn stats(name: &str, a: &HostArray, colour: bool) -> Value {
    let mut stats = Stats::new(a.dtype().is_complex());
    stats.add(a);
    stats.report(name, a.shape(), a.dtype(), colour)
}

/// Bytes of a file read per slab when `info` streams it: large enough for full-speed reads, small beside any
/// image worth streaming.
const INFO_SLAB_BYTES: usize = 16 << 20;

/// The statistics of a file read in slabs of its first axis (NPY, uncompressed NIfTI, grey TIFF): a slab in host
/// memory at a time, never the whole array.
fn streamed_stats(file: &SlabFile) -> Result<Value> {
    let shape = file.shape().to_vec();
    let extent = shape.first().copied().unwrap_or(1);
    let row_bytes = shape.iter().skip(1).product::<usize>() * file.dtype().size();
    let rows = (INFO_SLAB_BYTES / row_bytes.max(1)).max(1);
    // A NIfTI's scaling may widen the type: the report gives the type of what was read, as a whole read would.
    let first = file.read(0, 0..extent.min(rows))?;
    let dtype = first.dtype();
    let mut stats = Stats::new(dtype.is_complex());
    stats.add(&first);
    drop(first);
    for start in (rows..extent).step_by(rows) {
        stats.add(&file.read(0, start..extent.min(start + rows))?);
    }
    Ok(stats.report("", &shape, dtype, false))
}

/// The file of `spec` opened to be read in slabs when its format allows (NPY, uncompressed grey NIfTI, grey
/// TIFF) and has axes to cut; `None` for what is read whole.
fn slab_file(spec: &FileSpec) -> Result<Option<SlabFile>> {
    // The tiled runs' rule for which files read in slabs, so `info` and tiles agree.
    Ok(match TileInput::open_slabs(spec)? {
        Some(TileInput::File(file)) if !file.shape().is_empty() => Some(file),
        _ => None,
    })
}

pub fn info(ctx: &mut Context, text: &str) -> Result<()> {
    let spec = FileSpec::parse(text);
    let is_mat = spec.path.extension().is_some_and(|e| e.eq_ignore_ascii_case("mat"));
    let mut geometry = None;
    let pattern =
        !spec.path.exists() && spec.path.file_name().is_some_and(|n| n.to_string_lossy().contains(['*', '?']));
    let is_dicom = spec.path.is_dir() || pattern || cliper::is_dicom_file(&spec.path);
    let mut dicom = None;
    let streamed = if is_mat || is_dicom { None } else { slab_file(&spec)? };
    let variables: Vec<(String, HostArray, bool)> = match (&spec.variable, is_mat, &streamed) {
        (_, _, Some(_)) => Vec::new(),
        (None, true, _) => read_mat(&spec.path)?.into_iter().map(|(n, a)| (n, a, false)).collect(),
        _ => {
            // A DICOM input is read once, for its tags as well as its pixels.
            let image = if is_dicom {
                let read = cliper::read_dicom(&spec.path)?;
                dicom = Some(read.info);
                read.image
            } else {
                spec.read()?
            };
            geometry = image.geometry;
            vec![(spec.variable.clone().unwrap_or_default(), image.array, image.colour)]
        }
    };
    let report: Vec<Value> = match &streamed {
        Some(file) => {
            geometry = file.geometry().copied();
            vec![streamed_stats(file)?]
        }
        None => variables.iter().map(|(n, a, colour)| stats(n, a, *colour)).collect(),
    };
    let kspace = kspace_info(ctx, &spec.path, &variables);
    let geometry_json = geometry.as_ref().map_or(Value::Null, geometry_report);
    let dicom_json = dicom.as_ref().map_or(Value::Null, dicom_report);
    if ctx.json {
        let doc = json!({ "path": text, "variables": report, "kspace": kspace, "geometry": geometry_json, "dicom": dicom_json });
        say!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        return Ok(());
    }
    say!("{text}");
    for v in &report {
        let label = v["name"].as_str().filter(|n| !n.is_empty()).map(|n| format!("{n}: ")).unwrap_or_default();
        let (lo, hi) = if v["complex"] == json!(true) { ("min |z|", "max |z|") } else { ("min", "max") };
        let shape: Vec<usize> = serde_json::from_value(v["shape"].clone()).unwrap_or_default();
        let colour = v["colour"] == json!(true);
        // Colour channels are on axis −3.
        let channels = shape.len().checked_sub(3).and_then(|k| shape.get(k)).copied().unwrap_or(0);
        let colour = match (colour, channels) {
            (true, 2) => " colour (grey+alpha)",
            (true, 3) => " colour (RGB)",
            (true, 4) => " colour (RGBA)",
            _ => "",
        };
        let mut non_finite = format!("NaN {}", v["nan"]);
        for (key, label) in [("pos_inf", "+inf"), ("neg_inf", "-inf")] {
            if v[key].as_u64().unwrap_or(0) > 0 {
                non_finite += &format!("  {label} {}", v[key]);
            }
        }
        say!(
            "  {label}shape {} {}{colour}  {lo} {}  {hi} {}  mean {}{}  {non_finite}",
            v["shape"],
            v["type"].as_str().unwrap_or(""),
            v["min_text"].as_str().unwrap_or(""),
            v["max_text"].as_str().unwrap_or(""),
            v["mean_text"].as_str().unwrap_or(""),
            if v["finite"] != v["elements"] { format!(" (of {} finite)", v["finite"]) } else { String::new() },
        );
    }
    if let Some(d) = &dicom {
        say!("{}", dicom_text(d));
    }
    if let Some(g) = &geometry {
        say!("{}", geometry_text(g));
    }
    if let Some(k) = kspace.as_object() {
        say!(
            "  as k-space: frames {} coils {} spatial {}  sensitivity maps: {}  mask: {}",
            k["frames"],
            k["coils"],
            k["spatial"],
            k["sensitivity_maps"],
            k["mask"]
        );
    }
    Ok(())
}

/// The DICOM tags a researcher checks, as JSON.
fn dicom_report(d: &DicomInfo) -> Value {
    json!({
        "modality": d.modality, "series_uid": d.series_uid, "series_description": d.series_description,
        "series_number": d.series_number, "image_type": d.image_type, "sop_class_uid": d.sop_class_uid,
        "transfer_syntax": d.transfer_syntax, "transfer_syntax_uid": d.transfer_syntax_uid,
        "photometric": d.photometric, "bits_stored": d.bits_stored, "rescale": d.rescale,
        "files": d.files.len(),
    })
}

/// One line: modality, series, files, how the pixels were stored, and the rescale applied.
fn dicom_text(d: &DicomInfo) -> String {
    let rescale = match d.rescale.as_slice() {
        [(slope, intercept)] if *slope == 1.0 && *intercept == 0.0 => "no rescale".to_string(),
        [(slope, intercept)] => format!("rescale {slope} · v + {intercept}").replace("+ -", "− "),
        many => format!("rescale per frame or slice ({} pairs)", many.len()),
    };
    let description =
        if d.series_description.is_empty() { String::new() } else { format!(" \"{}\"", d.series_description) };
    format!(
        "  DICOM: {} series {}{description} ({}), {} file(s), {}{} ({})  {} {} bits stored  {rescale}",
        d.modality,
        if d.series_number.is_empty() { "–" } else { &d.series_number },
        d.series_uid,
        d.files.len(),
        if d.image_type.is_empty() { String::new() } else { format!("{}  ", d.image_type) },
        d.transfer_syntax,
        d.transfer_syntax_uid,
        d.photometric,
        d.bits_stored,
    )
}

/// A geometry as JSON: spacing, origin and directions in array order (slice, row, column), nibabel's affine,
/// the axis codes of (i, j, k), the units and the time step.
fn geometry_report(g: &Geometry) -> Value {
    json!({
        "spacing": g.spacing, "origin": g.origin, "direction": g.direction, "affine": g.affine(),
        "axis_codes": g.axis_codes(), "units": g.units.name(), "time_step": g.time_step,
    })
}

/// Two lines: spacing (slice × row × column), origin, orientation; and the affine's rows.
fn geometry_text(g: &Geometry) -> String {
    let n = |v: f64| {
        let t = format!("{:.4}", v);
        let t = t.trim_end_matches('0').trim_end_matches('.');
        if t == "-0" { "0".to_string() } else { t.to_string() }
    };
    let triple = |v: [f64; 3]| format!("({}, {}, {})", n(v[0]), n(v[1]), n(v[2]));
    let units = match g.units {
        SpaceUnit::Unknown => "(units not given)",
        other => other.name(),
    };
    let time = g.time_step.map(|t| format!("  time step {} s", n(t))).unwrap_or_default();
    let rows: Vec<String> =
        g.affine().iter().take(3).map(|r| format!("[{} {} {} {}]", n(r[0]), n(r[1]), n(r[2]), n(r[3]))).collect();
    format!(
        "  geometry: spacing {} × {} × {} {units} (slice × row × column)  first voxel at {} {units} (RAS)  axes {} (i j k){time}\n  affine {}",
        n(g.spacing[0]),
        n(g.spacing[1]),
        n(g.spacing[2]),
        triple(g.origin),
        g.axis_codes(),
        rows.join(" "),
    )
}

/// For files that hold k-space (a CFL pair, or a MAT file with a `kspace` variable): its frames, coils and
/// spatial shape as KData reads them.
fn kspace_info(ctx: &mut Context, path: &Path, variables: &[(String, HostArray, bool)]) -> Value {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    let holds_kspace = match ext.as_str() {
        "cfl" | "hdr" => variables.iter().all(|(_, a, _)| matches!(a, HostArray::C32(_))),
        "mat" => variables.iter().any(|(n, _, _)| n == "kspace"),
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

/// Converts one file or a batch, on the host (no device needed), by the rule every command saves with
/// ([`save_converted`]).
pub fn convert(ctx: &Context, input: &str, output: &str, options: &OutputOptions) -> std::result::Result<(), CliError> {
    let one = |spec: &FileSpec, out: &Path| -> Result<(Vec<usize>, Dtype)> {
        let image = spec.read()?;
        let shape = image.array.shape().to_vec();
        cliper::chain::create_parent(out)?;
        let origin = Origin {
            colour: image.colour,
            dtype: Some(image.array.dtype()),
            geometry: image.geometry,
            scaling: image.scaling,
            result_dtype: None,
        };
        Ok((shape, save_converted(out, image.array, origin, options)?))
    };
    let spec = FileSpec::parse(input);
    let batch = batch_files(input)?;
    convert_files(input, output, batch.as_deref())?.check()?;
    let Some(files) = batch else {
        let out = output_path(output, Some(&spec.path), false)?;
        let written = one(&spec, &out)?;
        report_convert(ctx, &spec.path, &out, &written);
        return Ok(());
    };
    let mut failed = 0;
    let mut worst = 0;
    for file in &files {
        let result = output_path(output, Some(file), true)
            .and_then(|out| one(&spec.with_path(file.clone()), &out).map(|w| (out, w)));
        match result {
            Ok((out, written)) => report_convert(ctx, file, &out, &written),
            Err(e) => {
                eprintln!("error: {}", crate::chain::naming(&file.display().to_string(), &e));
                failed += 1;
                worst = worst.max(crate::failure::exit_code(&e));
            }
        }
    }
    if failed > 0 {
        return Err(CliError::Batch { failed, total: files.len(), code: worst });
    }
    Ok(())
}

/// The files `convert` reads and writes: each input and its output (a batch's outputs that cannot be named are
/// refused per file later).
fn convert_files(input: &str, output: &str, batch: Option<&[PathBuf]>) -> Result<RunFiles> {
    let Some(files) = batch else {
        let out = output_path(output, Some(&FileSpec::parse(input).path), false)?;
        return Ok(RunFiles::default().read("the input", Path::new(input)).write("the output", &out));
    };
    let mut run = RunFiles::default();
    for file in files {
        run = run.read(&format!("input {}", file.display()), file);
        if let Ok(out) = output_path(output, Some(file), true) {
            run = run.write(&format!("the output of {}", file.display()), &out);
        }
    }
    Ok(run)
}

/// One line per converted file, with the type the file now holds.
fn report_convert(ctx: &Context, from: &Path, to: &Path, (shape, dtype): &(Vec<usize>, Dtype)) {
    if ctx.json {
        let line = json!({ "input": from.display().to_string(), "output": to.display().to_string(), "shape": shape, "type": dtype.name() });
        say!("{line}");
    } else {
        say!("{} → {} {:?} {}", from.display(), to.display(), shape, dtype.name());
    }
}
