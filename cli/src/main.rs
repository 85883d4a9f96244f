//! The `cliper` command line: operations on files, pipeline files, batch runs over directories, profiling.
//! docs/cli.md is the manual.
// No panics in what users run: every failure is a typed error on one line (tests may unwrap).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing))]

/// `println!` that ends the program quietly when stdout is closed (`cliper … | head`): the reader chose to
/// stop, which is no error to panic over. Exit code 141, as a shell reports a process ended by SIGPIPE.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        if writeln!(std::io::stdout(), $($arg)*).is_err() {
            std::process::exit(141);
        }
    }};
}

mod args;
mod chain;
mod demo;
mod inspect;
mod output;
mod ranks;
mod recon;

use args::OutputArgs;
use chain::{Context, one_line};
use clap::{Args, CommandFactory, Parser, Subcommand};
use cliper::chain::{Chain, NormP, Op, Precision, Sizes, Step, Widths};
use cliper::prelude::*;
use std::path::PathBuf;
use std::process::ExitCode;

/// cliper: OpenCL image processing for medical and scientific data.
///
/// Files: .npy, .png, .tif/.tiff, .mat (name a variable as FILE.mat:VAR), .cfl/.hdr (BART). An input that is
/// a directory or a glob ('scans/*.tif', quoted) runs once per file; the output is then a directory or a name
/// with {stem}.
#[derive(Parser)]
#[command(name = "cliper", version, about, long_about = None, propagate_version = true)]
struct Cli {
    /// The OpenCL device: gpu, cpu, P:D as `cliper devices` lists it, or part of its name (default:
    /// CLIPER_DEVICE, else the best device).
    #[arg(long, global = true, value_name = "SPEC")]
    device: Option<String>,
    /// Spread a batch (a directory or glob input) over several devices: all, gpu:*, or a list of P:D ids
    /// (0:0,0:1); one worker per device takes the next file when free (docs/scaling.md).
    #[arg(long, global = true, value_name = "SET")]
    devices: Option<String>,
    /// Run only this job's share of a batch, I/N: every N-th file of the sorted list from the I-th (default:
    /// a Slurm job array's SLURM_ARRAY_TASK_ID/COUNT, or a Kubernetes indexed job's JOB_COMPLETION_INDEX with
    /// CLIPER_SHARDS).
    #[arg(long, global = true, value_name = "I/N")]
    shard: Option<String>,
    /// Skip batch files whose outputs all exist (saves are atomic: an output that exists is complete).
    #[arg(long, global = true)]
    skip_existing: bool,
    /// Append one JSON line per batch file to FILE: input, status, outputs, device, seconds, error.
    #[arg(long, global = true, value_name = "FILE")]
    manifest: Option<std::path::PathBuf>,
    /// Print the per-kernel device-time table.
    #[arg(long, global = true)]
    profile: bool,
    /// Print results as JSON on stdout.
    #[arg(long, global = true)]
    json: bool,
    /// Let NRRD/MetaImage headers (.nhdr, .mhd) name data files outside their own folder (`../x.raw`, absolute
    /// paths, links leading elsewhere); refused by default (docs/formats.md).
    #[arg(long, global = true)]
    allow_data_outside: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// List OpenCL platforms and devices, and which one cliper uses and why.
    #[command(after_help = "Example: cliper devices --json")]
    Devices,
    /// The on-disk cache of compiled programs: what it holds (`info`), or empty it (`clear`).
    #[command(
        after_help = "Examples:\n  cliper cache info\n  cliper cache clear\n\nCLIPER_CACHE=off turns the cache off, CLIPER_CACHE_DIR moves it, CLIPER_CACHE_MAX_MB caps it (default 1024)."
    )]
    Cache {
        /// `info` or `clear`.
        #[arg(value_parser = ["info", "clear"])]
        action: String,
    },
    /// Shape, type, min/max/mean and NaN count of a file (every variable of a MAT file; coils and frames of k-space).
    #[command(
        after_help = "Examples:\n  cliper info data/phantom_256.png\n  cliper info data/kspace.mat\n\nNPY, plain NIfTI and grey TIFF files are read a slab at a time. CLIPER_HOST_MEMORY_LIMIT (bytes, or 512M, 8G) caps the host memory any command takes for a file's data (default: the memory available); a file past it is refused naming the sizes."
    )]
    Info {
        /// The file.
        file: String,
    },
    /// Convert a file to another format (by extension) or element type.
    #[command(
        after_help = "Examples:\n  cliper convert data/phantom_256.tif phantom.npy\n  cliper convert data/phantom_256.tif phantom8.png --type u8 --scale minmax"
    )]
    Convert {
        /// Input file (or directory/glob).
        input: String,
        /// Output file (or directory, or a name with {stem}).
        output: String,
        #[command(flatten)]
        options: OutputArgs,
    },
    /// Transpose the last two axes (batched over the others).
    #[command(after_help = "Example: cliper transpose data/phantom_256.tif out/t.tif --conj")]
    Transpose {
        #[command(flatten)]
        io: UnaryIo,
        /// Conjugate as well (Hermitian transpose) for complex data.
        #[arg(long)]
        conj: bool,
    },
    /// Reorder the axes.
    #[command(after_help = "Example: cliper permute data/phantom_64x64x64.tif out/sagittal.tif --axes 2,0,1")]
    Permute {
        #[command(flatten)]
        io: UnaryIo,
        /// The new order of the axes, comma-separated.
        #[arg(long, value_delimiter = ',', required = true)]
        axes: Vec<usize>,
    },
    /// Matrix product op(A)·op(B) over the last two axes.
    #[command(after_help = "Example: cliper matmul data/matrices.mat:A data/matrices.mat:B out/c.npy")]
    Matmul {
        /// Left operand.
        a: String,
        /// Right operand.
        b: String,
        /// Output file.
        output: String,
        /// Transpose A.
        #[arg(long)]
        ta: bool,
        /// Transpose B.
        #[arg(long)]
        tb: bool,
        /// Conjugate-transpose A (Aᴴ; the transpose for real data).
        #[arg(long, conflicts_with = "ta")]
        ha: bool,
        /// Conjugate-transpose B.
        #[arg(long, conflicts_with = "tb")]
        hb: bool,
        /// How exactly f32 products are formed: full, fp32-split or tf32 (TF32 tensor cores where the device
        /// has them).
        #[arg(long, default_value = "full")]
        gemm_precision: GemmPrecision,
        #[command(flatten)]
        common: Common,
    },
    /// The N-th power of square matrices.
    #[command(after_help = "Example: cliper power out/c.npy 8 out/c8.npy")]
    Power {
        /// Input file.
        input: String,
        /// The exponent.
        n: u64,
        /// Output file.
        output: String,
        /// How exactly f32 products are formed: full, fp32-split or tf32 (TF32 tensor cores where the device
        /// has them).
        #[arg(long, default_value = "full")]
        gemm_precision: GemmPrecision,
        #[command(flatten)]
        common: Common,
    },
    /// The p-norm of a whole array, or along one axis.
    #[command(
        after_help = "Examples:\n  cliper norm data/phantom_256.png\n  cliper norm data/phantom_256.png -p inf\n  cliper norm data/kspace.mat:kspace --axis 0 -o out/coil_norms.npy"
    )]
    Norm {
        /// Input file (or directory/glob).
        input: String,
        /// The order: a number ≥ 1 or inf.
        #[arg(short, default_value = "2")]
        p: NormP,
        #[command(flatten)]
        reduce: Reduction,
    },
    /// Dot product Σ aᵢ·bᵢ (Σ conj(aᵢ)·bᵢ with --conj), of everything or along one axis.
    #[command(after_help = "Example: cliper dot data/phantom_256.tif data/phantom_256.tif")]
    Dot {
        /// First operand.
        a: String,
        /// Second operand.
        b: String,
        /// Conjugate the first operand.
        #[arg(long)]
        conj: bool,
        #[command(flatten)]
        reduce: Reduction,
    },
    /// Pad an array (numpy.pad modes).
    #[command(after_help = "Example: cliper pad data/phantom_256.png out/padded.tif --width 16 --mode reflect")]
    Pad {
        #[command(flatten)]
        io: UnaryIo,
        /// N for every side of every axis, or BEFORE:AFTER per axis (4:4,2:6).
        #[arg(long, required = true)]
        width: Widths,
        /// numpy.pad mode: constant, edge, reflect, symmetric, wrap.
        #[arg(long, default_value = "constant")]
        mode: String,
        /// The constant for mode constant (negative values as they are: --value -1000).
        #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
        value: f64,
    },
    /// Convolve with a named filter or a filter file (scipy.ndimage semantics).
    #[command(
        after_help = "Examples:\n  cliper convolve data/phantom_256.png out/blur.tif --kernel gaussian:2\n  cliper convolve 'scans/*.png' out/ --kernel sobel-x --mode corr --border nearest --scale minmax\n\nNamed filters (scipy.ndimage's functions of the same name, over the last --rank axes): gaussian:SIGMA \
(gaussian_filter), box:SIZE (uniform_filter), log:SIGMA (gaussian_laplace), laplacian (laplace), sobel-x|y|z \
(sobel, axis -1|-2|-3), prewitt-x|y|z (prewitt)."
    )]
    Convolve {
        #[command(flatten)]
        io: UnaryIo,
        /// A named filter or a filter file (.npy, .tif, FILE.mat:VAR …).
        #[arg(long, short)]
        kernel: String,
        /// For filter files: conv (scipy.ndimage.convolve, the default) or corr (correlate). Named filters are
        /// scipy.ndimage's functions of that name and take no mode.
        #[arg(long, value_parser = args::conv_mode())]
        mode: Option<ConvMode>,
        /// scipy.ndimage border mode: reflect, mirror, nearest, wrap, constant.
        #[arg(long, default_value = "reflect")]
        border: String,
        /// The constant for border constant (negative values as they are: --value -1000).
        #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
        value: f64,
        /// Output extent: same, valid or full.
        #[arg(long = "output", id = "extent", value_name = "EXTENT", value_parser = args::conv_output(), default_value = "same")]
        output_extent: ConvOutput,
        /// Axes a named filter spans, the last ones of the data: 1 to 3 (default every axis, as scipy: a
        /// colour image's two per channel, a 4-D NIfTI's three; 2 filters a volume slice by slice).
        #[arg(long)]
        rank: Option<usize>,
    },
    /// Element-wise maths (numpy's functions): an expression over the inputs, named a, b, c, … (x is a too).
    #[command(
        visible_alias = "expr",
        after_help = "Examples:\n  cliper expression gx.npy gy.npy out/magnitude.tif --expr 'hypot(a, b)'\n  cliper expression ct.nii.gz out/mask.nii.gz --expr 'where(x > 300, 1, 0)'\n\nOperators + - * / ** (or ^), comparisons > >= < <= == != (1 or 0), parentheses, pi; functions abs sqrt exp \
log log10 sin cos tan floor ceil rint square sign real imag conj angle (one argument), minimum maximum power hypot \
arctan2 (two), clip(x, low, high), where(condition, a, b), window(x, level, width), threshold(x, t)."
    )]
    Expression {
        /// The input files, then the output file.
        #[arg(required = true, num_args = 2.., value_name = "FILES")]
        files: Vec<String>,
        /// The expression (quote it for the shell).
        #[arg(long, short)]
        expr: String,
        #[command(flatten)]
        common: Common,
    },
    /// A CT/MR display window: LEVEL ± WIDTH/2 onto a display range (0:255 by default, saved as 8 bits).
    #[command(
        after_help = "Examples:\n  cliper window data/ct_series out/ct_soft_tissue.png --level 40 --width 400\n  cliper window ct.nii.gz out/lung.nii.gz --level -600 --width 1500 --range 0:1 --type f32\n\nValues below the window give the range's low end, above it the high end. Without --type the result is \
written as u8 (rounded); give --type (and --range) for other outputs."
    )]
    Window {
        #[command(flatten)]
        io: UnaryIo,
        /// The window's centre (HU for CT).
        #[arg(long, allow_negative_numbers = true)]
        level: f64,
        /// The window's width.
        #[arg(long)]
        width: f64,
        /// LOW:HIGH, the values the window's bottom and top map to.
        #[arg(long, default_value = "0:255", allow_hyphen_values = true)]
        range: String,
    },
    /// VALUE threshold: ABOVE (1) where a value exceeds it, else BELOW (0).
    #[command(after_help = "Example: cliper threshold data/ct_series out/bone.nii.gz --value 300")]
    Threshold {
        #[command(flatten)]
        io: UnaryIo,
        /// The threshold.
        #[arg(long, allow_negative_numbers = true)]
        value: f64,
        /// The result above the threshold.
        #[arg(long, default_value_t = 1.0, allow_negative_numbers = true)]
        above: f64,
        /// The result at or below it.
        #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
        below: f64,
    },
    /// numpy.clip: values below MIN become MIN, above MAX become MAX.
    #[command(after_help = "Example: cliper clip ct.nii.gz out/clipped.nii.gz --min -1000 --max 2000")]
    Clip {
        #[command(flatten)]
        io: UnaryIo,
        /// The lower bound.
        #[arg(long, allow_negative_numbers = true)]
        min: f64,
        /// The upper bound.
        #[arg(long, allow_negative_numbers = true)]
        max: f64,
    },
    /// The gradient magnitude (scipy.ndimage.gaussian_gradient_magnitude, or the Sobel/Prewitt/Scharr magnitude).
    #[command(
        visible_alias = "gaussian-gradient-magnitude",
        after_help = "Examples:\n  cliper gradient-magnitude data/phantom_256.png out/edges.tif --derivative gaussian:2\n  cliper gradient-magnitude ct.nii.gz out/edges.nii.gz --rank 3"
    )]
    GradientMagnitude {
        #[command(flatten)]
        io: UnaryIo,
        /// sobel, prewitt, scharr or gaussian:SIGMA (voxels; one per axis as gaussian:1,1,2).
        #[arg(long, default_value = "sobel")]
        derivative: String,
        /// scipy.ndimage border mode: reflect, mirror, nearest, wrap, constant.
        #[arg(long, default_value = "reflect")]
        border: String,
        /// The constant for border constant.
        #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
        value: f64,
        /// Axes the gradient spans, the last ones: 1 to 3 (default every axis, as scipy; 2 is slice by slice).
        #[arg(long)]
        rank: Option<usize>,
    },
    /// scipy.ndimage.gaussian_filter (with derivative orders): `convolve --kernel gaussian:SIGMA[:ORDER]`.
    #[command(
        after_help = "Examples:\n  cliper gaussian-filter data/phantom_256.png out/blur.tif --sigma 2\n  cliper gaussian-filter ct.nii.gz out/dz.nii.gz --sigma 1.5mm --order 1,0,0 --rank 3"
    )]
    GaussianFilter {
        #[command(flatten)]
        io: UnaryIo,
        /// Sigma in voxels (or millimetres for inputs with geometry: 1.5mm); one, or one per axis (1,1,2).
        #[arg(long)]
        sigma: String,
        /// Derivative order: one for every axis, or one per axis (0,1 differentiates along the last).
        #[arg(long)]
        order: Option<String>,
        #[command(flatten)]
        filter: NamedFilterArgs,
    },
    /// scipy.ndimage.uniform_filter: the mean over a SIZE window (`convolve --kernel box:SIZE`).
    #[command(after_help = "Example: cliper uniform-filter data/phantom_256.png out/mean5.tif --size 5")]
    UniformFilter {
        #[command(flatten)]
        io: UnaryIo,
        /// The window's size along every axis.
        #[arg(long)]
        size: usize,
        #[command(flatten)]
        filter: NamedFilterArgs,
    },
    /// scipy.ndimage.sobel, prewitt or Scharr's weights along one axis (`convolve --kernel sobel-x` …).
    #[command(after_help = "Example: cliper derivative data/phantom_256.png out/dx.tif --filter sobel --axis -1")]
    Derivative {
        #[command(flatten)]
        io: UnaryIo,
        /// sobel, prewitt or scharr.
        #[arg(long, default_value = "sobel")]
        filter: String,
        /// The axis differentiated: -1 (x, the last), -2 (y) or -3 (z, of a volume).
        #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
        axis: isize,
        #[command(flatten)]
        named: NamedFilterArgs,
    },
    /// scipy.ndimage.median_filter.
    #[command(
        visible_alias = "median-filter",
        after_help = "Examples:\n  cliper median ct.nii.gz out/ct_median.nii.gz --size 5\n  cliper median data/phantom_256.png out/m.png --size 7 --border nearest\n  cliper median ct.nii.gz out/m3.nii.gz --size 3 --rank 3"
    )]
    Median {
        #[command(flatten)]
        io: UnaryIo,
        #[command(flatten)]
        window: WindowArgs,
    },
    /// scipy.ndimage.minimum_filter.
    #[command(
        visible_alias = "minimum-filter",
        after_help = "Example: cliper minimum data/phantom_256.png out/min.tif --size 5"
    )]
    Minimum {
        #[command(flatten)]
        io: UnaryIo,
        #[command(flatten)]
        window: WindowArgs,
    },
    /// scipy.ndimage.maximum_filter.
    #[command(
        visible_alias = "maximum-filter",
        after_help = "Example: cliper maximum data/phantom_256.png out/max.tif --size 5"
    )]
    Maximum {
        #[command(flatten)]
        io: UnaryIo,
        #[command(flatten)]
        window: WindowArgs,
    },
    /// scipy.ndimage.percentile_filter.
    #[command(
        visible_alias = "percentile-filter",
        after_help = "Example: cliper percentile data/phantom_256.png out/p90.tif --percentile 90 --size 5"
    )]
    Percentile {
        #[command(flatten)]
        io: UnaryIo,
        /// The percentile, 0 to 100 (negative counts from 100).
        #[arg(long, allow_negative_numbers = true)]
        percentile: f64,
        #[command(flatten)]
        window: WindowArgs,
    },
    /// scipy.ndimage.rank_filter: the INDEX-th smallest under the window (negative counts from the largest).
    #[command(after_help = "Example: cliper rank-filter data/phantom_256.png out/r.tif --index -2 --size 3")]
    RankFilter {
        #[command(flatten)]
        io: UnaryIo,
        /// The rank, 0-based; -1 is the largest.
        #[arg(long, allow_negative_numbers = true)]
        index: isize,
        #[command(flatten)]
        window: WindowArgs,
    },
    /// scipy.ndimage.grey_erosion with a flat structuring element (size or footprint).
    #[command(after_help = "Example: cliper grey-erosion data/phantom_256.png out/eroded.png --size 15")]
    GreyErosion {
        #[command(flatten)]
        io: UnaryIo,
        #[command(flatten)]
        grey: GreyArgs,
    },
    /// scipy.ndimage.grey_dilation with a flat structuring element.
    #[command(after_help = "Example: cliper grey-dilation data/phantom_256.png out/dilated.png --size 15")]
    GreyDilation {
        #[command(flatten)]
        io: UnaryIo,
        #[command(flatten)]
        grey: GreyArgs,
    },
    /// scipy.ndimage.grey_opening (erosion, then dilation).
    #[command(after_help = "Example: cliper grey-opening data/phantom_256.png out/opened.png --size 5")]
    GreyOpening {
        #[command(flatten)]
        io: UnaryIo,
        #[command(flatten)]
        grey: GreyArgs,
    },
    /// scipy.ndimage.grey_closing (dilation, then erosion).
    #[command(after_help = "Example: cliper grey-closing data/phantom_256.png out/closed.png --size 5")]
    GreyClosing {
        #[command(flatten)]
        io: UnaryIo,
        #[command(flatten)]
        grey: GreyArgs,
    },
    /// scipy.ndimage.morphological_gradient: dilation − erosion.
    #[command(after_help = "Example: cliper morphological-gradient data/phantom_256.png out/edges.png --size 3")]
    MorphologicalGradient {
        #[command(flatten)]
        io: UnaryIo,
        #[command(flatten)]
        grey: GreyArgs,
    },
    /// scipy.ndimage.morphological_laplace: dilation + erosion − 2·input.
    #[command(after_help = "Example: cliper morphological-laplace img.npy out/laplace.npy --size 3")]
    MorphologicalLaplace {
        #[command(flatten)]
        io: UnaryIo,
        #[command(flatten)]
        grey: GreyArgs,
    },
    /// scipy.ndimage.white_tophat: input − opening (bright details smaller than the element).
    #[command(after_help = "Example: cliper white-tophat cells.tif out/spots.tif --size 15")]
    WhiteTophat {
        #[command(flatten)]
        io: UnaryIo,
        #[command(flatten)]
        grey: GreyArgs,
    },
    /// scipy.ndimage.black_tophat: closing − input (dark details smaller than the element).
    #[command(after_help = "Example: cliper black-tophat vessels.nii.gz out/dark.nii.gz --size 5 --rank 3")]
    BlackTophat {
        #[command(flatten)]
        io: UnaryIo,
        #[command(flatten)]
        grey: GreyArgs,
    },
    /// scipy.ndimage.binary_erosion (non-zero = true; the result 0/1).
    #[command(
        after_help = "Example: cliper binary-erosion mask.nii.gz out/eroded.nii.gz --iterations 2 --connectivity 2"
    )]
    BinaryErosion {
        #[command(flatten)]
        io: UnaryIo,
        #[command(flatten)]
        binary: BinaryArgs,
    },
    /// scipy.ndimage.binary_dilation.
    #[command(after_help = "Example: cliper binary-dilation mask.nii.gz out/dilated.nii.gz --structure ball.npy")]
    BinaryDilation {
        #[command(flatten)]
        io: UnaryIo,
        #[command(flatten)]
        binary: BinaryArgs,
    },
    /// scipy.ndimage.binary_opening (erosion, then dilation).
    #[command(after_help = "Example: cliper binary-opening mask.png out/opened.png --iterations 2")]
    BinaryOpening {
        #[command(flatten)]
        io: UnaryIo,
        #[command(flatten)]
        binary: BinaryArgs,
    },
    /// scipy.ndimage.binary_closing (dilation, then erosion).
    #[command(after_help = "Example: cliper binary-closing mask.png out/closed.png")]
    BinaryClosing {
        #[command(flatten)]
        io: UnaryIo,
        #[command(flatten)]
        binary: BinaryArgs,
    },
    /// scipy.ndimage.label: connected components of the non-zero elements, numbered 1, 2, … (0: background).
    #[command(
        after_help = "Examples:\n  cliper label mask.png out/labels.tif\n  cliper label mask.nii.gz out/labels.nii.gz --rank 3 --connectivity 3\n\nLabels are numbered in raster order of each component's first element, as scipy's; the number of features is the largest label."
    )]
    Label {
        #[command(flatten)]
        io: UnaryIo,
        #[command(flatten)]
        connect: ConnectArgs,
    },
    /// scipy.ndimage.binary_fill_holes: fills the zero regions that do not reach the array's edge (the result 0/1).
    #[command(after_help = "Example: cliper fill-holes mask.nii.gz out/filled.nii.gz --rank 3")]
    FillHoles {
        #[command(flatten)]
        io: UnaryIo,
        #[command(flatten)]
        connect: ConnectArgs,
    },
    /// scipy.ndimage.distance_transform_edt: each non-zero element's distance to the nearest zero element.
    #[command(
        visible_alias = "distance-transform-edt",
        after_help = "Examples:\n  cliper distance mask.nii.gz out/distance_mm.nii.gz --rank 3      # in mm: the voxel size is the default sampling\n  cliper distance mask.png out/distance.tif --sampling 1"
    )]
    Distance {
        #[command(flatten)]
        io: UnaryIo,
        /// The spacing per axis: S or S,S,… — or voxel, the input's voxel size in mm (the default for DICOM,
        /// NIfTI, NRRD and MetaImage inputs; 1 for others).
        #[arg(long)]
        sampling: Option<String>,
        /// Axes spanned, the last ones: 1 to 3 (default every axis, as scipy; 2 is slice by slice).
        #[arg(long)]
        rank: Option<usize>,
    },
    /// scipy.ndimage.zoom: spline interpolation onto a grid --zoom times as fine per axis, or onto voxels of
    /// --spacing mm (the output's voxel size follows).
    #[command(
        after_help = "Examples:\n  cliper zoom ct.nii.gz out/ct_1mm.nii.gz --spacing 1          # isotropic 1 mm voxels\n  cliper zoom data/phantom_256.png out/phantom_512.png --zoom 2 --order 1\n  cliper zoom vol.npy out/vol.npy --zoom 1,2,2 --mode nearest"
    )]
    Zoom {
        #[command(flatten)]
        io: UnaryIo,
        /// One factor, or one per axis (F or F,F,…); a colour image's channels stay as they are.
        #[arg(long)]
        zoom: Option<String>,
        /// The voxel size wanted in mm, one or one per spatial axis (needs a DICOM, NIfTI, NRRD or MetaImage
        /// input).
        #[arg(long)]
        spacing: Option<String>,
        /// scipy's grid_mode: the outer edges of the first and last voxels coincide, not their centres.
        #[arg(long)]
        grid_mode: bool,
        #[command(flatten)]
        interp: InterpArgs,
    },
    /// scipy.ndimage.shift: move the content by --shift samples (one, or one per axis), interpolated.
    #[command(
        after_help = "Example: cliper shift data/phantom_256.png out/shifted.png --shift 10.5,-3.25 --mode nearest"
    )]
    Shift {
        #[command(flatten)]
        io: UnaryIo,
        /// One shift, or one per axis, in samples.
        #[arg(long, allow_hyphen_values = true)]
        shift: String,
        #[command(flatten)]
        interp: InterpArgs,
    },
    /// scipy.ndimage.rotate: by --angle degrees counter-clockwise about the centre, in the plane of --axes.
    #[command(
        after_help = "Examples:\n  cliper rotate data/phantom_256.png out/rotated.png --angle 30\n  cliper rotate vol.nii.gz out/tilted.nii.gz --angle 12 --axes 0,2 --no-reshape"
    )]
    Rotate {
        #[command(flatten)]
        io: UnaryIo,
        /// Degrees, counter-clockwise.
        #[arg(long, allow_hyphen_values = true)]
        angle: f64,
        /// The plane's two axes, A,B (default scipy's 1,0; a colour image's image axes).
        #[arg(long)]
        axes: Option<String>,
        /// Keep the input's shape (the corners are cut) instead of enlarging the output to hold it all.
        #[arg(long)]
        no_reshape: bool,
        #[command(flatten)]
        interp: InterpArgs,
    },
    /// scipy.ndimage.affine_transform: output o reads the input at matrix · o + offset.
    #[command(
        after_help = "Example: cliper affine-transform data/phantom_256.png out/sheared.png --matrix '1,0.2;0,1' --offset=-20,0\n\nRows separated by ';', values by ','; a last column is the offset, a last row 0,…,0,1 makes it homogeneous, one row is the diagonal. A colour image's matrix is for its two image axes."
    )]
    AffineTransform {
        #[command(flatten)]
        io: UnaryIo,
        /// The matrix: rows separated by ';', values by ','.
        #[arg(long, allow_hyphen_values = true)]
        matrix: String,
        /// One offset, or one per axis.
        #[arg(long, allow_hyphen_values = true)]
        offset: Option<String>,
        /// The output shape, N,N,… (default the input's).
        #[arg(long)]
        output_shape: Option<String>,
        #[command(flatten)]
        interp: InterpArgs,
    },
    /// scipy.ndimage.map_coordinates: INPUT interpolated at the points COORDINATES holds (shape [ndim, …]).
    #[command(after_help = "Example: cliper map-coordinates image.npy points.npy out/values.npy --order 1")]
    MapCoordinates {
        /// The data.
        input: String,
        /// The coordinates: a real array of shape [ndim, *output_shape] (row k along the data's axis k).
        coordinates: String,
        /// The output file.
        output: String,
        #[command(flatten)]
        interp: InterpArgs,
        #[command(flatten)]
        common: Common,
    },
    /// scipy.ndimage.spline_filter (spline_filter1d with --axis): B-spline coefficients, for interpolation with
    /// --no-prefilter later.
    #[command(after_help = "Example: cliper spline-filter vol.npy out/coefficients.npy --order 3 --mode mirror")]
    SplineFilter {
        #[command(flatten)]
        io: UnaryIo,
        /// The spline order, 2 to 5 (0 and 1 copy).
        #[arg(long, default_value_t = 3)]
        order: usize,
        /// scipy's mode.
        #[arg(long, default_value = "mirror")]
        mode: String,
        /// One axis only (negative counts from the last).
        #[arg(long, allow_negative_numbers = true)]
        axis: Option<isize>,
    },
    /// Run a pipeline file: steps with named arrays that stay on the device.
    #[command(
        after_help = "Examples:\n  cliper run pipelines/demo.toml --profile\n  cliper run pipelines/demo.toml --input image='scans/*.png' --output edges='out/{stem}_edges.png'\n  cliper run pipe.toml --input ct=scans/ --dry-run\n\nA pipeline file is a program: it reads and writes the files it names, as a Makefile does; --dry-run lists them."
    )]
    Run {
        /// The pipeline file (TOML; see docs/cli.md).
        pipeline: PathBuf,
        /// Replace an input's file: NAME=PATH (a directory or glob makes a batch run).
        #[arg(long = "input", value_name = "NAME=PATH")]
        inputs: Vec<String>,
        /// Replace an output's file: NAME=PATH.
        #[arg(long = "output", value_name = "NAME=PATH")]
        outputs: Vec<String>,
        /// List every file the run would read and write (after --shard and --skip-existing), check them, and
        /// run nothing.
        #[arg(long)]
        dry_run: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Reconstruct an image from k-space: inverse FFT per coil, then SENSE coil combination or root sum of squares.
    #[command(
        after_help = "Examples:\n  cliper recon data/kspace.mat image.tif\n  cliper recon data/kspace.mat image.png --method rsos --scale minmax\n  cliper recon data/kspace.cfl aliased.npy --apply-mask --part complex"
    )]
    Recon(recon::ReconArgs),
    /// Coil sensitivity maps from k-space's fully sampled centre by ESPIRiT, as `bart ecalib -m1`.
    #[command(
        after_help = "Example: cliper ecalib kspace.cfl maps.cfl   (then: cliper recon kspace.cfl out.cfl --method cg-sense --maps maps.cfl)"
    )]
    Ecalib(recon::EcalibArgs),
    /// The main job: the sample phantom through pad → Gaussian → Sobel → transpose → norm, results in out/.
    #[command(after_help = "Example: cliper demo --profile")]
    Demo(demo::DemoArgs),
}

