//! What a definition is: its name and inputs ([`Named`]), the rules of an operation ([`Operation`]) or the
//! operation a shortcut stands for ([`Shortcut`]), and the rules several operations share (scipy's every-axis
//! default rank, colour images, the spatial axes a filter spans, real-data dispatch).

use super::reach::Reach;
use crate::Result;
use crate::chain::any_data::AnyData;
use crate::prelude::*;
use serde::de::DeserializeOwned;

/// A planned step: the process computing it and its newly allocated output.
pub type Planned = (Box<dyn Process>, AnyData);

/// What a chain knows of one input of a step before planning: its shape and its geometry, if any.
pub type InputGrid<'a> = (&'a [usize], Option<&'a Geometry>);

/// The arrays an operation reads, as the command line names them.
///
/// ```
/// let matmul = cliper::chain::Definition::find("matmul").unwrap();
/// assert_eq!(matmul.inputs.names.iter().map(|(name, _)| *name).collect::<Vec<_>>(), ["A", "B"]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inputs {
    /// Each input's name (`INPUT`, `A`, `COORDINATES`) and what it is, in order.
    pub names: &'static [(&'static str, &'static str)],
    /// Any number of inputs (an expression's a, b, c, …): `names` holds one entry that stands for them all.
    pub variadic: bool,
    /// The last input may be left out (`measure LABELS [IMAGE]`).
    pub optional: bool,
    /// The result is a value, printed when no output file is named (a reduction): the output is `-o FILE`.
    pub prints: bool,
}

impl Inputs {
    /// One input array, one output.
    pub const ONE: Inputs = Inputs {
        names: &[("INPUT", "Input file (or directory/glob for a batch run)")],
        variadic: false,
        optional: false,
        prints: false,
    };
}

/// What every definition a user calls by name has: its name and other names, its inputs, and the step it makes.
/// The parameters are the struct's fields: clap reads them as flags (`Args`), serde as a step's keys.
///
/// ```
/// use cliper::chain::{Named, PadArgs};
/// assert_eq!((PadArgs::NAME, PadArgs::INPUTS.names.len()), ("pad", 1));
/// ```
pub trait Named: clap::Args + clap::FromArgMatches + DeserializeOwned {
    /// The subcommand's and the pipeline step's name.
    const NAME: &'static str;
    /// Other names it answers to (scipy's spelling, an older name).
    const ALIASES: &'static [&'static str] = &[];
    /// The arrays it reads.
    const INPUTS: Inputs = Inputs::ONE;
    /// Refuses parameters that parse but do not go together, before any file is read.
    fn check(&self) -> Result<()> {
        Ok(())
    }
}

/// A definition that is another operation with some parameters fixed (`median` is a `rank-filter`, `abs` the
/// expression `abs(x)`): it lowers to that operation's parameters.
///
/// ```
/// use cliper::chain::{GaussianFilterArgs, Named, Shortcut};
/// assert_eq!(<<GaussianFilterArgs as Shortcut>::Target as Named>::NAME, "convolve");
/// ```
pub trait Shortcut: Named {
    /// The operation it is spelled as.
    type Target: Named;
    /// That operation's parameters.
    fn lower(self) -> Result<Self::Target>;
}

