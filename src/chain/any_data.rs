//! Arrays whose element type is known only at run time (from a file): how file arguments become device arrays
//! and back.

use crate::io::write_image_holding;
use crate::{
    ClApp, Dtype, Element, Error, Geometry, HostArray, Image, Result, Scale, Scaling, XData, read_image,
    read_mat_variable, write_mat_variable,
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

    /// The device holding it.
    pub fn app(&self) -> &ClApp {
        dispatch!(self, x => x.app())
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

    /// A view of indices `rows` along `axis` (no copy), of the same kind.
    pub fn slab(&self, axis: usize, rows: std::ops::Range<usize>) -> Result<AnyData> {
        Ok(match self {
            AnyData::F32(x) => AnyData::F32(x.slice_axis(axis, rows)?),
            AnyData::F64(x) => AnyData::F64(x.slice_axis(axis, rows)?),
            AnyData::C32(x) => AnyData::C32(x.slice_axis(axis, rows)?),
            AnyData::C64(x) => AnyData::C64(x.slice_axis(axis, rows)?),
        })
    }

    /// The elements widened to complex f64 (for printing small results).
    pub fn values(&self) -> Result<Vec<Complex64>> {
        dispatch!(self, x => Ok(x.to_vec()?.into_iter().map(|v| v.to_c64()).collect()))
    }

    /// Uploads `host` as `kind`, without loss (or an error naming the file and the first value that would change).
    pub fn upload(app: &ClApp, host: &HostArray, kind: ElementKind, path: &Path) -> Result<AnyData> {
        // The file's own type goes up as it is; others are converted (and checked) first.
        fn up<T: Element>(app: &ClApp, host: &HostArray, path: &Path) -> Result<XData<T>> {
            match host.as_elements::<T>() {
                Some(a) => XData::from_ndarray(app, a),
                None => XData::from_ndarray(app, &exact_elements::<T>(host, path)?),
            }
        }
        Ok(match kind {
            ElementKind::F32 => AnyData::F32(up(app, host, path)?),
            ElementKind::F64 => AnyData::F64(up(app, host, path)?),
            ElementKind::C32 => AnyData::C32(up(app, host, path)?),
            ElementKind::C64 => AnyData::C64(up(app, host, path)?),
        })
    }

    /// [`AnyData::to_host`] into `spare` when it is an array of this kind and shape (a tile loop's buffer from
    /// the last round: no allocation, no first-touch page faults), else into a new one.
    pub fn to_host_reusing(&self, spare: Option<HostArray>) -> Result<HostArray> {
        dispatch!(self, x => {
            if let Some(mut h) = spare.filter(|h| h.shape() == x.shape())
                && let Some(buffer) = h.as_elements_mut().and_then(|a| a.as_slice_mut())
            {
                x.read_into(buffer)?;
                return Ok(h);
            }
            self.to_host()
        })
    }

    /// Overwrites the elements with `host` (same shape and kind), converted without loss: the batch path
    /// that keeps a chain's arrays and processes for the next file.
    pub fn overwrite(&self, host: &HostArray, path: &Path) -> Result<()> {
        dispatch!(self, x => {
            // The file's own type on the device: straight from the host array, no converted copy.
            if let Some(values) = host.as_elements().and_then(|a| a.as_slice()) {
                return x.write(values);
            }
            let values = exact_elements(host, path)?;
            x.write(values.as_standard_layout().as_slice().unwrap_or_default())
        })
    }

    /// Saves to `path` by extension, converting as `options` say ([`save_converted`]), with what the array
    /// inherits from its input file. Gives the element type the file holds.
    pub fn save(&self, path: &Path, origin: Origin, options: &OutputOptions) -> Result<Dtype> {
        save_converted(path, self.to_host()?, origin, options)
    }
}

/// `host` as `T`s without loss ([`HostArray::to_elements`]), real data into a real type on every core (the common
/// case of a batch: a scan's integers into f32).
fn exact_elements<T: Element>(host: &HostArray, path: &Path) -> Result<ndarray::ArrayD<T>> {
    host.check_conversion_to::<T>(path)?;
    let exact = |d| crate::io::cast_exact(host, d, false);
    let fast = Dtype::parse(T::NAME).ok().filter(|_| !T::IS_COMPLEX).and_then(exact);
    match fast.and_then(HostArray::into_elements::<T>) {
        Some(elements) => Ok(elements),
        None => host.to_elements(path),
    }
}

/// What a result inherits from the file its data came from: whether it is a colour image (channels on axis −3)
/// and the file's element type and scaling, when the result is still of that kind of data (not a norm or a dot
/// product), and its geometry.
///
/// ```
/// let origin = cliper::chain::Origin { colour: true, dtype: Some(cliper::Dtype::U8), ..Default::default() }; // an RGB PNG, filtered
/// assert_eq!(cliper::chain::Origin::default().dtype, None);
/// # let _ = origin;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Origin {
    /// Axis −3 holds colour channels.
    pub colour: bool,
    /// The input file's element type.
    pub dtype: Option<Dtype>,
    /// Where the result's voxels lie, when the input file said and the operations kept track (docs/formats.md).
    pub geometry: Option<Geometry>,
    /// The input file's rescale of its stored integers: a NIfTI output stores the integers again with it while
    /// the values are still theirs ([`Scaling::unscale`]; convert, transpose, pad), else holds the values.
    pub scaling: Option<Scaling>,
    /// The type scipy gives the operation's result where it is not the data's own ([`Op::result_dtype`]:
    /// int32 labels, uint8 masks): written in it when the file holds it and every value is exactly one of it.
    ///
    /// [`Op::result_dtype`]: super::Op::result_dtype
    pub result_dtype: Option<Dtype>,
}