/// Input and output of a one-input operation.
#[derive(Args)]
struct UnaryIo {
    /// Input file (or directory/glob for a batch run).
    input: String,
    /// Output file (or directory, or a name with {stem}).
    output: String,
    #[command(flatten)]
    common: Common,
}

/// Where a reduction (norm, dot) goes: along an axis or over everything, to a file or printed.
#[derive(Args)]
struct Reduction {
    /// Reduce along this axis instead of over everything; negative counts from the last (numpy's -1).
    #[arg(long, allow_negative_numbers = true)]
    axis: Option<isize>,
    /// Save the result to a file (else it is printed).
    #[arg(short, long)]
    output: Option<String>,
    #[command(flatten)]
    common: Common,
}

/// The interpolation settings of the resampling commands (scipy's names and defaults).
#[derive(Args)]
struct InterpArgs {
    /// The spline order: 0 (nearest sample), 1 (linear), 3 (cubic, the default) … 5.
    #[arg(long, default_value_t = 3)]
    order: usize,
    /// scipy's mode: constant, grid-constant, nearest, reflect, mirror, wrap or grid-wrap.
    #[arg(long, default_value = "constant")]
    mode: String,
    /// The value outside for the constant modes.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    cval: f64,
    /// Take the input as B-spline coefficients already (scipy's prefilter=False).
    #[arg(long)]
    no_prefilter: bool,
}

