//! Device discovery, description and selection.
//!
//! Selection is deterministic: devices are ranked by kind (GPU, then accelerator, then CPU), then by a score
//! (compute units × clock × a per-vendor factor for the lanes behind one compute unit, as OpenCLIPER's
//! `CLapp::score`), then by platform and device index. Every device keeps its own place in the list, so equal
//! scores never hide a device.

use crate::error::{Error, Result};
use opencl3::device::{
    CL_DEVICE_NOT_FOUND, CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU, Device,
};
use opencl3::error_codes::{CL_PLATFORM_NOT_FOUND_KHR, DLOPEN_RUNTIME_LOAD_FAILED};
use std::fmt;

/// What kind of processor a device is. The order is the preference order of [`super::ClApp::new`].
///
/// ```
/// use cliper::{ClApp, DeviceKind};
/// assert!(DeviceKind::Gpu < DeviceKind::Cpu); // the preference order
/// let app = ClApp::new()?;
/// println!("a {} device", app.device().kind);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DeviceKind {
    /// A graphics processor.
    Gpu,
    /// A dedicated accelerator (FPGA, DSP, …).
    Accelerator,
    /// A CPU (PoCL, Intel's or AMD's CPU runtimes).
    Cpu,
    /// Anything else (custom devices).
    Other,
}

impl fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeviceKind::Gpu => "GPU",
            DeviceKind::Accelerator => "accelerator",
            DeviceKind::Cpu => "CPU",
            DeviceKind::Other => "other",
        })
    }
}

/// One OpenCL device as [`super::ClApp::devices`] lists it.
///
/// ```
/// let devices = cliper::ClApp::devices()?;
/// for d in &devices {
///     println!("{} {} ({}, {} compute units)", d.id(), d.name, d.kind, d.compute_units);
/// }
/// assert!(devices.iter().filter(|d| d.preferred).count() <= 1);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceInfo {
    /// Index of the platform in the ICD loader's list.
    pub platform_index: usize,
    /// Index of the device within its platform.
    pub device_index: usize,
    /// The platform's name (`NVIDIA CUDA`, `Portable Computing Language`, …).
    pub platform_name: String,
    /// The device's name.
    pub name: String,
    /// The device's vendor.
    pub vendor: String,
    /// The device's version string (`OpenCL 3.0 CUDA`).
    pub version: String,
    /// The OpenCL version the device supports, parsed from `version`.
    pub opencl_version: (u32, u32),
    /// The driver's version string.
    pub driver_version: String,
    /// GPU, accelerator, CPU or other.
    pub kind: DeviceKind,
    /// Number of compute units (SMs, CUs, cores).
    pub compute_units: u32,
    /// Maximum clock in MHz.
    pub clock_mhz: u32,
    /// Global memory size in bytes.
    pub global_mem_bytes: u64,
    /// Local (work-group shared) memory per work-group in bytes.
    pub local_mem_bytes: u64,
    /// The largest single allocation in bytes.
    pub max_alloc_bytes: u64,
    /// The largest work-group size.
    pub max_work_group_size: usize,
    /// Whether the device does double precision (`cl_khr_fp64`).
    pub fp64: bool,
    /// The compute capability (major, minor) of an NVIDIA GPU (`cl_nv_device_attribute_query`; 9.0 for the
    /// H100 and H200), `None` elsewhere: what decides whether its tensor cores can be reached through inline PTX.
    pub compute_capability: Option<(u32, u32)>,
    /// Whether [`super::ClApp::new`] would pick this device (honouring `CLIPER_DEVICE`).
    pub preferred: bool,
}

#[cfg(test)]
impl DeviceInfo {
    /// A device described by hand, for planners' unit tests: an H100-like GPU (132 units, 48 KiB local memory,
    /// 1024 work-items) for `DeviceKind::Gpu`, a 2-core PoCL-like CPU (1 MiB "local" memory, 4096 work-items)
    /// otherwise.
    pub(crate) fn for_tests(kind: DeviceKind) -> DeviceInfo {
        let gpu = kind == DeviceKind::Gpu;
        DeviceInfo {
            platform_index: 0,
            device_index: 0,
            platform_name: if gpu { "NVIDIA CUDA" } else { "Portable Computing Language" }.into(),
            name: if gpu { "NVIDIA H100 80GB HBM3" } else { "cpu" }.into(),
            vendor: if gpu { "NVIDIA Corporation" } else { "GenuineIntel" }.into(),
            version: "OpenCL 3.0".into(),
            opencl_version: (3, 0),
            driver_version: "test".into(),
            kind,
            compute_units: if gpu { 132 } else { 2 },
            clock_mhz: if gpu { 1980 } else { 2000 },
            global_mem_bytes: 80 << 30,
            local_mem_bytes: if gpu { 48 << 10 } else { 1 << 20 },
            max_alloc_bytes: 20 << 30,
            max_work_group_size: if gpu { 1024 } else { 4096 },
            fp64: true,
            compute_capability: if gpu { Some((9, 0)) } else { None },
            preferred: true,
        }
    }
}

