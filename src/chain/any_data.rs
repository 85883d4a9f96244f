//! Arrays whose element type is known only at run time (from a file): how file arguments become device arrays
//! and back.

use crate::{
    ClApp, Dtype, Element, Error, HostArray, PngDepth, PngOptions, Result, Scale, XData, read_file, read_mat_variable,
    write_file,
};
use num_complex::{Complex32, Complex64};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// A device array of one of the four element types, for code that learns the type from a file.
///
/// ```
/// use cliper::chain::{AnyData, ElementKind};
/// let app = cliper::ClApp::new()?;
/// let host = cliper::HostArray::F64(ndarray::ArrayD::from_elem(ndarray::IxDyn(&[2, 3]), 0.5));
/// let x = AnyData::upload(&app, &host, ElementKind::F32, std::path::Path::new("memory"))?;
/// assert_eq!((x.shape(), x.kind()), (&[2, 3][..], ElementKind::F32));
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone)]
pub enum AnyData {
    /// Real single precision.
    F32(XData<f32>),
    /// Real double precision.
    F64(XData<f64>),
    /// Complex single precision.
    C32(XData<Complex32>),
    /// Complex double precision.
    C64(XData<Complex64>),
}

/// Runs `$body` with `$x` bound to the typed array inside an [`AnyData`].
macro_rules! dispatch {
    ($value:expr, $x:ident => $body:expr) => {
        match $value {
            AnyData::F32($x) => $body,
            AnyData::F64($x) => $body,
            AnyData::C32($x) => $body,
            AnyData::C64($x) => $body,
        }
    };
}
pub(crate) use dispatch;

/// The element types [`AnyData`] holds, and how an array of one goes into it.
///
/// ```
/// use cliper::chain::{AnyData, Kind};
/// let app = cliper::ClApp::new()?;
/// let x = f64::wrap(cliper::XData::zeros(&app, &[4])?);
/// assert!(matches!(x, AnyData::F64(_)));
/// # Ok::<(), cliper::Error>(())
/// ```
pub trait Kind: Element + 'static {
    /// The array in the matching variant.
    fn wrap(x: XData<Self>) -> AnyData;
}

macro_rules! kinds {
    ($($t:ty => $variant:ident),*) => {$(
        impl Kind for $t {
            fn wrap(x: XData<$t>) -> AnyData { AnyData::$variant(x) }
        }
    )*};
}
kinds!(f32 => F32, f64 => F64, Complex32 => C32, Complex64 => C64);

/// Which of the four element types.
///
/// ```
/// assert_eq!(cliper::chain::ElementKind::C64.name(), "c64");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElementKind {
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// `Complex32`.
    C32,
    /// `Complex64`.
    C64,
}

impl ElementKind {
    /// `f32`, `f64`, `c32` or `c64`.
    pub fn name(self) -> &'static str {
        match self {
            ElementKind::F32 => "f32",
            ElementKind::F64 => "f64",
            ElementKind::C32 => "c32",
            ElementKind::C64 => "c64",
        }
    }
    fn of(complex: bool, double: bool) -> ElementKind {
        match (complex, double) {
            (false, false) => ElementKind::F32,
            (false, true) => ElementKind::F64,
            (true, false) => ElementKind::C32,
            (true, true) => ElementKind::C64,
        }
    }
}

/// The precision the device computes in (`auto`, `single` or `double` in pipeline files and on the command line).
///
/// ```
/// use cliper::{Dtype, chain::Precision};
/// assert!(Precision::Auto.double(&[Dtype::U8, Dtype::I32]));
/// assert!(!Precision::Auto.double(&[Dtype::U16]));
/// assert_eq!("double".parse::<Precision>()?, Precision::Double);
/// # Ok::<(), cliper::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// Double when any input needs it to load exactly (f64, complex128, 32/64-bit integers), else single.
    #[default]
    Auto,
    /// f32 / c32 (loading fails on values f32 cannot hold exactly).
    Single,
    /// f64 / c64.
    Double,
}