/// The structuring element of a grey morphology command: the window (flat), or non-flat values.
#[derive(Args)]
struct GreyArgs {
    #[command(flatten)]
    window: WindowArgs,
    /// A non-flat structuring element: a file of values (scipy's `structure`), added in dilation and subtracted
    /// in erosion; its box is the footprint unless --footprint is given.
    #[arg(long)]
    structure: Option<String>,
}

/// The structure of a labelling command.
#[derive(Args)]
struct ConnectArgs {
    /// generate_binary_structure's connectivity: 1 (faces, the default) to the rank (every neighbour).
    #[arg(long, default_value_t = 1)]
    connectivity: usize,
    /// A structure file (non-zero = connected; 3 per axis, centro-symmetric), instead of --connectivity.
    #[arg(long)]
    structure: Option<String>,
    /// Axes spanned, the last ones: 1 to 3 (default every axis, as scipy; 2 is slice by slice).
    #[arg(long)]
    rank: Option<usize>,
}

/// The structure and repetitions of a binary morphology command.
#[derive(Args)]
struct BinaryArgs {
    /// Repetitions of each step; 0 repeats until nothing changes.
    #[arg(long, default_value_t = 1)]
    iterations: usize,
    /// A structure file (non-zero = in the structure; overrides --connectivity; its axes set --rank).
    #[arg(long)]
    structure: Option<String>,
    /// scipy's generate_binary_structure(rank, CONNECTIVITY): 1 (the cross) to rank (the full box).
    #[arg(long, default_value_t = 1)]
    connectivity: usize,
    /// The value outside the array: 0 or 1.
    #[arg(long, default_value_t = 0)]
    border_value: u8,
    /// The structure's shift (scipy's origin): one, or one per axis (-1,0).
    #[arg(long, allow_hyphen_values = true, value_delimiter = ',')]
    origin: Option<Vec<isize>>,
    /// Axes spanned, the last ones: 1 to 3 (default every axis, as scipy; 2 is slice by slice).
    #[arg(long)]
    rank: Option<usize>,
}