impl DeviceInfo {
    /// `"P:D"`, the index form `CLIPER_DEVICE` accepts.
    ///
    /// ```
    /// let first = &cliper::ClApp::devices()?[0];
    /// let same = cliper::ClApp::builder().select(&first.id()).build()?;
    /// assert_eq!(same.device().name, first.name);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn id(&self) -> String {
        format!("{}:{}", self.platform_index, self.device_index)
    }

    /// Roughly how many arithmetic lanes stand behind one compute unit, by vendor and kind.
    ///
    /// Compute units are not comparable across vendors: an NVIDIA SM has 128 FP32 lanes, an AMD CU 64, an
    /// Intel GPU "compute unit" is one 8-wide EU, a CPU core a SIMD unit of about 8 floats.
    pub fn vendor_factor(&self) -> f64 {
        let vendor = self.vendor.to_lowercase();
        match self.kind {
            DeviceKind::Cpu => 8.0,
            _ if vendor.contains("nvidia") => 128.0,
            _ if vendor.contains("advanced micro devices") || vendor.contains("amd") => 64.0,
            _ if vendor.contains("apple") => 128.0,
            _ if vendor.contains("intel") => 8.0,
            _ => 16.0,
        }
    }

    /// The score used to rank devices of the same kind: compute units × clock (MHz) × vendor factor.
    ///
    /// ```
    /// # let mut d = cliper::ClApp::devices()?.remove(0);
    /// d.compute_units = 132; d.clock_mhz = 1980; d.kind = cliper::DeviceKind::Gpu; d.vendor = "NVIDIA Corporation".into();
    /// assert_eq!(d.score(), 132.0 * 1980.0 * 128.0);
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn score(&self) -> f64 {
        f64::from(self.compute_units) * f64::from(self.clock_mhz.max(1)) * self.vendor_factor()
    }

    /// One line for listings: id, kind, name, platform, version, units, memory, fp64.
    ///
    /// ```
    /// for d in cliper::ClApp::devices()? {
    ///     println!("{}", d.summary());
    /// }
    /// # Ok::<(), cliper::Error>(())
    /// ```
    pub fn summary(&self) -> String {
        format!(
            "{} {:<11} {} [{}] {}, {} CU @ {} MHz, {:.1} GiB, fp64 {}",
            self.id(),
            self.kind.to_string(),
            self.name.trim(),
            self.platform_name.trim(),
            self.version.trim(),
            self.compute_units,
            self.clock_mhz,
            self.global_mem_bytes as f64 / (1u64 << 30) as f64,
            if self.fp64 { "yes" } else { "no" }
        )
    }
}

/// A device filter: by kind, index, or a name substring. This is what `CLIPER_DEVICE` holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum DeviceSpec {
    /// `all` or `*`: every device.
    All,
    Kind(DeviceKind),
    Index(usize, usize),
    Name(String),
}

impl DeviceSpec {
    /// Parses `gpu`, `cpu`, `accelerator`, `P:D`, or anything else as a case-insensitive name substring.
    pub(crate) fn parse(spec: &str) -> DeviceSpec {
        let s = spec.trim();
        // `gpu:*` is every GPU: as a set, the same as `gpu`.
        let lower = s.to_lowercase();
        match lower.strip_suffix(":*").unwrap_or(&lower) {
            "all" | "*" => return DeviceSpec::All,
            "gpu" => return DeviceSpec::Kind(DeviceKind::Gpu),
            "cpu" => return DeviceSpec::Kind(DeviceKind::Cpu),
            "accelerator" | "acc" => return DeviceSpec::Kind(DeviceKind::Accelerator),
            _ => {}
        }
        if let Some((p, d)) = s.split_once(':')
            && let (Ok(p), Ok(d)) = (p.trim().parse(), d.trim().parse())
        {
            return DeviceSpec::Index(p, d);
        }
        DeviceSpec::Name(s.to_lowercase())
    }

