//! The operations a user calls by name — as a `cliper` subcommand, as a pipeline step (`op = "NAME"`), and soon
//! from Python — each defined once: a struct of typed parameters whose fields, defaults and documentation both clap
//! (`--flags`) and serde (step keys) read, and an [`Operation`] impl stating the rules a chain needs: how it plans on
//! its operands, how far it reaches along a cut axis, what it does to colour images, to millimetres and geometry, and
//! the type of its result. Shortcuts that are another operation with some parameters fixed (`median` is a
//! `rank-filter`, `gaussian-filter` a `convolve`) are [`Named`] definitions that lower to it.
//!
//! [`DEFINITIONS`] lists them all, in the order the help shows them; adding an operation is its family file here
//! (with its process in `src/process/<family>/` and its kernels in `kernels/<family>.cl`) and one line in
//! [`operations!`]'s list below. docs/writing-an-operation.md walks through it.

mod elementwise;
mod feature;
mod fft;
mod filter;
mod fourier;
mod layout;
mod linalg;
mod measure;
mod morphology;
mod mri;
mod nufft;
mod operation;
mod params;
mod rank;
mod reach;
mod reduce;
mod resample;
mod segment;
mod threshold;

pub use elementwise::{AbsArgs, ClipArgs, DisplayRange, ExpressionArgs, LogArgs, SqrtArgs, ThresholdArgs, WindowArgs};
pub use feature::{BorderExclusion, PeakArgs, PeakLocalMaxArgs, PeakMaskArgs};
pub use fft::{FftArgs, FftAxesArgs, FftShiftArgs, InverseFftArgs, InverseRealFftArgs, RealFftArgs, RealFftAxesArgs};
pub use filter::{
    ConvolveArgs, DerivativeArgs, GaussianFilterArgs, GradientMagnitudeArgs, NamedFilterArgs, UniformFilterArgs,
};
pub use fourier::{FourierEllipsoidArgs, FourierGaussianArgs, FourierShiftArgs, FourierUniformArgs, SpectrumArgs};
pub use layout::{AxisCodes, Orientation, PadArgs, PermuteArgs, ReorientArgs, SliceArgs, StackArgs, TransposeArgs};
pub use linalg::{MatmulArgs, PowerArgs};
pub use measure::{MeasureArgs, RegionpropsArgs};
pub use morphology::{
    BinaryMorphologyArgs, BinaryStructureArgs, ConnectArgs, DistanceTransformArgs, DistanceTransformBfArgs,
    DistanceTransformCdtArgs, FillHolesArgs, LabelArgs, RemoveSmallHolesArgs, RemoveSmallObjectsArgs, SkeletonizeArgs,
};
pub use mri::{
    CgSenseArgs, EspiritArgs, EspiritSettings, KSpaceArgs, L1WaveletArgs, RsosArgs, SenseArgs, TvArgs, WalshMapsArgs,
};
pub use nufft::{KernelName, NufftAdjointArgs, NufftForwardArgs, NufftStepArgs};
pub use params::{BorderArgs, FootprintArgs, InterpArgs, List, NormP, NumpyBorder, ScipyBorder, Sizes, Widths, named};
pub use rank::{GenericFilterArgs, GreyMorphologyArgs, GreyStructureArgs, RankFilterArgs};
pub use reach::Reach;
pub use reduce::{DotArgs, NormArgs, ReduceArgs};
pub use resample::{
    AffineTransformArgs, MapCoordinatesArgs, ReferenceGrid, ResampleFromToArgs, RotateArgs, ShiftArgs,
    SplineFilterArgs, ZoomArgs,
};
pub use segment::{WatershedArgs, WatershedIftArgs};
pub use threshold::{MethodName, ThresholdValueArgs};

pub use operation::{InputGrid, Inputs, Named, Operation, Planned, Shortcut, default_rank};

use super::any_data::AnyData;
use crate::Result;
use crate::prelude::*;
use serde::Deserialize;