/// The rules a chain needs of an operation, beyond its parameters (an `Op` variant holds it). Every method but [`Operation::plan`] and
/// [`Operation::reach`] has the default most operations follow (an element-wise or neighbourhood operation that
/// keeps the voxel grid and the element type).
///
/// ```
/// use cliper::chain::{Operation, PadArgs, Widths};
/// let pad = PadArgs { width: Widths(vec![(2, 2)]), mode: "edge".parse()?, value: 0.0 };
/// assert!(pad.keeps_values() && pad.result_dtype().is_none());
/// assert_eq!(pad.reach(&[100, 80], 0)?.pad, (2, 2));
/// # Ok::<(), cliper::Error>(())
/// ```
pub trait Operation: Named + Clone {
    /// How many input arrays this step takes; 0 for any number from one (`stack`'s arrays).
    fn arity(&self) -> usize {
        Self::INPUTS.names.len()
    }
    /// Whether it takes `count` input arrays: its arity, any number from one for arity 0, or one fewer when the
    /// last input is optional.
    fn takes(&self, count: usize) -> bool {
        let arity = self.arity();
        count == arity || (arity == 0 && count > 0) || (Self::INPUTS.optional && count + 1 == arity)
    }
    /// The column names of a result that is a table (a row per label: `measure`), for inputs of `ndim` axes;
    /// `None` for an array result. A table is printed aligned, or saved as CSV or JSON.
    fn columns(&self, _ndim: usize) -> Option<Vec<String>> {
        None
    }
    /// Whether the result's shape depends on the data's values, not only on its shape (a row per label present):
    /// a batch then plans the step again for every file instead of reusing the chain built for the last one.
    fn sized_by_data(&self) -> bool {
        false
    }
    /// The process computing this operation from `inputs` into a newly allocated output.
    fn plan(&self, inputs: &[&AnyData]) -> Result<Planned>;
    /// How far it looks along `axis` of data of `shape` when run on tiles cut along that axis, or why it cannot
    /// run in tiles (`reach::whole`'s refusal).
    fn reach(&self, shape: &[usize], axis: usize) -> Result<Reach>;
    /// The `rank` (trailing axes spanned) to fill with scipy's default when the step leaves it out and no file
    /// (footprint, structure, filter) sets it; `None` for operations without one.
    fn unset_rank(&mut self) -> Option<&mut Option<usize>> {
        None
    }
    /// The operation as it applies to a colour image of `shape` (channels on axis −3).
    fn for_colour(&self, _shape: &[usize]) -> Result<Self> {
        Ok(self.clone())
    }
    /// The operation with lengths in millimetres turned into voxels of `geometry`.
    fn in_voxels(&self, _geometry: Option<&Geometry>, _shape: &[usize], _colour: bool) -> Result<Self> {
        Ok(self.clone())
    }
    /// The operation given every input's shape and geometry, in order ([`InputGrid`]): where an operation takes a
    /// voxel grid from an input other than the first (`resample-from-to`'s reference), it resolves it here.
    fn on_grids(&self, _inputs: &[InputGrid<'_>]) -> Result<Self> {
        Ok(self.clone())
    }
    /// How many of the leading inputs the result's values come from; the others lend it only their voxel grid, so
    /// their file type and scaling do not pass to the result. All of them by default.
    fn value_inputs(&self) -> usize {
        usize::MAX
    }
    /// The operation for an input whose file held values of type `dtype` (`None`: not read from a file, or of
    /// mixed types): a histogram bins an integer image one bin per integer, as scikit-image does.
    fn for_file_type(&self, _dtype: Option<Dtype>) -> Self {
        self.clone()
    }
    /// Where the result's voxels lie, given the input's `geometry` (`Op::geometry`); by default the grid stays.
    fn geometry(&self, geometry: &Geometry, _input: &[usize], _output: &[usize], _colour: bool) -> Option<Geometry> {
        Some(*geometry)
    }
    /// The element type scipy gives the result where it is not the data's own (`Op::result_dtype`).
    fn result_dtype(&self) -> Option<Dtype> {
        None
    }
    /// Whether the result holds its input's values rearranged (so it keeps their result type).
    fn keeps_values(&self) -> bool {
        false
    }
    /// Whether a colour image's planes stay planes (a reduction or a permutation of them does not).
    fn planes_stay(&self) -> bool {
        true
    }
    /// The expression of an element-wise operation (which a chain fuses with its neighbours).
    fn expr(&self) -> Option<Result<Expr>> {
        None
    }
    /// The files the step reads besides its inputs (filter, footprint and structure files), with what each is.
    fn files(&self) -> Vec<(&'static str, &str)> {
        Vec::new()
    }
    /// Whether the result can overshoot the input's range (a spline rings at edges), so that written back to an
    /// integer input's type it is rounded and clamped unless told otherwise.
    fn overshoots(&self) -> bool {
        false
    }
    /// The type and scaling the command line writes the result in when the user names none (a display window's
    /// 8 bits, rounded).
    fn default_output(&self) -> Option<(Dtype, Scale)> {
        None
    }
}

/// How many trailing axes an operation on an input of `shape` spans when not told: scipy.ndimage's default,
/// every axis, up to the three the kernels handle — of a colour image (channels on axis −3) the two image axes;
/// of a volume with a geometry (NIfTI, DICOM: `geometry`) and more than three axes, the three spatial ones, the
/// axes before them (time, echoes) being a batch. A plain array of more than three axes is refused, naming its
/// shape: which axes are spatial is the user's to say (`rank`).
///
/// ```
/// use cliper::chain::default_rank;
/// assert_eq!(default_rank("label", &[160, 256, 256], false, false)?, 3);
/// assert_eq!(default_rank("label", &[3, 256, 256], true, false)?, 2);
/// assert_eq!(default_rank("label", &[10, 160, 256, 256], false, true)?, 3); // a 4-D NIfTI: volumes in time
/// assert!(default_rank("label", &[2, 10, 16, 16], false, false).unwrap_err().to_string().contains("rank"));
/// # Ok::<(), cliper::Error>(())
/// ```
pub fn default_rank(op: &str, shape: &[usize], colour: bool, geometry: bool) -> Result<usize> {
    match shape.len() {
        _ if colour => Ok(2),
        nd @ 0..=3 => Ok(nd.max(1)),
        _ if geometry => Ok(3),
        nd => Err(Error::invalid(
            op,
            format!(
                "an array of shape {shape:?} has {nd} axes and filters span at most three: give the rank (--rank 1, 2 \
                 or 3; the last axes are filtered, the ones before are a batch)"
            ),
        )),
    }
}

/// `rank` when the step gives it, else [`default_rank`] for a plain array of `shape` (a chain has resolved colour
/// images and volumes with a geometry before planning: `Op::resolved`).
pub(crate) fn spanned(op: &str, rank: Option<usize>, shape: &[usize]) -> Result<usize> {
    rank.map_or_else(|| default_rank(op, shape, false, false), Ok)
}

/// The refusal of a filter spanning more than a colour image's two image axes (it would mix the channels).
pub(super) fn refuse_colour_rank(op: &str, rank: Option<usize>, shape: &[usize]) -> Result<()> {
    match rank {
        Some(rank) if rank > 2 => {
            Err(colour_refusal(op, shape, &format!("a rank-{rank} filter would mix the colour channels")))
        }
        _ => Ok(()),
    }
}

/// `what` refused for a colour image of `shape`.
pub(super) fn colour_refusal(op: &str, shape: &[usize], what: &str) -> Error {
    Error::invalid(
        op,
        format!(
            "{what} of a colour image of shape {shape:?} (channels on axis {}); operations act per channel on the two \
             image axes",
            shape.len().saturating_sub(3)
        ),
    )
}

/// The spatial axes a transform over `rank` trailing axes covers, each with its geometry axis (slice 0, row 1,
/// column 2), or an error when it would span a non-spatial axis.
pub(super) fn spatial_span(
    op: &str,
    what: &str,
    rank: usize,
    shape: &[usize],
    colour: bool,
) -> Result<Vec<(usize, usize)>> {
    let spatial = Geometry::spatial_axes(shape.len(), colour);
    let first = 3 - spatial.len().min(3);
    let covered: Vec<(usize, usize)> = spatial
        .iter()
        .enumerate()
        .skip(spatial.len().saturating_sub(rank))
        .map(|(k, &axis)| (axis, first + k))
        .collect();
    if covered.len() != rank {
        return Err(Error::invalid(
            op,
            format!("a {what} over {rank} axes of an array of shape {shape:?} spans a non-spatial axis"),
        ));
    }
    Ok(covered)
}

/// Typed dispatch of a one-input operation on real data (scipy's neighbourhood and morphology functions), naming
/// what it needs of complex data.
pub(super) fn real_only<F32, F64>(op: &str, x: &AnyData, needs: &str, f32: F32, f64: F64) -> Result<Planned>
where
    F32: FnOnce(&XData<f32>) -> Result<Planned>,
    F64: FnOnce(&XData<f64>) -> Result<Planned>,
{
    match x {
        AnyData::F32(x) => f32(x),
        AnyData::F64(x) => f64(x),
        other => Err(Error::TypeRule { op: op.into(), rule: needs.into(), got: other.kind().name() }),
    }
}

/// Axis `axis` of an array of `shape`, counting from the last when negative (numpy's rule); an error naming the
/// shape when there is no such axis.
pub(super) fn resolve_axis(op: &str, axis: isize, shape: &[usize]) -> Result<usize> {
    let n = shape.len() as isize;
    let k = if axis < 0 { axis + n } else { axis };
    if (0..n).contains(&k) { Ok(k as usize) } else { Err(Error::axis(op, axis, shape)) }
}

/// A shortcut that is an operation with one parameter fixed (`median` is `rank-filter` with the median): a struct of
/// the operation's other parameters (`$field`, flattened), its name and other names, and how it lowers.
macro_rules! fixed_shortcut {
    (
        $(#[$doc:meta])* $name:ident, $cli:literal $(| $alias:literal)*, $example:literal,
        $field:ident: $params:ty => $target:ty, |$p:ident| $lower:expr
    ) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, serde::Deserialize, clap::Args)]
        #[command(after_help = $example)]
        pub struct $name {
            /// The operation's other parameters.
            #[command(flatten)]
            #[serde(flatten)]
            pub $field: $params,
        }

        impl $crate::chain::ops::operation::Named for $name {
            const NAME: &'static str = $cli;
            const ALIASES: &'static [&'static str] = &[$($alias),*];
        }

        impl $crate::chain::ops::operation::Shortcut for $name {
            type Target = $target;
            fn lower(self) -> $crate::Result<$target> {
                let $p = self.$field;
                Ok($lower)
            }
        }
    };
}
pub(super) use fixed_shortcut;