    /// The specs of a set: `all`, `gpu:*`, or a comma-separated list (`0:0,0:1`, `gpu,cpu`).
    pub(crate) fn parse_set(spec: &str) -> Vec<DeviceSpec> {
        spec.split(',').filter(|p| !p.trim().is_empty()).map(DeviceSpec::parse).collect()
    }

    pub(crate) fn matches(&self, d: &DeviceInfo) -> bool {
        match self {
            DeviceSpec::All => true,
            DeviceSpec::Kind(k) => d.kind == *k,
            DeviceSpec::Index(p, i) => d.platform_index == *p && d.device_index == *i,
            DeviceSpec::Name(n) => {
                [&d.name, &d.vendor, &d.platform_name].iter().any(|field| field.to_lowercase().contains(n.as_str()))
            }
        }
    }
}

/// Filters a builder applies; all given ones must hold.
#[derive(Clone, Debug, Default)]
pub(crate) struct DeviceFilter {
    pub kind: Option<DeviceKind>,
    pub platform: Option<String>,
    pub vendor: Option<String>,
    pub name: Option<String>,
    pub min_version: Option<(u32, u32)>,
    pub spec: Option<String>,
    /// The spec came from `CLIPER_DEVICE` (so messages name the variable), not from the program.
    pub spec_from_env: bool,
}

impl DeviceFilter {
    pub(crate) fn matches(&self, d: &DeviceInfo) -> bool {
        let contains = |field: &str, want: &Option<String>| {
            want.as_ref().is_none_or(|w| field.to_lowercase().contains(&w.to_lowercase()))
        };
        self.kind.is_none_or(|k| d.kind == k)
            && contains(&d.platform_name, &self.platform)
            && contains(&d.vendor, &self.vendor)
            && contains(&d.name, &self.name)
            && self.min_version.is_none_or(|v| d.opencl_version >= v)
            && self.spec.as_deref().is_none_or(|s| DeviceSpec::parse_set(s).iter().any(|spec| spec.matches(d)))
    }

    pub(crate) fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(s) = &self.spec {
            parts.push(if self.spec_from_env { format!("CLIPER_DEVICE={s}") } else { s.clone() });
        }
        if let Some(k) = self.kind {
            parts.push(format!("type={k}"));
        }
        for (label, v) in [("platform", &self.platform), ("vendor", &self.vendor), ("name", &self.name)] {
            if let Some(v) = v {
                parts.push(format!("{label}~{v}"));
            }
        }
        if let Some((a, b)) = self.min_version {
            parts.push(format!("OpenCL>={a}.{b}"));
        }
        if parts.is_empty() { "any device".to_string() } else { parts.join(", ") }
    }
}

/// Indices of `devices` in preference order: kind, then score (descending), then platform/device index.
pub(crate) fn preference_order(devices: &[DeviceInfo]) -> Vec<usize> {
    let mut order: Vec<(usize, &DeviceInfo)> = devices.iter().enumerate().collect();
    order.sort_by(|&(_, da), &(_, db)| {
        da.kind
            .cmp(&db.kind)
            .then(db.score().total_cmp(&da.score()))
            .then((da.platform_index, da.device_index).cmp(&(db.platform_index, db.device_index)))
    });
    order.into_iter().map(|(i, _)| i).collect()
}

/// Every device passing `filter`, best first, or a [`Error::DeviceSelection`] listing what exists.
pub(crate) fn choose_all(devices: &[DeviceInfo], filter: &DeviceFilter) -> Result<Vec<usize>> {
    let chosen: Vec<usize> =
        preference_order(devices).into_iter().filter(|&i| devices.get(i).is_some_and(|d| filter.matches(d))).collect();
    if chosen.is_empty() {
        return Err(Error::DeviceSelection { spec: filter.describe(), available: listing(devices) });
    }
    Ok(chosen)
}

/// The best device passing `filter`, or a [`Error::DeviceSelection`] listing what exists.
pub(crate) fn choose(devices: &[DeviceInfo], filter: &DeviceFilter) -> Result<usize> {
    preference_order(devices)
        .into_iter()
        .find(|&i| devices.get(i).is_some_and(|d| filter.matches(d)))
        .ok_or_else(|| Error::DeviceSelection { spec: filter.describe(), available: listing(devices) })
}

fn listing(devices: &[DeviceInfo]) -> String {
    devices.iter().map(|d| format!("  {}", d.summary())).collect::<Vec<_>>().join("\n")
}

