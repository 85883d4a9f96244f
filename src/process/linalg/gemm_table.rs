//! [`GemmTable`]: which GEMM kernel and tiles [`super::MatMul`] uses on which device, read from a TOML table.
//!
//! The built-in table (`src/process/linalg/gemm_tiles.toml`) holds what `cliper-bench tune` measured on the devices
//! the project is tested on; a user's table, named by the environment variable `CLIPER_GEMM_TABLE`, is
//! consulted first, so a tuner run on a new device takes effect without rebuilding.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use super::gemm_strategy::GemmStrategy;
use crate::app::{DeviceInfo, DeviceKind};
use crate::element::Element;
use crate::error::{Error, Result};

/// The environment variable naming a user's table, read once per process.
pub const GEMM_TABLE_ENV: &str = "CLIPER_GEMM_TABLE";

const BUILT_IN: &str = include_str!("gemm_tiles.toml");

/// The product size of entries without one.
const DEFAULT_SIZE: usize = 4096;

/// A list of [`GemmTableEntry`]s as stored in TOML (`[[gemm]]` tables).
///
/// An entry applies to a device when every matching field it gives matches (`vendor` and `device` are
/// case-insensitive substrings of the device's vendor and name, `kind` is `gpu`, `cpu` or `accelerator`,
/// `compute_capability` is an NVIDIA GPU's `major.minor`) and its `type` is the element type. Among the entries
/// that apply, the one giving the most matching fields wins (then the `size` nearest the product's, then the
/// longer `device` text, then the earlier entry).
///
/// A device that no entry names is served by its facts: entries keyed by compute capability serve every GPU of
/// that architecture (an H200 takes the tiles tuned on the H100), and an entry's `compute_units` (those of the
/// device it was tuned on) scales its size to the device's: a product fills the GPU as one `√(units / tuned
/// units)` times larger did the tuned one (tiles per unit are what decide between large and small tiles).
///
/// ```
/// use cliper::{GemmStrategy, GemmTable};
/// let table = GemmTable::parse(
///     r#"
///     [[gemm]]
///     vendor = "nvidia"
///     type = "f32"
///     kernel = "128x128x16/16x16/4x4"
///
///     [[gemm]]
///     kind = "cpu"
///     type = "f32"
///     kernel = "blocked:32x64x16/8x4"
///     note = "PoCL, 2 cores"
///     "#,
///     std::path::Path::new("example.toml"),
/// )?;
/// let app = cliper::ClApp::new()?;
/// if let Some(entry) = table.entry::<f32>(app.device()) {
///     assert!(matches!(entry.strategy()?, GemmStrategy::Tiled(_) | GemmStrategy::Blocked(_)));
/// }
/// let err = GemmTable::parse("[[gemm]]\ntype = \"f16\"\nkernel = \"direct\"", "bad.toml".as_ref()).unwrap_err();
/// assert!(err.to_string().contains("bad.toml"));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GemmTable {
    /// The entries, in file order.
    #[serde(default)]
    pub gemm: Vec<GemmTableEntry>,
}