impl BinaryArgs {
    fn op(self, operation: &str) -> Op {
        let BinaryArgs { iterations, structure, connectivity, border_value, origin, rank } = self;
        Op::BinaryMorphology {
            operation: operation.into(),
            iterations,
            structure,
            connectivity,
            border_value,
            origin,
            rank,
        }
    }
}

/// The window of a rank filter or grey morphology (scipy.ndimage's size, footprint, mode, cval, origin).
#[derive(Args)]
struct WindowArgs {
    /// The window's size: N for every axis, or one per axis (3,5).
    #[arg(long, default_value = "3")]
    size: Sizes,
    /// A footprint file (non-zero = in the window; overrides --size; its axes set --rank).
    #[arg(long)]
    footprint: Option<String>,
    /// scipy.ndimage border mode: reflect, mirror, nearest, wrap, constant.
    #[arg(long, default_value = "reflect")]
    border: String,
    /// The constant for border constant (scipy's cval).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    value: f64,
    /// The window's shift (scipy's origin): one, or one per axis (-1,0).
    #[arg(long, allow_hyphen_values = true, value_delimiter = ',')]
    origin: Option<Vec<isize>>,
    /// Axes the window spans, the last ones: 1 to 3 (default every axis, as scipy; 2 filters slice by slice).
    #[arg(long)]
    rank: Option<usize>,
}