impl std::str::FromStr for Precision {
    type Err = Error;
    fn from_str(text: &str) -> Result<Precision> {
        match text {
            "auto" => Ok(Precision::Auto),
            "single" => Ok(Precision::Single),
            "double" => Ok(Precision::Double),
            other => Err(Error::invalid("precision", format!("`{other}` is not auto, single or double"))),
        }
    }
}

impl Precision {
    /// The names [`Precision::from_str`](std::str::FromStr) accepts.
    pub const NAMES: [&str; 3] = ["auto", "single", "double"];

    /// Whether inputs of these file types compute in double precision.
    pub fn double(self, inputs: &[Dtype]) -> bool {
        match self {
            Precision::Single => false,
            Precision::Double => true,
            Precision::Auto => inputs
                .iter()
                .any(|d| matches!(d, Dtype::F64 | Dtype::C64 | Dtype::U32 | Dtype::I32 | Dtype::U64 | Dtype::I64)),
        }
    }
}

/// Device arrays of the four kinds, wrapped.
macro_rules! any_data_from {
    ($($t:ty => $v:ident),*) => {$(
        impl From<XData<$t>> for AnyData {
            fn from(x: XData<$t>) -> AnyData {
                AnyData::$v(x)
            }
        }
    )*};
}
any_data_from!(f32 => F32, f64 => F64, Complex32 => C32, Complex64 => C64);

impl AnyData {
    /// The array's shape.
    pub fn shape(&self) -> &[usize] {
        dispatch!(self, x => x.shape())
    }

    /// The element type.
    pub fn kind(&self) -> ElementKind {
        match self {
            AnyData::F32(_) => ElementKind::F32,
            AnyData::F64(_) => ElementKind::F64,
            AnyData::C32(_) => ElementKind::C32,
            AnyData::C64(_) => ElementKind::C64,
        }
    }

    /// The elements on the host, in the file type of the array's type.
    pub fn to_host(&self) -> Result<HostArray> {
        dispatch!(self, x => Ok(HostArray::from_elements(x.to_ndarray()?)))
    }

    /// The elements widened to complex f64 (for printing small results).
    pub fn values(&self) -> Result<Vec<Complex64>> {
        dispatch!(self, x => Ok(x.to_vec()?.into_iter().map(|v| v.to_c64()).collect()))
    }

    /// Uploads `host` as `kind`, without loss (or an error naming the file and the first value that would change).
    pub fn upload(app: &ClApp, host: &HostArray, kind: ElementKind, path: &Path) -> Result<AnyData> {
        Ok(match kind {
            ElementKind::F32 => AnyData::F32(XData::from_ndarray(app, &host.to_elements::<f32>(path)?)?),
            ElementKind::F64 => AnyData::F64(XData::from_ndarray(app, &host.to_elements::<f64>(path)?)?),
            ElementKind::C32 => AnyData::C32(XData::from_ndarray(app, &host.to_elements::<Complex32>(path)?)?),
            ElementKind::C64 => AnyData::C64(XData::from_ndarray(app, &host.to_elements::<Complex64>(path)?)?),
        })
    }

    /// Overwrites the elements with `host` (same shape and kind), converted without loss: the batch path
    /// that keeps a chain's arrays and processes for the next file.
    pub fn overwrite(&self, host: &HostArray, path: &Path) -> Result<()> {
        dispatch!(self, x => {
            let values = host.to_elements(path)?;
            x.write(values.as_standard_layout().as_slice().unwrap_or_default())
        })
    }