/// One row of a [`GemmTable`].
///
/// ```
/// let table = cliper::GemmTable::built_in();
/// let entry = &table.gemm[0];
/// assert!(entry.strategy().is_ok());
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GemmTableEntry {
    /// Case-insensitive substring of the device's vendor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor: Option<String>,
    /// Case-insensitive substring of the device's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// `gpu`, `cpu` or `accelerator`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// An NVIDIA GPU's compute capability, `major.minor` (`9.0` for the H100 and H200): the architecture,
    /// which decides the tiles more than the product does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_capability: Option<String>,
    /// The compute units of the device the entry was tuned on: on a device with other counts, the entry's size
    /// scales by `√(device's units / these)` (see [`GemmTable`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compute_units: Option<u32>,
    /// `f32`, `f64`, `c32` or `c64`.
    #[serde(rename = "type")]
    pub element: String,
    /// The product size (cube root of M·N·K) the entry was tuned at. Among entries that are otherwise equal,
    /// the one whose size is nearest the product's (by ratio) wins; an entry without a size counts as 4096.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<usize>,
    /// The kernel as [`GemmStrategy`]'s text: `MWGxNWGxKWG/MDIMCxNDIMC[/VWMxVWN]` for local-memory tiles,
    /// `blocked:` before it for register blocks without local memory.
    pub kernel: String,
    /// Free text: where the numbers come from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl GemmTableEntry {
    /// The kernel this entry names ([`GemmStrategy::Direct`] and [`GemmStrategy::Native`] are not table
    /// entries).
    pub fn strategy(&self) -> Result<GemmStrategy> {
        match self.kernel.parse::<GemmStrategy>()? {
            GemmStrategy::Direct
            | GemmStrategy::Native
            | GemmStrategy::TensorCore
            | GemmStrategy::Wgmma
            | GemmStrategy::RealEmbedding => Err(Error::invalid(
                "GemmTable",
                format!(
                    "kernel `{}`: a table entry names tiles, not the direct kernel or the host's GEMM",
                    self.kernel
                ),
            )),
            s => Ok(s),
        }
    }

    /// How many matching fields apply to `info` (`None` when one of them does not match).
    fn specificity(&self, info: &DeviceInfo) -> Option<usize> {
        let contains = |pattern: &Option<String>, text: &str| match pattern {
            None => Some(0),
            Some(p) if text.to_lowercase().contains(&p.to_lowercase()) => Some(1),
            Some(_) => None,
        };
        let kind = match self.kind.as_deref().map(str::to_lowercase).as_deref() {
            None => 0,
            Some("gpu") if info.kind == DeviceKind::Gpu => 1,
            Some("cpu") if info.kind == DeviceKind::Cpu => 1,
            Some("accelerator") if info.kind == DeviceKind::Accelerator => 1,
            Some(_) => return None,
        };
        let architecture = match (&self.compute_capability, info.compute_capability) {
            (None, _) => 0,
            (Some(cc), Some((major, minor))) if cc.trim() == format!("{major}.{minor}") => 1,
            (Some(_), _) => return None,
        };
        Some(contains(&self.vendor, &info.vendor)? + contains(&self.device, &info.name)? + kind + architecture)
    }

    /// The product size this entry stands for on `info`'s device: its size, scaled by the square root of the
    /// ratio of compute units when the entry gives the tuned device's.
    fn size_on(&self, info: &DeviceInfo) -> f64 {
        let size = self.size.unwrap_or(DEFAULT_SIZE).max(1) as f64;
        match self.compute_units {
            Some(tuned) if tuned > 0 && info.compute_units > 0 => {
                size * (f64::from(info.compute_units) / f64::from(tuned)).sqrt()
            }
            _ => size,
        }
    }
}

impl GemmTable {
    /// Reads a table from TOML text; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<GemmTable> {
        let format = |reason: String| Error::Format { path: path.to_path_buf(), reason };
        let table: GemmTable = toml::from_str(text).map_err(|e| format(format!("not a GEMM table: {e}")))?;
        for (i, entry) in table.gemm.iter().enumerate() {
            let which = format!("entry {} (type {:?}, kernel {:?})", i + 1, entry.element, entry.kernel);
            if !["f32", "f64", "c32", "c64"].contains(&entry.element.as_str()) {
                return Err(format(format!("{which}: type must be f32, f64, c32 or c64")));
            }
            if let Some(kind) = &entry.kind
                && !["gpu", "cpu", "accelerator"].contains(&kind.to_lowercase().as_str())
            {
                return Err(format(format!("{which}: kind {kind:?} is not gpu, cpu or accelerator")));
            }
            entry.strategy().map_err(|e| format(format!("{which}: {e}")))?;
        }
        Ok(table)
    }

    /// Reads a table file.
    pub fn load(path: &Path) -> Result<GemmTable> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
        Self::parse(&text, path)
    }

    /// The table compiled into the library.
    pub fn built_in() -> &'static GemmTable {
        static TABLE: LazyLock<GemmTable> = LazyLock::new(|| {
            GemmTable::parse(BUILT_IN, Path::new("src/process/linalg/gemm_tiles.toml")).unwrap_or_default()
        });
        &TABLE
    }

    /// The user's table named by `CLIPER_GEMM_TABLE` (read once): `None` when the variable is unset or empty,
    /// an error naming the file when it cannot be read or parsed.
    pub fn user() -> Option<Result<&'static GemmTable>> {
        static TABLE: LazyLock<Option<Result<GemmTable>>> = LazyLock::new(|| {
            let path = PathBuf::from(std::env::var_os(GEMM_TABLE_ENV).filter(|p| !p.is_empty())?);
            Some(GemmTable::load(&path))
        });
        TABLE.as_ref().map(|table| table.as_ref().map_err(Clone::clone))
    }

    /// The entry of this table for `T` on `info`'s device for 4096³ products, if any applies.
    pub fn entry<T: Element>(&self, info: &DeviceInfo) -> Option<&GemmTableEntry> {
        self.entry_for_size::<T>(info, DEFAULT_SIZE)
    }

    /// The entry of this table for `T` on `info`'s device for products of about `size`³, if any applies.
    pub fn entry_for_size<T: Element>(&self, info: &DeviceInfo, size: usize) -> Option<&GemmTableEntry> {
        let mut best: Option<(&GemmTableEntry, (usize, i64, usize))> = None;
        for entry in self.gemm.iter().filter(|e| e.element == T::NAME) {
            let Some(score) = entry.specificity(info) else { continue };
            // Nearness by ratio, in thousandths of a natural log (negated: larger is nearer).
            let ratio = (entry.size_on(info) / size.max(1) as f64).ln().abs();
            let rank = (score, -(ratio * 1000.0) as i64, entry.device.as_ref().map_or(0, String::len));
            if best.is_none_or(|(_, r)| rank > r) {
                best = Some((entry, rank));
            }
        }
        best.map(|(entry, _)| entry)
    }
}

