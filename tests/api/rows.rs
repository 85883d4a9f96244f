//! One compile-time check per row of docs/api.md's process table. Each `row!` is a table row, cell for cell
//! (`tests/api.rs` checks that, and CLIPER_BLESS=1 rewrites the rows from the table), with the element types to
//! instantiate the process with (the table names none) and, for a function generic in its arguments, the
//! signature to pin it to. The row's test names, through the crate root (so the process and its strategy type
//! must be re-exported there):
//! - each constructor, `apply` and `output_shape` as a function of as many arguments as the row lists;
//! - `strategy` as a `fn(&Process) -> Option<Strategy>` with the row's strategy type, which must be `Display`.
//!
//! A process that lacks one of them, or takes another number of arguments than its row says, does not compile.

use cliper::num_complex::Complex32;
use std::fmt::Display;

/// Something callable with the arguments `Args` stands for: a tuple of one type per argument.
trait Takes<Args> {}
impl<F: Fn() -> R, R> Takes<()> for F {}
impl<F: Fn(A) -> R, A, R> Takes<(A,)> for F {}
impl<F: Fn(A, B) -> R, A, B, R> Takes<(A, B)> for F {}
impl<F: Fn(A, B, C) -> R, A, B, C, R> Takes<(A, B, C)> for F {}
impl<F: Fn(A, B, C, D) -> R, A, B, C, D, R> Takes<(A, B, C, D)> for F {}
impl<F: Fn(A, B, C, D, E) -> R, A, B, C, D, E, R> Takes<(A, B, C, D, E)> for F {}
impl<F: Fn(A, B, C, D, E, G) -> R, A, B, C, D, E, G, R> Takes<(A, B, C, D, E, G)> for F {}

/// Compiles when `f` takes as many arguments as `Args` has elements (the row gives `_` for each).
fn takes<Args, F: Takes<Args>>(_: F) {}

/// Compiles when the strategy type `S` reads as a sentence.
fn displays<P, S: Display>(_: fn(&P) -> Option<S>) {}

/// `_`, once per argument the row lists.
macro_rules! placeholder {
    ($argument:expr) => {
        _
    };
}

/// A row of the table: `family | Process<types> | constructors | apply(…) | output_shape(…) | Strategy`, and
/// optionally `| apply as fn(…) -> …` for an `apply` generic in its arguments.
macro_rules! row {
    ($family:ident | $name:ident $(<$($types:ty),+>)? | $($constructor:ident($($new:expr),*));+ |
     apply($($apply:expr),*) | output_shape($($shape:expr),*) | $strategy:ident $(| apply as $signature:ty)?) => {
        #[test]
        #[allow(non_snake_case)]
        fn $name() {
            type P = cliper::$name $(<$($types),+>)?;
            $(takes::<($(placeholder!($new),)*), _>(P::$constructor);)+
            takes::<($(placeholder!($apply),)*), _>(P::apply $(as $signature)?);
            takes::<($(placeholder!($shape),)*), _>(P::output_shape);
            displays::<P, cliper::$strategy>(P::strategy);
        }
    };
}