/// One entry of [`DEFINITIONS`]: what the command line, pipeline files and documentation read of a definition.
///
/// ```
/// let median = cliper::chain::Definition::find("median-filter").unwrap();
/// assert_eq!((median.name, median.lowers_to), ("median", Some("rank-filter")));
/// assert!(median.keys().contains(&"footprint".to_string()));
/// ```
#[derive(Clone, Copy)]
pub struct Definition {
    /// The name.
    pub name: &'static str,
    /// Other names.
    pub aliases: &'static [&'static str],
    /// The arrays it reads.
    pub inputs: Inputs,
    /// For a shortcut, the operation it lowers to (`median` → `rank-filter`).
    pub lowers_to: Option<&'static str>,
    /// Adds its parameters (flags, its about text and examples) to a subcommand.
    pub augment: fn(clap::Command) -> clap::Command,
    /// The step from parsed flags.
    pub from_matches: fn(&clap::ArgMatches) -> Result<Op>,
    /// The step from a pipeline step's keys (without `op`, `in`, `out`).
    pub from_table: fn(toml::Table) -> std::result::Result<Op, String>,
}

impl Definition {
    /// The definition of an operation.
    const fn operation<T: Named + Into<Op>>() -> Definition {
        Definition {
            name: T::NAME,
            aliases: T::ALIASES,
            inputs: T::INPUTS,
            lowers_to: None,
            augment: T::augment_args,
            from_matches: |m| from_matches::<T>(m).map(Into::into),
            from_table: |t| from_table::<T>(t).map(Into::into),
        }
    }

    /// The definition of a shortcut: what it reads is lowered to its operation.
    const fn shortcut<T: Shortcut<Target: Into<Op>>>() -> Definition {
        Definition {
            name: T::NAME,
            aliases: T::ALIASES,
            inputs: T::INPUTS,
            lowers_to: Some(<T::Target as Named>::NAME),
            augment: T::augment_args,
            from_matches: |m| lowered(from_matches::<T>(m)?).map(Into::into),
            from_table: |t| lowered(from_table::<T>(t)?).map(Into::into).map_err(|e| e.to_string()),
        }
    }

    /// The definition named `name` (or one of its aliases).
    ///
    /// ```
    /// use cliper::chain::Definition;
    /// assert_eq!(Definition::find("distance").map(|d| d.name), Some("distance-transform"));
    /// assert!(Definition::find("blur").is_none());
    /// ```
    pub fn find(name: &str) -> Option<&'static Definition> {
        DEFINITIONS.iter().find(|d| d.name == name || d.aliases.contains(&name))
    }

    /// The keys a pipeline step of this definition may have: its parameters' names (clap's argument ids are the
    /// field names, which serde reads too).
    pub fn keys(&self) -> Vec<String> {
        parameter_keys(self.augment)
    }
}

/// The argument ids `augment` adds: the field names of a definition's parameters.
fn parameter_keys(augment: fn(clap::Command) -> clap::Command) -> Vec<String> {
    augment(clap::Command::new("keys")).get_arguments().map(|a| a.get_id().to_string()).collect()
}

/// A shortcut's operation, its parameters checked.
fn lowered<T: Shortcut>(shortcut: T) -> Result<T::Target> {
    let target = shortcut.lower()?;
    target.check()?;
    Ok(target)
}

fn from_matches<T: Named>(matches: &clap::ArgMatches) -> Result<T> {
    let args = T::from_arg_matches(matches).map_err(|e| Error::invalid(T::NAME, e.to_string().trim().to_string()))?;
    args.check()?;
    Ok(args)
}

fn from_table<T: Named>(table: toml::Table) -> std::result::Result<T, String> {
    let keys = parameter_keys(T::augment_args);
    if let Some(unknown) = table.keys().find(|k| !keys.contains(k)) {
        let expected: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
        return Err(format!("unknown field `{unknown}` of `{}`, expected one of {}", T::NAME, expected.join(", ")));
    }
    let args = T::deserialize(toml::Value::Table(table)).map_err(|e| e.to_string().trim().to_string())?;
    args.check().map_err(|e| e.to_string())?;
    Ok(args)
}