/// The entry [`super::MatMul`] uses for `T` on `info` for products of about `size`³: the user's table first,
/// then the built-in one.
pub(crate) fn lookup<T: Element>(info: &DeviceInfo, size: usize) -> Option<(&'static GemmTableEntry, GemmStrategy)> {
    let user = GemmTable::user().and_then(|t| t.ok());
    [user, Some(GemmTable::built_in())]
        .into_iter()
        .flatten()
        .filter_map(|table| table.entry_for_size::<T>(info, size))
        .find_map(|entry| entry.strategy().ok().map(|s| (entry, s)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_table_parses_and_names_valid_kernels() {
        let table = GemmTable::parse(BUILT_IN, Path::new("gemm_tiles.toml")).unwrap();
        assert!(!table.gemm.is_empty());
        assert_eq!(&table, GemmTable::built_in());
    }

    #[test]
    fn the_nearest_size_wins_among_equal_entries() {
        let table = GemmTable::parse(
            "[[gemm]]\ntype = \"f32\"\nkernel = \"64x64x8/8x8\"\nsize = 1024\n\n\
             [[gemm]]\ntype = \"f32\"\nkernel = \"128x128x8/16x16/4x4\"\n",
            Path::new("t.toml"),
        )
        .unwrap();
        let app = crate::app::ClApp::new().unwrap();
        let kernel = |size| table.entry_for_size::<f32>(app.device(), size).unwrap().kernel.clone();
        assert_eq!(kernel(1000), "64x64x8/8x8");
        assert_eq!(kernel(1500), "64x64x8/8x8");
        assert_eq!(kernel(2500), "128x128x8/16x16/4x4");
        assert_eq!(kernel(8192), "128x128x8/16x16/4x4");
        assert!(table.entry_for_size::<f64>(app.device(), 1024).is_none());
    }

    #[test]
    fn devices_absent_from_the_table_are_served_by_their_facts() {
        let table = GemmTable::built_in();
        let kernel = |info: &DeviceInfo, size| table.entry_for_size::<f32>(info, size).unwrap().kernel.clone();
        let h100 = DeviceInfo::for_tests(DeviceKind::Gpu);
        assert_eq!(h100.compute_units, 132);
        let h200 = DeviceInfo { name: "NVIDIA H200".into(), ..h100.clone() };
        // The same architecture: the H100's tuned tiles at both sizes.
        for size in [1024, 4096] {
            assert_eq!(kernel(&h200, size), kernel(&h100, size), "{size}");
        }
        assert_ne!(kernel(&h200, 1024), kernel(&h200, 4096));
        // Another architecture with a third of the units: the generic entries, their sizes scaled by √(44/132)
        // (4096 → 2365, 1024 → 591): large tiles at 4096³, small ones at 512³.
        let small =
            DeviceInfo { name: "NVIDIA L4".into(), compute_units: 44, compute_capability: Some((8, 9)), ..h100 };
        assert_eq!(kernel(&small, 4096), "128x128x8/16x16/4x4");
        assert_eq!(kernel(&small, 512), "128x64x16/8x16/2x1");
    }

    #[test]
    fn bad_tables_name_the_file_and_entry() {
        let path = Path::new("t.toml");
        let e = GemmTable::parse("[[gemm]]\ntype = \"f32\"\nkernel = \"12x\"", path).unwrap_err().to_string();
        assert!(e.contains("t.toml") && e.contains("entry 1") && e.contains("12x"), "{e}");
        let e = GemmTable::parse("[[gemm]]\ntype = \"f32\"\nkernel = \"direct\"", path).unwrap_err().to_string();
        assert!(e.contains("not the direct kernel"), "{e}");
        let e = GemmTable::parse("[[gemm]]\ntype = \"f32\"\nkernel = \"64x64x8/8x8\"\nkind = \"tpu\"", path)
            .unwrap_err()
            .to_string();
        assert!(e.contains("tpu"), "{e}");
        let e = GemmTable::parse("[[gemm]]\ntype = \"f32\"\nkernal = \"64x64x8/8x8\"", path).unwrap_err().to_string();
        assert!(e.contains("kernal"), "{e}");
    }
}