    /// Saves to `path` by extension, converting as `options` says.
    pub fn save(&self, path: &Path, options: &OutputOptions) -> Result<()> {
        let scale = options.scale.unwrap_or_default();
        if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("png")) {
            let depth = match options.dtype {
                None | Some(Dtype::U16) => PngDepth::Sixteen,
                Some(Dtype::U8) => PngDepth::Eight,
                Some(other) => {
                    return Err(Error::invalid(
                        "saving a PNG",
                        format!("PNG holds u8 or u16 samples, not {}", other.name()),
                    ));
                }
            };
            let png = PngOptions { depth, scale, clip: options.clip };
            return dispatch!(self, x => x.save_png(path, png)).map_err(|e| with_hint(e, PNG_HINT));
        }
        if options.dtype.is_none() && options.scale.is_none() {
            return dispatch!(self, x => x.save(path));
        }
        let host = self.to_host()?;
        let dtype = options.dtype.unwrap_or(host.dtype());
        write_file(path, &host.cast(dtype, scale, options.clip).map_err(|e| with_hint(e, CAST_HINT))?)
    }
}

const PNG_HINT: &str = "pass --scale minmax to stretch the values onto the PNG's range, or --clip";
const CAST_HINT: &str = "pass --scale minmax or --clip";

/// Adds a command-line hint to the library's wording about options.
fn with_hint(e: Error, hint: &str) -> Error {
    match e {
        Error::Format { path, reason } if reason.contains("clip") || reason.contains("real samples") => {
            Error::Format { path, reason: format!("{reason} ({hint})") }
        }
        Error::InvalidArgument { op, reason } if reason.contains("clip") => {
            Error::InvalidArgument { op, reason: format!("{reason} ({hint})") }
        }
        other => other,
    }
}

/// How results are written: the file's element type, scaling and clipping (`--type`, `--scale`, `--clip`).
///
/// ```
/// let o = cliper::chain::OutputOptions::default();
/// assert_eq!((o.dtype, o.scale, o.clip), (None, None, false)); // the data's own type, values as they are
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OutputOptions {
    /// Element type to write (default: the data's own).
    pub dtype: Option<Dtype>,
    /// How values map onto the type (default [`Scale::Raw`]).
    pub scale: Option<Scale>,
    /// Clamp out-of-range values instead of refusing them.
    pub clip: bool,
}

/// A file argument: `PATH`, or `PATH.mat:VARIABLE` for one variable of a MAT file.
///
/// ```
/// use cliper::chain::FileSpec;
/// let spec = FileSpec::parse("data/matrices.mat:A");
/// assert_eq!((spec.path.to_str(), spec.variable.as_deref()), (Some("data/matrices.mat"), Some("A")));
/// assert_eq!(FileSpec::parse("C:/x.npy").variable, None);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileSpec {
    /// The file.
    pub path: PathBuf,
    /// The MAT variable, when one was named.
    pub variable: Option<String>,
}

impl FileSpec {
    /// Splits `PATH.mat:VARIABLE`; anything else is a path.
    pub fn parse(text: &str) -> FileSpec {
        if let Some((path, variable)) = text.rsplit_once(':')
            && path.to_ascii_lowercase().ends_with(".mat")
            && !variable.is_empty()
        {
            return FileSpec { path: PathBuf::from(path), variable: Some(variable.to_string()) };
        }
        FileSpec { path: PathBuf::from(text), variable: None }
    }

    /// The same variable of another file (batch runs).
    pub fn with_path(&self, path: PathBuf) -> FileSpec {
        FileSpec { path, variable: self.variable.clone() }
    }

    /// The file's array in its own type.
    pub fn read(&self) -> Result<HostArray> {
        match &self.variable {
            Some(name) => read_mat_variable(&self.path, name),
            None => read_file(&self.path),
        }
    }
}

impl std::fmt::Display for FileSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.variable {
            Some(v) => write!(f, "{}:{v}", self.path.display()),
            None => write!(f, "{}", self.path.display()),
        }
    }
}

/// The kind a file's data computes in: complex files stay complex, the precision as chosen for the run.
pub fn kind_for(host: &HostArray, double: bool) -> ElementKind {
    ElementKind::of(matches!(host.dtype(), Dtype::C32 | Dtype::C64), double)
}