/// Defines [`Op`] (one variant per operation, holding its parameters), its delegation to each operation's rules,
/// and [`DEFINITIONS`] (the operations, then the shortcuts spelled through them).
macro_rules! operations {
    (operations { $($variant:ident($args:ty),)* } shortcuts { $($shortcut:ty,)* }) => {
        /// One operation and its parameters, as a pipeline step spells it (`op = "convolve"`, …) and as the
        /// subcommands build it from their flags ([`DEFINITIONS`]).
        ///
        /// ```
        /// use cliper::chain::Op;
        /// let op: Op = toml::from_str("op = \"convolve\"\nkernel = \"gaussian:2\"")?;
        /// assert_eq!((op.name(), op.arity()), ("convolve", 1));
        /// # Ok::<(), Box<dyn std::error::Error>>(())
        /// ```
        #[derive(Clone, Debug, PartialEq)]
        pub enum Op {
            $(
                #[doc = concat!("`", stringify!($args), "`: the operation of that name.")]
                $variant($args),
            )*
        }

        $(impl From<$args> for Op {
            fn from(args: $args) -> Op {
                Op::$variant(args)
            }
        })*

        /// Every definition a user calls by name: the operations, then the shortcuts spelled through them.
        pub static DEFINITIONS: &[Definition] =
            &[$(Definition::operation::<$args>(),)* $(Definition::shortcut::<$shortcut>(),)*];

        impl Op {
            /// The name used in messages and in the pipeline file.
            pub fn name(&self) -> &'static str {
                match self { $(Op::$variant(_) => <$args as Named>::NAME,)* }
            }
            /// How many input arrays the operation takes; 0 for any number from one.
            pub fn arity(&self) -> usize {
                match self { $(Op::$variant(op) => op.arity(),)* }
            }
            /// Whether the operation takes `count` input arrays (its arity; any number from one for arity 0; one
            /// fewer when its last input is optional).
            pub fn takes(&self, count: usize) -> bool {
                match self { $(Op::$variant(op) => op.takes(count),)* }
            }
            /// The column names when the result is a table (`measure`), for inputs of `ndim` axes.
            pub fn columns(&self, ndim: usize) -> Option<Vec<String>> {
                match self { $(Op::$variant(op) => op.columns(ndim),)* }
            }
            /// Whether the result's shape depends on the data's values (a batch plans the step for every file).
            pub fn sized_by_data(&self) -> bool {
                match self { $(Op::$variant(op) => op.sized_by_data(),)* }
            }
            /// The process computing this operation from `inputs` into a newly allocated output.
            pub fn plan(&self, inputs: &[&AnyData]) -> Result<Planned> {
                if !self.takes(inputs.len()) {
                    return Err(Error::invalid(
                        self.name(),
                        format!("takes {} input(s), got {}", self.arity(), inputs.len()),
                    ));
                }
                match self { $(Op::$variant(op) => op.plan(inputs),)* }
            }
            /// How far this operation looks along `axis` of data of `shape` when it runs on tiles cut along that
            /// axis, or an error naming the operation and why it cannot (it needs the whole image: labels,
            /// distances, resampling, transforms and products; a wrap border, which reads the opposite edge; a sum
            /// over everything). Sigmas in millimetres must have been turned into voxels first ([`Op::in_voxels`]).
            pub fn reach(&self, shape: &[usize], axis: usize) -> Result<Reach> {
                match self { $(Op::$variant(op) => op.reach(shape, axis),)* }
            }
            fn unset_rank(&mut self) -> Option<&mut Option<usize>> {
                match self { $(Op::$variant(op) => op.unset_rank(),)* }
            }
            /// The operation as it applies to a colour image of `shape` (channels on axis −3, cliper's
            /// convention): a pad of one width pads the two image axes only; a pad that would widen the channels,
            /// or a filter spanning more than the two image axes, is refused naming the shape.
            ///
            /// ```
            /// use cliper::chain::{Op, PadArgs, Widths};
            /// let pad = Op::Pad(PadArgs { width: Widths(vec![(4, 4)]), mode: "edge".parse()?, value: 0.0 });
            /// let Op::Pad(PadArgs { width, .. }) = pad.for_colour(&[3, 64, 80])? else { unreachable!() };
            /// assert_eq!(width.0, vec![(0, 0), (4, 4), (4, 4)]);
            /// # Ok::<(), cliper::Error>(())
            /// ```
            pub fn for_colour(&self, shape: &[usize]) -> Result<Op> {
                match self { $(Op::$variant(op) => op.for_colour(shape).map(Op::$variant),)* }
            }
            /// The operation with sigmas given in millimetres (`gaussian:1.5mm`, `log:1mm,1mm,3mm`) turned into
            /// sigmas in voxels of each axis the filter spans — the millimetres divided by that axis's spacing in
            /// `geometry` — so that a filter on anisotropic voxels smooths equally far in every direction; a zoom to
            /// a voxel size becomes factors, and a distance transform's default sampling the voxel size. Other
            /// operations are returned as they are; millimetres without a geometry are refused (plain arrays have
            /// no voxel size).
            ///
            /// ```
            /// use cliper::Geometry;
            /// use cliper::chain::{ConvolveArgs, Op};
            /// let op: Op = toml::from_str("op = \"convolve\"\nkernel = \"gaussian:1.5mm\"\nrank = 3")?;
            /// let scan = Geometry::from_spacing([3.0, 0.5, 0.75]);
            /// let Op::Convolve(ConvolveArgs { kernel, .. }) = op.in_voxels(Some(&scan), &[20, 64, 64], false)? else { unreachable!() };
            /// assert_eq!(kernel, "gaussian:0.5,3,2");
            /// assert!(op.in_voxels(None, &[20, 64, 64], false).unwrap_err().to_string().contains("spacing"));
            /// # Ok::<(), Box<dyn std::error::Error>>(())
            /// ```
            pub fn in_voxels(&self, geometry: Option<&Geometry>, shape: &[usize], colour: bool) -> Result<Op> {
                match self { $(Op::$variant(op) => op.in_voxels(geometry, shape, colour).map(Op::$variant),)* }
            }
            /// The operation given every input's shape and geometry, in order: `resample-from-to` composes the map
            /// from its reference's voxel grid into its input's; other operations are returned as they are.
            ///
            /// ```
            /// use cliper::Geometry;
            /// use cliper::chain::{Op, ResampleFromToArgs};
            /// let op: Op = toml::from_str("op = 'resample-from-to'\norder = 1")?;
            /// let (scan, atlas) = (Geometry::from_spacing([3.0, 0.5, 0.5]), Geometry::from_spacing([1.0; 3]));
            /// let Op::ResampleFromTo(ResampleFromToArgs { grid, .. }) = op.on_grids(&[(&[40, 512, 512], Some(&scan)), (&[180, 218, 182], Some(&atlas))])? else { unreachable!() };
            /// assert_eq!(grid.map(|g| g.shape), Some([180, 218, 182]));
            /// assert!(op.on_grids(&[(&[40, 512, 512], Some(&scan)), (&[180, 218, 182], None)]).is_err());
            /// # Ok::<(), Box<dyn std::error::Error>>(())
            /// ```
            pub fn on_grids(&self, inputs: &[InputGrid<'_>]) -> Result<Op> {
                match self { $(Op::$variant(op) => op.on_grids(inputs).map(Op::$variant),)* }
            }
            /// How many of the leading inputs the result's values come from (the others lend it only their voxel
            /// grid: `resample-from-to`'s reference); `usize::MAX` for all.
            pub fn value_inputs(&self) -> usize {
                match self { $(Op::$variant(op) => op.value_inputs(),)* }
            }
            /// The operation for a (first) input whose file held values of type `dtype`: `threshold-value` bins an
            /// integer image one bin per integer, as scikit-image does; other operations are returned as they are.
            pub fn for_file_type(&self, dtype: Option<Dtype>) -> Op {
                match self { $(Op::$variant(op) => Op::$variant(op.for_file_type(dtype)),)* }
            }
            /// Where the voxels of this operation's result lie, given the `geometry` of its (first) input of shape
            /// `input` and the result's shape `output` (docs/formats.md, "Geometry"): operations that keep the
            /// voxel grid keep it; `transpose` and `permute` reorder the spatial axes (a permutation that moves a
            /// spatial axis onto a non-spatial one loses it); `pad` moves the origin back by the widths before; a
            /// `valid` or `full` convolution moves it by the filter's centre; a norm or dot product along an axis
            /// that is not spatial (the time axis of a 4-D series, which takes the time step with it) keeps it;
            /// other reductions, matrix products and powers have none.
            ///
            /// ```
            /// use cliper::Geometry;
            /// use cliper::chain::{NormArgs, NormP, Op, PadArgs, PowerArgs, TransposeArgs, Widths};
            /// let scan = Geometry::from_spacing([3.0, 0.5, 0.5]);
            /// let pad = Op::Pad(PadArgs { width: Widths(vec![(0, 0), (4, 4), (2, 2)]), mode: "edge".parse()?, value: 0.0 });
            /// let padded = pad.geometry(&scan, &[10, 64, 64], &[10, 72, 68], false).unwrap();
            /// assert_eq!(padded.origin, [-1.0, -2.0, 0.0]); // 2 columns (x) and 4 rows (y) of 0.5 mm before
            /// let t = Op::Transpose(TransposeArgs { conj: false }).geometry(&scan, &[10, 64, 32], &[10, 32, 64], false).unwrap();
            /// assert_eq!(t.direction[2], [0.0, 1.0, 0.0]); // columns now run along y
            /// let power = Op::Power(PowerArgs { n: 2, gemm_precision: Default::default() });
            /// assert!(power.geometry(&scan, &[64, 64], &[64, 64], false).is_none());
            /// let series = Geometry { time_step: Some(2.0), ..scan };
            /// let mean = Op::Norm(NormArgs { p: NormP(1.0), axis: Some(0) }).geometry(&series, &[20, 10, 64, 64], &[10, 64, 64], false);
            /// assert_eq!(mean, Some(scan)); // summed over time: the volume's geometry, no time step
            /// let rows = Op::Norm(NormArgs { p: NormP(1.0), axis: Some(-1) });
            /// assert!(rows.geometry(&series, &[20, 10, 64, 64], &[20, 10, 64], false).is_none());
            /// # Ok::<(), cliper::Error>(())
            /// ```
            pub fn geometry(&self, geometry: &Geometry, input: &[usize], output: &[usize], colour: bool) -> Option<Geometry> {
                match self { $(Op::$variant(op) => op.geometry(geometry, input, output, colour),)* }
            }
            /// The element type scipy.ndimage gives this operation's result where it is not the data's own:
            /// `label`'s int32 labels; the 0/1 masks of binary morphology, `fill-holes` and a threshold to two
            /// values a byte holds as uint8 (scipy's bool, which files hold as bytes). Outputs are written in it
            /// unless `--type` says otherwise ([`save_converted`](super::save_converted)); `transpose`, `permute`
            /// and `pad` keep it.
            ///
            /// ```
            /// use cliper::{Dtype, chain::Op};
            /// let threshold: Op = toml::from_str("op = 'threshold'\nvalue = 300")?;
            /// assert_eq!(threshold.result_dtype(), Some(Dtype::U8));
            /// let scaled: Op = toml::from_str("op = 'threshold'\nvalue = 300\nabove = 0.5")?;
            /// assert_eq!(scaled.result_dtype(), None); // 0.5 is no byte: the values stay as computed
            /// let label: Op = toml::from_str("op = 'label'")?;
            /// assert_eq!(label.result_dtype(), Some(Dtype::I32));
            /// # Ok::<(), Box<dyn std::error::Error>>(())
            /// ```
            pub fn result_dtype(&self) -> Option<Dtype> {
                match self { $(Op::$variant(op) => op.result_dtype(),)* }
            }
            /// Whether the result holds its input's values rearranged (so it keeps their [`Op::result_dtype`]).
            pub fn keeps_values(&self) -> bool {
                match self { $(Op::$variant(op) => op.keeps_values(),)* }
            }
            fn planes_stay(&self) -> bool {
                match self { $(Op::$variant(op) => op.planes_stay(),)* }
            }
            /// The expression of an element-wise operation (`None` for the others), or the error parsing it.
            ///
            /// ```
            /// use cliper::chain::{ExpressionArgs, Op, WindowArgs};
            /// let op = Op::Window(WindowArgs { level: 40.0, width: 400.0, range: "0:255".parse()? });
            /// assert_eq!(op.expr().unwrap()?.to_string(), "((minimum(maximum(((in0 - -160) / 400), 0), 1) * 255) + 0)");
            /// let e = Op::Expression(ExpressionArgs { expr: "hypot(a, b)".into() }).expr().unwrap()?;
            /// assert_eq!(e.inputs(), 2);
            /// # Ok::<(), cliper::Error>(())
            /// ```
            pub fn expr(&self) -> Option<Result<Expr>> {
                match self { $(Op::$variant(op) => op.expr(),)* }
            }
            /// The files the step reads besides its inputs (filter, footprint and structure files), with what each
            /// is.
            pub fn files(&self) -> Vec<(&'static str, &str)> {
                match self { $(Op::$variant(op) => op.files(),)* }
            }
            /// Whether the result can overshoot its input's range (interpolation), so that written back to an
            /// integer input's type it is rounded and clamped as scipy.ndimage does.
            pub fn overshoots(&self) -> bool {
                match self { $(Op::$variant(op) => op.overshoots(),)* }
            }
            /// The type and scaling the command line writes the result in when the user names none.
            pub fn default_output(&self) -> Option<(Dtype, Scale)> {
                match self { $(Op::$variant(op) => op.default_output(),)* }
            }
        }
    };
}