// The rows (generated from docs/api.md by tests/api.rs; CLIPER_BLESS=1 rewrites them, keeping their types).
row! { layout | Transpose<f32> | new(x, out) | apply(x) | output_shape(shape) | CopyStrategy }
row! { layout | ConjugateTranspose<f32> | new(x, out) | apply(x) | output_shape(shape) | CopyStrategy }
row! { layout | Permute<f32> | new(x, out, axes) | apply(x, axes) | output_shape(shape, axes) | CopyStrategy }
row! { layout | StridedCopy<f32> | new(x, out, CopyParams) | apply(x, CopyParams) | output_shape(shape) | CopyStrategy }
row! { layout | Slice<f32> | new(x, out, axes) | apply(x, &SliceSpec) | output_shape(shape, &SliceSpec) | ElementwiseStrategy }
row! { layout | Stack<f32> | new(inputs, out, axis) | apply(inputs, axis) | output_shape(shapes, axis) | StackStrategy }
row! { linalg | MatMul<f32> | new(a, b, c, MatMulParams) | apply(a, b, MatMulParams) | output_shape(a, b, &MatMulParams) | GemmStrategy }
row! { linalg | MatrixPower<f32> | new(a, out, n) | apply(a, n) | output_shape(shape) | PowerStrategy }
row! { reduce | NormN<f32> | new(x, out, NormParams) | apply(x, NormParams) | output_shape(shape, &NormParams) | ReduceStrategy }
row! { reduce | Dot<f32> | new(x, y, out, DotParams) | apply(x, y, DotParams) | output_shape(x, y, &DotParams) | ReduceStrategy }
row! { reduce | Statistic<f32, f32> | new(x, out, StatParams) | apply(x, &StatParams) | output_shape(shape, &StatParams) | StatStrategy }
row! { threshold | ThresholdValue<f32> | new(x, out, ThresholdParams) | apply(x, ThresholdParams) | output_shape(shape, &ThresholdParams) | ThresholdStrategy }
row! { threshold | ThresholdMask<f32> | new(x, out, ThresholdParams, values) | apply(x, ThresholdParams, values) | output_shape(shape, &ThresholdParams) | ThresholdStrategy }
row! { filter | Pad<f32> | new(x, out, PadParams) | apply(x, PadParams) | output_shape(shape, &PadParams) | PadStrategy }
row! { filter | Convolution<f32, f32> | new(x, filter, out, ConvParams) | apply(x, filter, ConvParams) | output_shape(shape, filter_shape, &ConvParams) | ConvStrategy }
row! { filter | SeparableConvolution<f32, f32> | new(x, factors, out, ConvParams) | apply(x, factors, ConvParams) | output_shape(shape, lengths, &ConvParams) | ConvStrategy }
row! { filter | GradientMagnitude<f32> | new(x, out, GradientParams) | apply(x, GradientParams) | output_shape(shape) | GradientStrategy }
row! { filter | FilterBank<f32> | new(x, filters, out, FilterBankParams) | apply(x, filters, FilterBankParams) | output_shape(x, filters, &FilterBankParams) | FilterBankStrategy }
row! { rank | RankFilter<f32> | new(x, out, RankParams) | apply(x, RankParams) | output_shape(shape, &RankParams) | RankStrategy }
row! { rank | GreyMorphology<f32> | new(x, out, GreyParams) | apply(x, GreyParams) | output_shape(shape, &GreyParams) | GreyStrategy }
row! { rank | GenericFilter<f32> | new(x, out, GenericParams) | apply(x, GenericParams) | output_shape(shape, &GenericParams) | GenericStrategy }
row! { measure | Measure<f32> | new(image, labels, out, MeasureParams) | apply(image, labels, MeasureParams) | output_shape(shape, &MeasureParams) | MeasureStrategy }
row! { feature | PeakLocalMax<f32> | new(image, labels, out, PeakParams) | apply(image, labels, PeakParams) | output_shape(shape, &PeakParams) | PeakStrategy }
row! { feature | PeakCoordinates | new(order, table) | apply(order) | output_shape(shape, count) | CoordinatesStrategy }
row! { morphology | DistanceTransform<f32> | new(x, out, DistanceParams) | apply(x, DistanceParams) | output_shape(shape, &DistanceParams) | DistanceStrategy }
row! { morphology | ChamferDistance<f32> | new(x, out, ChamferParams) | apply(x, ChamferParams) | output_shape(shape, &ChamferParams) | ChamferStrategy }
row! { morphology | BruteForceDistance<f32> | new(x, out, BruteForceParams) | apply(x, BruteForceParams) | output_shape(shape, &BruteForceParams) | BruteForceStrategy }
row! { morphology | BinaryMorphology<f32> | new(x, out, BinaryParams) | apply(x, BinaryParams) | output_shape(shape, &BinaryParams) | BinaryStrategy }
row! { morphology | Label<f32> | new(x, out, LabelParams) | apply(x, LabelParams) | output_shape(shape, &LabelParams) | LabelStrategy }
row! { morphology | FillHoles<f32> | new(x, out, LabelParams) | apply(x, LabelParams) | output_shape(shape, &LabelParams) | LabelStrategy }
row! { morphology | RemoveSmall<f32> | new(x, out, RemoveSmallParams) | apply(x, RemoveSmallParams) | output_shape(shape, &RemoveSmallParams) | SmallStrategy }
row! { segment | Watershed<f32> | new(image, markers, mask, out, WatershedParams) | apply(image, markers, mask, WatershedParams) | output_shape(shape, &WatershedParams) | WatershedStrategy }
row! { segment | WatershedIft<f32> | new(image, markers, out, IftParams) | apply(image, markers, IftParams) | output_shape(shape, &IftParams) | IftStrategy }
row! { morphology | Skeletonize<f32> | new(x, out, SkeletonParams) | apply(x, SkeletonParams) | output_shape(shape, &SkeletonParams) | SkeletonStrategy }
row! { resample | Resample<f32> | new(x, out, ResampleParams) | apply(x, ResampleParams) | output_shape(shape, &ResampleParams) | ResampleStrategy }
row! { resample | MapCoordinates<f32> | new(x, coordinates, out, Interpolation) | apply(x, coordinates, Interpolation) | output_shape(shape, coordinates_shape, &Interpolation) | ResampleStrategy }
row! { resample | SplineFilter<f32> | new(x, out, SplineParams) | apply(x, SplineParams) | output_shape(shape, &SplineParams) | SplineStrategy }
row! { fft | Fft<Complex32> | new(x, out, FftParams) | apply(x, FftParams) | output_shape(shape, &FftParams) | FftStrategy }
row! { fft | RealFft<Complex32> | new(x, out, RealFftParams) | apply(x, RealFftParams) | output_shape(shape, &RealFftParams) | FftStrategy }
row! { fft | InverseRealFft<Complex32> | new(x, out, RealFftParams) | apply(x, RealFftParams) | output_shape(shape, &RealFftParams) | FftStrategy }
row! { fft | FftShift<f32> | new(x, out, FftShiftParams) | apply(x, FftShiftParams) | output_shape(shape, &FftShiftParams) | ElementwiseStrategy }
row! { fourier | FourierFilter<f32, Complex32> | new(x, out, FourierParams) | apply(x, FourierParams) | output_shape(shape, &FourierParams) | ElementwiseStrategy }
row! { mri | CoilSum<Complex32> | new(x, out, CoilParams) | apply(x, CoilParams) | output_shape(shape, &CoilParams) | CoilStrategy }
row! { mri | RSoS<Complex32> | new(x, out, coil_axis) | apply(x, coil_axis) | output_shape(shape, coil_axis) | CoilStrategy }
row! { mri | SimpleMRIRecon<Complex32> | new(k, out, ReconParams) | apply(k, ReconParams) | output_shape(&k) | ReconStrategy }
row! { mri | RSoSRecon<Complex32> | new(k, out, ReconParams) | apply(k, ReconParams) | output_shape(&k) | ReconStrategy }
row! { mri | CgSense<Complex32> | new(k, out, CgParams) | apply(k, CgParams) | output_shape(&k) | CgSenseStrategy }
row! { mri | L1WaveletSense<Complex32> | new(k, out, L1WaveletParams) | apply(k, L1WaveletParams) | output_shape(&k) | L1WaveletStrategy }
row! { mri | TvSense<Complex32> | new(k, out, TvParams) | apply(k, TvParams) | output_shape(&k) | TvStrategy }
row! { mri | NufftSense<Complex32> | new(samples, maps, &points, out, SensePenalty, NufftParams) | apply(samples, maps, &points, SensePenalty, NufftParams) | output_shape(maps_shape) | NufftStrategy }
row! { mri | EspiritMaps<Complex32> | new(k, maps, EspiritParams) | apply(k, EspiritParams) | output_shape(&k) | EspiritStrategy }
row! { mri | WalshMaps<Complex32> | new(images, maps, WalshParams); from_kspace(k, maps, WalshParams) | apply(images, WalshParams) | output_shape(shape) | WalshStrategy }
row! { nufft | NufftTransform<Complex32> | new(x, out, &points, NufftDirection, NufftParams) | apply(x, &points, NufftDirection, NufftParams) | output_shape(shape, &points, NufftDirection) | NufftStrategy }
row! { nufft | NufftAtCoords<Complex32, f32> | new(x, &coord, out, NufftDirection, NufftParams) | apply(x, &coord, NufftDirection, image, NufftParams) | output_shape(shape, coord_shape, NufftDirection, image) | NufftStrategy }
row! { wavelet | Wavelet<f32> | new(x, out, WaveletParams) | apply(x, WaveletParams) | output_shape(shape, &WaveletParams) | WaveletStrategy | apply as fn(&cliper::XData<f32>, cliper::WaveletParams) -> cliper::Result<cliper::XData<f32>> }
row! { elementwise | Elementwise<f32, f32> | new(inputs, out, Expr) | apply(inputs, Expr) | output_shape(shapes) | ExprStrategy }
row! { elementwise | ComplexElementProd<Complex32> | new(x, y, out, ProductKind) | apply(x, y, ProductKind) | output_shape(x, y) | ElementwiseStrategy }
row! { elementwise | ApplyMask<Complex32> | new(x, mask, out) | apply(x, mask) | output_shape(x, mask) | ElementwiseStrategy }
row! { elementwise | Complex2Real<Complex32> | new(x, out, ComplexPart) | apply(x, ComplexPart) | output_shape(shape) | ElementwiseStrategy }
row! { elementwise | ComplexAbs<Complex32> | new(x, out) | apply(x) | output_shape(shape) | ElementwiseStrategy }
row! { elementwise | ScalarMultiply<f32> | new(x, out, factor) | apply(x, factor) | output_shape(shape) | ElementwiseStrategy }
row! { elementwise | Fill<f32> | new(out, value) | apply(app, shape, value) | output_shape(shape) | ElementwiseStrategy }
row! { phantom | SheppLogan<f32> | new(out) | apply(app, shape) | output_shape(shape) | PhantomStrategy }