impl WindowArgs {
    fn rank_filter(self, filter: String) -> Op {
        let WindowArgs { size, footprint, border, value, origin, rank } = self;
        Op::RankFilter { filter, size, footprint, border, value, origin, rank }
    }
    fn grey(self, operation: &str, structure: Option<String>) -> Op {
        let WindowArgs { size, footprint, border, value, origin, rank } = self;
        Op::GreyMorphology { operation: operation.into(), structure, size, footprint, border, value, origin, rank }
    }
}

/// Border and rank of a named filter (the scipy.ndimage functions above `convolve`).
#[derive(Args)]
struct NamedFilterArgs {
    /// scipy.ndimage border mode: reflect, mirror, nearest, wrap, constant.
    #[arg(long, default_value = "reflect")]
    border: String,
    /// The constant for border constant.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    value: f64,
    /// Axes the filter spans, the last ones: 1 to 3 (default every axis, as scipy; 2 is slice by slice).
    #[arg(long)]
    rank: Option<usize>,
}

impl NamedFilterArgs {
    /// The convolve step of the named filter `kernel`.
    fn op(self, kernel: String) -> Op {
        Op::Convolve {
            kernel,
            mode: None,
            border: self.border,
            value: self.value,
            output: ConvOutput::Same,
            rank: self.rank,
        }
    }
}