operations! {
    operations {
        Expression(ExpressionArgs),
        Window(WindowArgs),
        Threshold(ThresholdArgs),
        ThresholdValue(ThresholdValueArgs),
        Clip(ClipArgs),
        Convolve(ConvolveArgs),
        GradientMagnitude(GradientMagnitudeArgs),
        RankFilter(RankFilterArgs),
        GreyMorphology(GreyMorphologyArgs),
        GenericFilter(GenericFilterArgs),
        BinaryMorphology(BinaryMorphologyArgs),
        Label(LabelArgs),
        FillHoles(FillHolesArgs),
        RemoveSmallObjects(RemoveSmallObjectsArgs),
        RemoveSmallHoles(RemoveSmallHolesArgs),
        Skeletonize(SkeletonizeArgs),
        DistanceTransform(DistanceTransformArgs),
        Watershed(WatershedArgs),
        WatershedIft(WatershedIftArgs),
        DistanceTransformCdt(DistanceTransformCdtArgs),
        DistanceTransformBf(DistanceTransformBfArgs),
        Zoom(ZoomArgs),
        Shift(ShiftArgs),
        Rotate(RotateArgs),
        AffineTransform(AffineTransformArgs),
        MapCoordinates(MapCoordinatesArgs),
        ResampleFromTo(ResampleFromToArgs),
        SplineFilter(SplineFilterArgs),
        Transpose(TransposeArgs),
        Permute(PermuteArgs),
        Slice(SliceArgs),
        Stack(StackArgs),
        Reorient(ReorientArgs),
        Pad(PadArgs),
        Matmul(MatmulArgs),
        Power(PowerArgs),
        Norm(NormArgs),
        Dot(DotArgs),
        Reduce(ReduceArgs),
        Measure(MeasureArgs),
        Regionprops(RegionpropsArgs),
        PeakLocalMax(PeakLocalMaxArgs),
        PeakMask(PeakMaskArgs),
        Fft(FftArgs),
        RealFft(RealFftArgs),
        FftShift(FftShiftArgs),
        FourierGaussian(FourierGaussianArgs),
        FourierUniform(FourierUniformArgs),
        FourierEllipsoid(FourierEllipsoidArgs),
        FourierShift(FourierShiftArgs),
        Rsos(RsosArgs),
        Sense(SenseArgs),
        CgSense(CgSenseArgs),
        L1Wavelet(L1WaveletArgs),
        Tv(TvArgs),
        Espirit(EspiritArgs),
        WalshMaps(WalshMapsArgs),
        NufftForward(NufftForwardArgs),
        NufftAdjoint(NufftAdjointArgs),
    }
    shortcuts {
        AbsArgs,
        SqrtArgs,
        LogArgs,
        GaussianFilterArgs,
        UniformFilterArgs,
        DerivativeArgs,
        rank::MedianArgs,
        rank::MinimumArgs,
        rank::MaximumArgs,
        rank::PercentileArgs,
        rank::GreyErosionArgs,
        rank::GreyDilationArgs,
        rank::GreyOpeningArgs,
        rank::GreyClosingArgs,
        rank::MorphologicalGradientArgs,
        rank::MorphologicalLaplaceArgs,
        rank::WhiteTophatArgs,
        rank::BlackTophatArgs,
        morphology::BinaryErosionArgs,
        morphology::BinaryDilationArgs,
        morphology::BinaryOpeningArgs,
        morphology::BinaryClosingArgs,
        InverseFftArgs,
        InverseRealFftArgs,
    }
}