const INSTALL_HINT: &str = "on Debian/Ubuntu run `sudo apt-get install ocl-icd-libopencl1 pocl-opencl-icd` \
    (OpenCL on the CPU), or install your GPU vendor's OpenCL driver; `make demo` and `make test` do the \
    former for you (scripts/install-opencl.sh)";

/// Every device of every platform, with its raw handle. `preferred` is left false.
pub(crate) fn discover() -> Result<Vec<(DeviceInfo, Device)>> {
    // One discovery at a time: PoCL 3.1 initialises its devices lazily inside clGetDeviceIDs, and two threads
    // doing so at once can see CL_DEVICE_NOT_FOUND (seen in this crate's parallel tests).
    static DISCOVERY: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = DISCOVERY.lock().unwrap_or_else(|p| p.into_inner());
    let platforms = match opencl3::platform::get_platforms() {
        Ok(p) => p,
        Err(e) if e.0 == DLOPEN_RUNTIME_LOAD_FAILED => {
            return Err(Error::NoDevice {
                reason: format!("the OpenCL library libOpenCL.so.1 could not be loaded; {INSTALL_HINT}"),
            });
        }
        Err(e) if e.0 == CL_PLATFORM_NOT_FOUND_KHR => {
            return Err(Error::NoDevice { reason: format!("no OpenCL platform is installed; {INSTALL_HINT}") });
        }
        Err(e) => return Err(Error::cl(e.0, "listing OpenCL platforms")),
    };
    let mut found = Vec::new();
    for (pi, platform) in platforms.iter().enumerate() {
        let platform_name = platform.name().unwrap_or_else(|_| format!("platform {pi}"));
        let ids = match platform.get_devices(CL_DEVICE_TYPE_ALL) {
            Ok(ids) => ids,
            Err(e) if e.0 == CL_DEVICE_NOT_FOUND => continue,
            Err(e) => {
                return Err(Error::cl(e.0, format!("listing the devices of platform `{platform_name}`")));
            }
        };
        for (di, id) in ids.into_iter().enumerate() {
            let device = Device::new(id);
            let info = describe(&device, pi, di, &platform_name)
                .map_err(|e| Error::cl(e.0, format!("querying device {pi}:{di} of `{platform_name}`")))?;
            found.push((info, device));
        }
    }
    if found.is_empty() {
        return Err(Error::NoDevice {
            reason: format!("{} OpenCL platform(s) found but no device; {INSTALL_HINT}", platforms.len()),
        });
    }
    Ok(found)
}

fn describe(
    device: &Device,
    platform_index: usize,
    device_index: usize,
    platform_name: &str,
) -> std::result::Result<DeviceInfo, opencl3::error_codes::ClError> {
    let ty = device.dev_type()?;
    let kind = if ty & CL_DEVICE_TYPE_GPU != 0 {
        DeviceKind::Gpu
    } else if ty & CL_DEVICE_TYPE_ACCELERATOR != 0 {
        DeviceKind::Accelerator
    } else if ty & CL_DEVICE_TYPE_CPU != 0 {
        DeviceKind::Cpu
    } else {
        DeviceKind::Other
    };
    let version = device.version()?;
    Ok(DeviceInfo {
        platform_index,
        device_index,
        platform_name: platform_name.to_string(),
        name: device.name()?.trim().to_string(),
        vendor: device.vendor()?.trim().to_string(),
        opencl_version: parse_version(&version),
        version: version.trim().to_string(),
        driver_version: device.driver_version().unwrap_or_default().trim().to_string(),
        kind,
        compute_units: device.max_compute_units()?,
        clock_mhz: device.max_clock_frequency().unwrap_or(0),
        global_mem_bytes: device.global_mem_size()?,
        local_mem_bytes: device.local_mem_size()?,
        max_alloc_bytes: device.max_mem_alloc_size()?,
        max_work_group_size: device.max_work_group_size()?,
        fp64: device.double_fp_config().map(|c| c != 0).unwrap_or(false),
        // Asked of NVIDIA's devices only: others may not know the query.
        compute_capability: if kind == DeviceKind::Gpu && device.vendor()?.to_uppercase().contains("NVIDIA") {
            device.compute_capability_major_nv().ok().zip(device.compute_capability_minor_nv().ok())
        } else {
            None
        },
        preferred: false,
    })
}