/// Writes `host` to `path` by extension, the one rule for every command:
///
/// - the file's element type is `--type` when given, else the data's own where the format holds it. PNG holds
///   u8/u16 only: a result of a u8/u16 input goes back to that type (as scipy.ndimage keeps the input's
///   dtype), anything else to u16;
/// - values convert by [`HostArray::cast`] with the scale given; by default `round` when a result goes back to
///   its input's integer type (a blurred 8-bit PNG saved as 8 bits) and `raw` — exact — otherwise, so a float
///   result that is not whole (a reconstruction in [0, 1], a filtered float array) is refused, never rounded
///   silently; values outside the type's range are refused unless clipped;
/// - a grey stack cannot go to a PNG; a colour result goes as one colour image ([`write_image`](crate::write_image));
/// - without `--type`, `--scale` or `--clip`, a NIfTI output of values that are still the input's stored integers
///   under its scaling ([`Origin::scaling`]) stores those integers and that scaling, as the input did.
///
/// Errors name the path and say which option to choose. Gives the type the file holds (a NIfTI's stored type
/// when it stores the integers behind the values).
///
/// ```
/// use cliper::chain::{Origin, OutputOptions, save_converted};
/// use cliper::{Dtype, HostArray, Scale};
/// let path = std::env::temp_dir().join(format!("cliper-doc-converted-{}.png", std::process::id()));
/// let x = HostArray::F32(ndarray::arr2(&[[0.0f32, 0.25], [0.5, 1.0]]).into_dyn());
/// let err = save_converted(&path, x.clone(), Origin::default(), &OutputOptions::default()).unwrap_err().to_string();
/// assert!(err.contains("not whole") && err.contains("--scale"), "{err}");
/// let stretched = OutputOptions { scale: Some(Scale::MinMax), ..OutputOptions::default() };
/// assert_eq!(save_converted(&path, x.clone(), Origin::default(), &stretched)?, Dtype::U16);
/// let from_u8 = Origin { dtype: Some(Dtype::U8), ..Origin::default() }; // rounds back to 8 bits
/// assert_eq!(save_converted(&path, x.clone(), from_u8, &OutputOptions::default())?, Dtype::U8);
/// let npy = path.with_extension("npy"); // NPY holds f32: the values as they are
/// assert_eq!(save_converted(&npy, x, from_u8, &OutputOptions::default())?, Dtype::F32);
/// # std::fs::remove_file(&npy).ok();
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn save_converted(path: &Path, host: HostArray, origin: Origin, options: &OutputOptions) -> Result<Dtype> {
    let png = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("png"));
    let png_type = |d: Dtype| matches!(d, Dtype::U8 | Dtype::U16);
    let own = host.dtype();
    let inherited = origin.dtype.filter(|&d| png && !png_type(own) && png_type(d));
    // Labels as int32, masks as uint8 (scipy's types), unless told otherwise, when the format holds the type and
    // every value is exactly one of it; else the rules below, as for any result.
    let as_given = options.dtype.is_none() && options.scale.is_none() && !options.clip;
    let bart = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("cfl") || e.eq_ignore_ascii_case("hdr"));
    let natural = origin.result_dtype.filter(|&d| as_given && !bart && (!png || png_type(d)));
    if let Some(natural) = natural {
        let bytes = (host.shape().iter().product::<usize>() as u64).saturating_mul(natural.size() as u64);
        let what = format!("writing the {:?} {} result as {}", host.shape(), own.name(), natural.name());
        crate::HostBudget::current()?.check(path, &what, bytes)?;
    }
    if let Some(natural) = natural
        && let Some(array) = crate::io::cast_exact(&host, natural, false)
    {
        let image = Image { array, colour: origin.colour, geometry: origin.geometry, scaling: None };
        return save_image(path, &image);
    }
    let dtype = options.dtype.or(inherited).unwrap_or(if png && !png_type(own) { Dtype::U16 } else { own });
    let back_to_integers = options.dtype.is_none() && inherited.is_some();
    let scale = options.scale.unwrap_or(if back_to_integers { Scale::Round } else { Scale::Raw });
    // The values as they are, in their own type: only then may the file store them as the input's integers.
    let scaling = origin.scaling.filter(|_| options.dtype.is_none() && scale == Scale::Raw && !options.clip);
    let array = if dtype == own && scale == Scale::Raw && !options.clip {
        host
    } else {
        let what = format!("converting the {:?} {} result to {}", host.shape(), own.name(), dtype.name());
        crate::HostBudget::current()?.check(path, &what, host.cast_bytes(dtype))?;
        let exact = (!options.clip && scale != Scale::MinMax)
            .then(|| crate::io::cast_exact(&host, dtype, scale == Scale::Round))
            .flatten();
        exact.map_or_else(|| host.cast(dtype, scale, options.clip), Ok).map_err(|e| match e {
            Error::InvalidArgument { op, reason } => Error::Format {
                path: path.to_path_buf(),
                reason: format!("{op} from {}: {reason} ({CAST_HINT})", own.name()),
            },
            other => other,
        })?
    };
    save_image(path, &Image { array, colour: origin.colour, geometry: origin.geometry, scaling })
}

/// Writes `image` to `path`, or to the MAT variable `path.mat:NAME` names; gives the type the file holds (a
/// NIfTI's stored integers under a scaling).
fn save_image(path: &Path, image: &Image) -> Result<Dtype> {
    match FileSpec::parse(&path.to_string_lossy()) {
        FileSpec { path: file, variable: Some(name) } => {
            write_mat_variable(file, &name, &image.array).map(|()| image.array.dtype())
        }
        _ => write_image_holding(path, image),
    }
}

const CAST_HINT: &str = "choose with --scale round, --scale minmax, --clip or --type";

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

    /// The file's array in its own type, and whether it is a colour image.
    pub fn read(&self) -> Result<Image> {
        match &self.variable {
            Some(name) => {
                Ok(Image { array: read_mat_variable(&self.path, name)?, colour: false, geometry: None, scaling: None })
            }
            None => read_image(&self.path),
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