impl<'de> Deserialize<'de> for Op {
    /// A step's table: `op` names the definition ([`Definition::find`]), the other keys are its parameters.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Op, D::Error> {
        use serde::de::Error as _;
        let mut table = toml::Table::deserialize(d)?;
        let name = match table.remove("op") {
            Some(toml::Value::String(name)) => name,
            Some(_) => return Err(D::Error::custom("`op` must be an operation's name")),
            None => return Err(D::Error::custom("missing field `op` (the operation's name)")),
        };
        let Some(definition) = Definition::find(&name) else {
            let names: Vec<&str> = DEFINITIONS.iter().map(|d| d.name).collect();
            return Err(D::Error::custom(format!(
                "unknown operation `{name}`; the operations are {}",
                names.join(", ")
            )));
        };
        (definition.from_table)(table).map_err(D::Error::custom)
    }
}

impl Op {
    /// The operation as it applies to an input of `shape` (its first input's): the colour rule
    /// ([`Op::for_colour`]) when `colour`, the axes it spans when the step does not say ([`Op::with_default_rank`]),
    /// and millimetres in voxels of `geometry` ([`Op::in_voxels`]). What a chain plans, file by file and tile by
    /// tile.
    ///
    /// ```
    /// use cliper::Geometry;
    /// use cliper::chain::{ConvolveArgs, Op};
    /// let op: Op = toml::from_str("op = \"convolve\"\nkernel = \"gaussian:1.5mm\"")?;
    /// let scan = Geometry::from_spacing([3.0, 0.5, 0.75]);
    /// let Op::Convolve(ConvolveArgs { kernel, rank, .. }) = op.resolved(&[20, 64, 64], false, Some(&scan))? else { unreachable!() };
    /// assert_eq!((kernel.as_str(), rank), ("gaussian:0.5,3,2", Some(3))); // every axis, as scipy
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn resolved(&self, shape: &[usize], colour: bool, geometry: Option<&Geometry>) -> Result<Op> {
        let op = if colour { self.for_colour(shape)? } else { self.clone() };
        op.with_default_rank(shape, colour, geometry.is_some())?.in_voxels(geometry, shape, colour)
    }