/// Options every operation shares.
#[derive(Args)]
struct Common {
    /// auto: double when an input needs it (f64, complex128, 32/64-bit integers) — integer scans, scaled or
    /// not, compute in single (a rescale f32 does not hold exactly is rounded to the nearest f32); single; double.
    #[arg(long, value_parser = args::precision(), default_value = "auto")]
    precision: Precision,
    #[command(flatten)]
    options: OutputArgs,
}

/// A one-step chain reading `inputs` and saving its result to `output` (or printing it).
fn one_step(op: Op, inputs: &[&str], output: Option<&str>, common: Common) -> Chain {
    let names: Vec<String> = if inputs.len() == 1 { vec!["in".into()] } else { vec!["a".into(), "b".into()] };
    // The result is named after the operation: `norm = 5.2` when printed.
    let result = op.name().to_string();
    Chain {
        precision: common.precision,
        inputs: names.iter().cloned().zip(inputs.iter().map(|s| s.to_string())).collect(),
        steps: vec![Step { op, inputs: names, output: result.clone() }],
        outputs: output.map(|o| vec![(result, o.to_string(), None)]).unwrap_or_default(),
        options: common.options.options(),
    }
}

/// The chain inputs `in0`, `in1`, … of an n-input one-step command.
fn step_inputs(files: &[&str]) -> Vec<(String, String)> {
    files.iter().enumerate().map(|(k, f)| (format!("in{k}"), f.to_string())).collect()
}

