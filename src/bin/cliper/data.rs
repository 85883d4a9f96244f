//! Arrays of any element type for the command line: how file arguments become device arrays and back.

use clap::{Args, ValueEnum};
use cliper::{
    ClApp, Dtype, Element, Error, HostArray, PngDepth, PngOptions, Result, Scale, XData, read_file, read_mat_variable,
    write_file,
};
use num_complex::{Complex32, Complex64};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// A device array of one of the four element types.
#[derive(Clone)]
pub enum AnyData {
    F32(XData<f32>),
    F64(XData<f64>),
    C32(XData<Complex32>),
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

/// The element types the CLI computes in, and how an array of one goes into [`AnyData`].
pub trait Kind: Element + 'static {
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
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ElementKind {
    F32,
    F64,
    C32,
    C64,
}

impl ElementKind {
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

/// The precision the device computes in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum, Deserialize)]
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

impl Precision {
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
    pub fn shape(&self) -> &[usize] {
        dispatch!(self, x => x.shape())
    }

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
        let scale = options.scale.map(Scale::from).unwrap_or_default();
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

/// The `--scale` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScaleArg {
    /// Values as they are.
    Raw,
    /// Minimum → lowest value of the type, maximum → highest.
    Minmax,
}

impl From<ScaleArg> for Scale {
    fn from(s: ScaleArg) -> Scale {
        match s {
            ScaleArg::Raw => Scale::Raw,
            ScaleArg::Minmax => Scale::MinMax,
        }
    }
}

/// How results are written.
#[derive(Args, Clone, Debug, Default)]
pub struct OutputOptions {
    /// Element type to write (u8, u16, i16, i32, f32, f64, c32, c64, …; default: the data's own).
    #[arg(long = "type", value_name = "TYPE", value_parser = parse_dtype)]
    pub dtype: Option<Dtype>,
    /// raw: values as they are (out-of-range values are an error); minmax: stretched onto the type's range.
    #[arg(long, value_enum)]
    pub scale: Option<ScaleArg>,
    /// Clamp out-of-range values instead of refusing them.
    #[arg(long)]
    pub clip: bool,
}

pub fn parse_dtype(text: &str) -> std::result::Result<Dtype, String> {
    Dtype::parse(text).map_err(|e| e.to_string())
}

/// A file argument: `PATH`, or `PATH.mat:VARIABLE` for one variable of a MAT file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileSpec {
    pub path: PathBuf,
    pub variable: Option<String>,
}

impl FileSpec {
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