    /// Runs the operation once on device arrays (no colour, no geometry: a plain array, as scipy sees one) and
    /// returns its result, still on the device: what the Python package calls for each function. The work is
    /// enqueued, not waited for; reading the result waits.
    ///
    /// ```
    /// use cliper::chain::{AnyData, Definition, ElementKind};
    /// let app = cliper::ClApp::new()?;
    /// let host = cliper::HostArray::F64(ndarray::ArrayD::from_elem(ndarray::IxDyn(&[5, 7]), 2.0));
    /// let x = AnyData::upload(&app, &host, ElementKind::F64, std::path::Path::new("memory"))?;
    /// let median = (Definition::find("median").unwrap().from_table)(toml::from_str("size = 3")?)?;
    /// let y = median.apply(&[&x])?;
    /// assert_eq!(y.values()?[0].re, 2.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn apply(&self, inputs: &[&AnyData]) -> Result<AnyData> {
        let shape = inputs.first().map(|x| x.shape().to_vec()).unwrap_or_default();
        let op = self.resolved(&shape, false, None)?;
        let (mut process, output) = op.plan(inputs)?;
        process.run()?;
        Ok(output)
    }

    /// The operation with its `rank` — how many trailing axes it spans — filled in where the step leaves it out
    /// and no footprint, structure or filter file sets it: scipy.ndimage's default, every axis, as
    /// [`default_rank`] counts them for an input of `shape` (a colour image's two image axes; the three spatial
    /// axes of a volume with a `geometry` and more axes).
    ///
    /// ```
    /// use cliper::chain::{LabelArgs, Op};
    /// let label: Op = toml::from_str("op = \"label\"")?;
    /// let Op::Label(LabelArgs { connect }) = label.with_default_rank(&[40, 64, 64], false, false)? else { unreachable!() };
    /// assert_eq!(connect.rank, Some(3));
    /// let Op::Label(LabelArgs { connect }) = label.with_default_rank(&[3, 64, 64], true, false)? else { unreachable!() };
    /// assert_eq!(connect.rank, Some(2)); // per channel
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_default_rank(&self, shape: &[usize], colour: bool, geometry: bool) -> Result<Op> {
        let mut op = self.clone();
        let name = self.name();
        if let Some(rank @ None) = op.unset_rank() {
            *rank = Some(default_rank(name, shape, colour, geometry)?);
        }
        Ok(op)
    }

    /// Whether the result of this operation on a colour image of shape `input` is still a colour image (of
    /// shape `output`): its channels stay on axis −3, with the same count. Reductions never are.
    pub fn keeps_colour(&self, input: &[usize], output: &[usize]) -> bool {
        let (ni, no) = (input.len(), output.len());
        let same_channels = ni >= 3 && no >= 3 && input.get(ni - 3) == output.get(no - 3);
        same_channels && self.planes_stay()
    }
}