/// On SIGINT (Ctrl-C) or SIGTERM: the temporary files of saves in flight are removed, nothing more is renamed
/// into place, and the process exits with 130. Outputs written before are complete; no output is partial.
fn interrupt_removes_partial_outputs() {
    let installed = ctrlc::set_handler(|| {
        let removed = cliper::abandon_saves();
        eprintln!("interrupted: stopped; outputs already written are complete, {removed} partial output(s) removed");
        std::process::exit(130);
    });
    if let Err(e) = installed {
        // The run goes on; an interruption then leaves at most a hidden `.NAME.cliper-tmp-*` file.
        eprintln!("warning: cannot handle Ctrl-C ({e}); an interrupted save may leave a temporary file");
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // --help and --version are not errors; bad arguments are user errors (exit 1).
            return if e.use_stderr() { ExitCode::from(1) } else { ExitCode::SUCCESS };
        }
    };
    interrupt_removes_partial_outputs();
    cliper::allow_data_outside(cli.allow_data_outside);
    let mut ctx = Context::new(cli.device.clone(), cli.profile, cli.json);
    ctx.devices = cli.devices.clone();
    ctx.shard = cli.shard.clone();
    ctx.skip_existing = cli.skip_existing;
    ctx.manifest = cli.manifest.clone();
    let result = match cli.command {
        Command::Devices => inspect::devices(&ctx).map_err(CliError::from),
        Command::Cache { action } => inspect::cache(&ctx, &action).map_err(CliError::from),
        Command::Info { file } => inspect::info(&mut ctx, &file).map_err(CliError::from),
        Command::Convert { input, output, options } => inspect::convert(&ctx, &input, &output, &options.options()),
        Command::Demo(args) => demo::run(&mut ctx, &args),
        Command::Recon(args) => recon::run(&mut ctx, &args),
        Command::Ecalib(args) => recon::ecalib(&mut ctx, &args),
        Command::Run { pipeline, inputs, outputs, dry_run, common } => (|| -> Result<(), CliError> {
            let mut chain = Chain::from_file(&pipeline)?;
            ctx.pipeline = Some(pipeline.clone());
            for i in &inputs {
                chain.set_input(i)?;
            }
            for o in &outputs {
                chain.set_output(o)?;
            }
            if common.precision != Precision::Auto {
                chain.precision = common.precision;
            }
            chain.options = common.options.options();
            if dry_run {
                return output::dry_run(&ctx, &chain);
            }
            ranks::run_and_report(&mut ctx, &chain)
        })(),
        command => {
            let chain = match command {
                Command::Transpose { io, conj } => {
                    one_step(Op::Transpose { conj }, &[&io.input], Some(&io.output), io.common)
                }
                Command::Permute { io, axes } => {
                    one_step(Op::Permute { axes }, &[&io.input], Some(&io.output), io.common)
                }
                Command::Matmul { a, b, output, ta, tb, ha, hb, gemm_precision, common } => {
                    one_step(Op::Matmul { ta, tb, ha, hb, gemm_precision }, &[&a, &b], Some(&output), common)
                }
                Command::Power { input, n, output, gemm_precision, common } => {
                    one_step(Op::Power { n, gemm_precision }, &[&input], Some(&output), common)
                }
                Command::Norm { input, p, reduce: r } => {
                    one_step(Op::Norm { p, axis: r.axis }, &[&input], r.output.as_deref(), r.common)
                }
                Command::Dot { a, b, conj, reduce: r } => {
                    one_step(Op::Dot { conj, axis: r.axis }, &[&a, &b], r.output.as_deref(), r.common)
                }
                Command::Pad { io, width, mode, value } => {
                    one_step(Op::Pad { width, mode, value }, &[&io.input], Some(&io.output), io.common)
                }
                Command::Convolve { io, kernel, mode, border, value, output_extent, rank } => one_step(
                    Op::Convolve { kernel, mode, border, value, output: output_extent, rank },
                    &[&io.input],
                    Some(&io.output),
                    io.common,
                ),
                Command::Expression { mut files, expr, common } => {
                    let output = files.pop().unwrap_or_default();
                    let inputs: Vec<&str> = files.iter().map(String::as_str).collect();
                    match (Op::Expression { expr: expr.clone() }).expr() {
                        Some(Ok(e)) if e.inputs().max(1) != inputs.len() => {
                            eprintln!(
                                "error: expression: `{expr}` reads {} input(s) (a, b, … in order), and {} file(s) \
                                 were given before the output {output}",
                                e.inputs().max(1),
                                inputs.len()
                            );
                            return ExitCode::from(1);
                        }
                        _ => {}
                    }
                    let mut chain = one_step(Op::Expression { expr }, &inputs, Some(&output), common);
                    if let Some(step) = chain.steps.first_mut() {
                        step.inputs = (0..inputs.len()).map(|k| format!("in{k}")).collect();
                    }
                    chain.inputs = step_inputs(&inputs);
                    chain
                }
                Command::Window { io, level, width, range } => {
                    let Some((low, high)) = range
                        .split_once(':')
                        .and_then(|(l, h)| Some((l.trim().parse::<f64>().ok()?, h.trim().parse::<f64>().ok()?)))
                    else {
                        eprintln!("error: window: --range `{range}` is not LOW:HIGH (two numbers, as in 0:255)");
                        return ExitCode::from(1);
                    };
                    let mut common = io.common;
                    // A display image: 8 bits, rounded, unless the user asked for another type.
                    if common.options.dtype.is_none() {
                        common.options.dtype = Some(cliper::Dtype::U8);
                        common.options.scale = common.options.scale.or(Some(cliper::Scale::Round));
                    }
                    one_step(Op::Window { level, width, low, high }, &[&io.input], Some(&io.output), common)
                }
                Command::Threshold { io, value, above, below } => {
                    one_step(Op::Threshold { value, above, below }, &[&io.input], Some(&io.output), io.common)
                }
                Command::GradientMagnitude { io, derivative, border, value, rank } => one_step(
                    Op::GradientMagnitude { derivative, border, value, rank },
                    &[&io.input],
                    Some(&io.output),
                    io.common,
                ),
                Command::GaussianFilter { io, sigma, order, filter } => {
                    let kernel = match order {
                        Some(order) => format!("gaussian:{sigma}:{order}"),
                        None => format!("gaussian:{sigma}"),
                    };
                    one_step(filter.op(kernel), &[&io.input], Some(&io.output), io.common)
                }
                Command::UniformFilter { io, size, filter } => {
                    one_step(filter.op(format!("box:{size}")), &[&io.input], Some(&io.output), io.common)
                }
                Command::Derivative { io, filter, axis, named } => {
                    let letter = match axis {
                        -1 => "x",
                        -2 => "y",
                        -3 => "z",
                        other => {
                            eprintln!("error: derivative: --axis {other}: give -1 (x), -2 (y) or -3 (z)");
                            return ExitCode::from(1);
                        }
                    };
                    one_step(named.op(format!("{filter}-{letter}")), &[&io.input], Some(&io.output), io.common)
                }
                Command::Median { io, window } => {
                    one_step(window.rank_filter("median".into()), &[&io.input], Some(&io.output), io.common)
                }
                Command::Minimum { io, window } => {
                    one_step(window.rank_filter("minimum".into()), &[&io.input], Some(&io.output), io.common)
                }
                Command::Maximum { io, window } => {
                    one_step(window.rank_filter("maximum".into()), &[&io.input], Some(&io.output), io.common)
                }
                Command::Percentile { io, percentile, window } => one_step(
                    window.rank_filter(format!("percentile:{percentile}")),
                    &[&io.input],
                    Some(&io.output),
                    io.common,
                ),
                Command::RankFilter { io, index, window } => {
                    one_step(window.rank_filter(format!("rank:{index}")), &[&io.input], Some(&io.output), io.common)
                }
                Command::GreyErosion { io, grey } => {
                    one_step(grey.window.grey("erosion", grey.structure), &[&io.input], Some(&io.output), io.common)
                }
                Command::GreyDilation { io, grey } => {
                    one_step(grey.window.grey("dilation", grey.structure), &[&io.input], Some(&io.output), io.common)
                }
                Command::GreyOpening { io, grey } => {
                    one_step(grey.window.grey("opening", grey.structure), &[&io.input], Some(&io.output), io.common)
                }
                Command::GreyClosing { io, grey } => {
                    one_step(grey.window.grey("closing", grey.structure), &[&io.input], Some(&io.output), io.common)
                }
                Command::MorphologicalGradient { io, grey } => {
                    one_step(grey.window.grey("gradient", grey.structure), &[&io.input], Some(&io.output), io.common)
                }
                Command::MorphologicalLaplace { io, grey } => {
                    one_step(grey.window.grey("laplace", grey.structure), &[&io.input], Some(&io.output), io.common)
                }
                Command::WhiteTophat { io, grey } => one_step(
                    grey.window.grey("white-tophat", grey.structure),
                    &[&io.input],
                    Some(&io.output),
                    io.common,
                ),
                Command::BlackTophat { io, grey } => one_step(
                    grey.window.grey("black-tophat", grey.structure),
                    &[&io.input],
                    Some(&io.output),
                    io.common,
                ),
                Command::BinaryErosion { io, binary } => {
                    one_step(binary.op("erosion"), &[&io.input], Some(&io.output), io.common)
                }
                Command::BinaryDilation { io, binary } => {
                    one_step(binary.op("dilation"), &[&io.input], Some(&io.output), io.common)
                }
                Command::BinaryOpening { io, binary } => {
                    one_step(binary.op("opening"), &[&io.input], Some(&io.output), io.common)
                }
                Command::BinaryClosing { io, binary } => {
                    one_step(binary.op("closing"), &[&io.input], Some(&io.output), io.common)
                }
                Command::Label { io, connect: ConnectArgs { connectivity, structure, rank } } => {
                    one_step(Op::Label { connectivity, structure, rank }, &[&io.input], Some(&io.output), io.common)
                }
                Command::FillHoles { io, connect: ConnectArgs { connectivity, structure, rank } } => {
                    one_step(Op::FillHoles { connectivity, structure, rank }, &[&io.input], Some(&io.output), io.common)
                }
                Command::Distance { io, sampling, rank } => {
                    one_step(Op::DistanceTransform { sampling, rank }, &[&io.input], Some(&io.output), io.common)
                }
                Command::Zoom { io, zoom, spacing, grid_mode, interp } => {
                    let io = UnaryIo { common: clipped(io.common), ..io };
                    let InterpArgs { order, mode, cval, no_prefilter } = interp;
                    let op = Op::Zoom { zoom, spacing, grid_mode, order, mode, cval, prefilter: !no_prefilter };
                    one_step(op, &[&io.input], Some(&io.output), io.common)
                }
                Command::Shift { io, shift, interp } => {
                    let io = UnaryIo { common: clipped(io.common), ..io };
                    let InterpArgs { order, mode, cval, no_prefilter } = interp;
                    let op = Op::Shift { shift, order, mode, cval, prefilter: !no_prefilter };
                    one_step(op, &[&io.input], Some(&io.output), io.common)
                }
                Command::Rotate { io, angle, axes, no_reshape, interp } => {
                    let io = UnaryIo { common: clipped(io.common), ..io };
                    let axes = match axes.as_deref().map(parse_list::<usize>).transpose() {
                        Ok(a) => a,
                        Err(bad) => {
                            eprintln!("error: rotate: --axes `{bad}`: give the plane's two axes, as in 0,2");
                            return ExitCode::from(1);
                        }
                    };
                    let InterpArgs { order, mode, cval, no_prefilter } = interp;
                    let op =
                        Op::Rotate { angle, axes, reshape: !no_reshape, order, mode, cval, prefilter: !no_prefilter };
                    one_step(op, &[&io.input], Some(&io.output), io.common)
                }
                Command::AffineTransform { io, matrix, offset, output_shape, interp } => {
                    let io = UnaryIo { common: clipped(io.common), ..io };
                    let output_shape = match output_shape.as_deref().map(parse_list::<usize>).transpose() {
                        Ok(s) => s,
                        Err(bad) => {
                            eprintln!("error: affine-transform: --output-shape `{bad}` is not N,N,…");
                            return ExitCode::from(1);
                        }
                    };
                    let InterpArgs { order, mode, cval, no_prefilter } = interp;
                    let prefilter = !no_prefilter;
                    let op = Op::AffineTransform { matrix, offset, output_shape, order, mode, cval, prefilter };
                    one_step(op, &[&io.input], Some(&io.output), io.common)
                }
                Command::MapCoordinates { input, coordinates, output, interp, common } => {
                    let common = clipped(common);
                    let InterpArgs { order, mode, cval, no_prefilter } = interp;
                    let op = Op::MapCoordinates { order, mode, cval, prefilter: !no_prefilter };
                    one_step(op, &[&input, &coordinates], Some(&output), common)
                }
                Command::SplineFilter { io, order, mode, axis } => one_step(
                    Op::SplineFilter { order, mode, axis, rank: None },
                    &[&io.input],
                    Some(&io.output),
                    io.common,
                ),
                Command::Clip { io, min, max } => {
                    one_step(Op::Clip { min, max }, &[&io.input], Some(&io.output), io.common)
                }
                _ => {
                    let _ = Cli::command().print_help();
                    return ExitCode::from(1);
                }
            };
            ranks::run_and_report(&mut ctx, &chain)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::Lib(e)) => {
            let text = match &e {
                // The devices that exist are the point of this message: on the one line.
                cliper::Error::DeviceSelection { spec, available } => format!(
                    "no OpenCL device matches `{spec}`; the devices are: {}",
                    available.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ")
                ),
                _ => one_line(&e),
            };
            eprintln!("error: {text}");
            if let Some(hint) = hint(&e) {
                eprintln!("hint: {hint}");
            }
            ExitCode::from(exit_code(&e))
        }
        Err(CliError::Quiet(code)) => ExitCode::from(code),
        Err(CliError::Batch { failed, total, code }) => {
            eprintln!(
                "error: {failed} of {total} files failed (named above); the other {} were processed",
                total - failed
            );
            ExitCode::from(code)
        }
    }
}