/// `"OpenCL 3.0 CUDA 12.4"` → `(3, 0)`; anything unparsable → `(1, 0)`.
pub(crate) fn parse_version(version: &str) -> (u32, u32) {
    version
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.split_once('.'))
        .and_then(|(a, b)| {
            let b: String = b.chars().take_while(char::is_ascii_digit).collect();
            Some((a.parse().ok()?, b.parse().ok()?))
        })
        .unwrap_or((1, 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(p: usize, d: usize, kind: DeviceKind, vendor: &str, cu: u32, mhz: u32) -> DeviceInfo {
        DeviceInfo {
            platform_index: p,
            device_index: d,
            platform_name: format!("platform {p}"),
            name: format!("{vendor} device"),
            vendor: vendor.to_string(),
            version: "OpenCL 3.0".into(),
            opencl_version: (3, 0),
            driver_version: String::new(),
            kind,
            compute_units: cu,
            clock_mhz: mhz,
            global_mem_bytes: 1 << 30,
            local_mem_bytes: 1 << 15,
            max_alloc_bytes: 1 << 28,
            max_work_group_size: 256,
            fp64: true,
            compute_capability: None,
            preferred: false,
        }
    }

    #[test]
    fn gpu_beats_faster_cpu_and_ties_break_by_index() {
        let devices = vec![
            dev(0, 0, DeviceKind::Cpu, "pocl", 128, 5000),
            dev(1, 0, DeviceKind::Gpu, "NVIDIA Corporation", 2, 500),
            dev(1, 1, DeviceKind::Gpu, "NVIDIA Corporation", 2, 500),
            dev(2, 0, DeviceKind::Accelerator, "x", 64, 1000),
        ];
        assert_eq!(preference_order(&devices), vec![1, 2, 3, 0]);
        assert_eq!(choose(&devices, &DeviceFilter::default()).unwrap(), 1);
    }

    #[test]
    fn higher_score_wins_within_a_kind() {
        let devices = vec![
            dev(0, 0, DeviceKind::Gpu, "Intel(R) Corporation", 96, 1300),
            dev(0, 1, DeviceKind::Gpu, "Advanced Micro Devices, Inc.", 60, 1800),
        ];
        assert_eq!(preference_order(&devices), vec![1, 0]);
    }

    #[test]
    fn specs_parse_and_match() {
        let d = dev(1, 0, DeviceKind::Gpu, "NVIDIA Corporation", 132, 1980);
        assert_eq!(DeviceSpec::parse("GPU"), DeviceSpec::Kind(DeviceKind::Gpu));
        assert_eq!(DeviceSpec::parse(" 1:0 "), DeviceSpec::Index(1, 0));
        assert!(DeviceSpec::parse("1:0").matches(&d));
        assert!(DeviceSpec::parse("nvidia").matches(&d));
        assert!(!DeviceSpec::parse("cpu").matches(&d));
        assert!(!DeviceSpec::parse("radeon").matches(&d));
    }

    #[test]
    fn unmatched_filter_lists_devices() {
        let devices = vec![dev(0, 0, DeviceKind::Cpu, "pocl", 4, 3000)];
        let filter = DeviceFilter { spec: Some("quantum".into()), spec_from_env: true, ..Default::default() };
        let err = choose(&devices, &filter).unwrap_err().to_string();
        assert!(err.contains("CLIPER_DEVICE=quantum"), "{err}");
        assert!(err.contains("0:0 CPU"), "{err}");
        // A selection the program made (the command line's --device) does not blame the variable.
        let filter = DeviceFilter { spec: Some("gpu".into()), ..Default::default() };
        let err = choose(&devices, &filter).unwrap_err().to_string();
        assert!(err.contains("`gpu`") && !err.contains("CLIPER_DEVICE"), "{err}");
    }

    #[test]
    fn min_version_filters() {
        let mut old = dev(0, 0, DeviceKind::Gpu, "x", 4, 1000);
        old.opencl_version = (1, 1);
        let filter = DeviceFilter { min_version: Some((1, 2)), ..Default::default() };
        assert!(!filter.matches(&old));
        old.opencl_version = (2, 0);
        assert!(filter.matches(&old));
    }

    #[test]
    fn versions_parse() {
        assert_eq!(parse_version("OpenCL 3.0 CUDA 12.4.131"), (3, 0));
        assert_eq!(parse_version("OpenCL 1.2 pocl 1.8"), (1, 2));
        assert_eq!(parse_version("garbage"), (1, 0));
    }
}