/// How a command fails: one error, or some files of a batch.
pub enum CliError {
    Lib(cliper::Error),
    Batch {
        failed: usize,
        total: usize,
        code: u8,
    },
    /// Exit with this code, printing nothing (another process has said why: MPI's rank 0).
    Quiet(u8),
}

impl From<cliper::Error> for CliError {
    fn from(e: cliper::Error) -> CliError {
        CliError::Lib(e)
    }
}

/// 1 for mistakes in what was asked (arguments, files, shapes, types), 2 for the device or runtime failing (no
/// device, or none matching --device / CLIPER_DEVICE).
pub fn exit_code(e: &cliper::Error) -> u8 {
    use cliper::Error::*;
    match e {
        Cl { .. }
        | Build { .. }
        | NoDevice { .. }
        | DeviceSelection { .. }
        | OutOfMemory { .. }
        | ProducerFailed { .. }
        | NotInitialized { .. } => 2,
        _ => 1,
    }
}

/// A suggestion for the common mistakes.
fn hint(e: &cliper::Error) -> Option<&'static str> {
    use cliper::Error::*;
    match e {
        DeviceSelection { .. } => Some("`cliper devices` lists the devices and their ids"),
        NoDevice { .. } => Some("install an OpenCL driver (`make demo` installs PoCL, the CPU implementation)"),
        Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            Some("check the path; relative paths are from the current directory (in a pipeline file, from its folder)")
        }
        Type { got, .. } if got.contains("not exactly representable") => {
            Some("--precision double loads 32-bit integers and f64 data exactly; --precision single rounds them")
        }
        _ => None,
    }
}

/// Values separated by commas, or the whole text back when one does not parse.
fn parse_list<V: std::str::FromStr>(text: &str) -> Result<Vec<V>, String> {
    text.split(',').map(|t| t.trim().parse::<V>().map_err(|_| text.to_string())).collect()
}

/// Interpolated values overshoot (a cubic spline rings at edges): written back to an integer input's type they are
/// rounded and clamped to its range, as scipy.ndimage does — unless the user chose how with --type, --scale or
/// --clip.
fn clipped(mut common: Common) -> Common {
    let o = &mut common.options;
    if o.dtype.is_none() && o.scale.is_none() && !o.clip {
        o.clip = true;
    }
    common
}
