//! # cliper — OpenCL image processing for medical and scientific data
//!
//! cliper runs image-processing pipelines on GPUs and CPUs through OpenCL, after OpenCLIPER (Univ. of
//! Valladolid): a device manager ([`ClApp`]) owns the OpenCL context and queue; typed arrays ([`XData`],
//! [`KData`]) live on the device with shapes and strides; processes ([`Process`]) are prepared once (`init`)
//! and enqueued many times (`launch`), and chain on the device without host round trips ([`Pipeline`]).
//!
//! ```
//! use cliper::{ClApp, Pipeline, Permute, SheppLogan, Transpose, XData};
//!
//! let app = ClApp::new()?;                          // best device, or CLIPER_DEVICE=gpu|cpu|P:D|name
//! let volume = XData::<f32>::zeros(&app, &[16, 64, 64])?;
//! let transposed = XData::zeros(&app, &[16, 64, 64])?;
//! let coronal = XData::zeros(&app, &[64, 16, 64])?;
//! let before = app.transfer_stats();
//! let mut chain = Pipeline::new(&app)
//!     .then(SheppLogan::new(&volume))               // phantom generated on the device
//!     .then(Transpose::new(&volume, &transposed))   // each slice transposed
//!     .then(Permute::new(&transposed, &coronal, &[1, 0, 2]));
//! chain.run()?;
//! let pixels = coronal.to_vec()?;                   // the one copy back to the host
//! assert_eq!((app.transfer_stats() - before).total_calls(), 1);
//! assert_eq!(pixels.len(), 16 * 64 * 64);
//! # Ok::<(), cliper::Error>(())
//! ```
//!
//! Element types are `f32`, `f64`, `Complex<f32>` and `Complex<f64>` ([`Element`]); one kernel source serves
//! all four. Errors are one enum ([`Error`]) that names what went wrong: both shapes, the OpenCL error code's
//! name, the compiler log.
//!
//! ## Calling a process
//!
//! Every process is called the same way (docs/api.md has the table of all of them):
//! - `Name::new(inputs…, output, params)` binds it to its arrays; [`Process::init`] plans once,
//!   [`Process::launch`] enqueues, [`Process::run`] does both as needed. None of them waits for the device.
//! - `Name::apply(inputs…, params)` allocates the output, runs once and returns it.
//! - `Name::output_shape(input shapes…, &params)` is the shape the output must have.
//! - `strategy()` is what the planner chose, as a typed value that prints (`None` before `init`).
//!
//! ```
//! use cliper::prelude::*;
//! let app = ClApp::new()?;
//! let image = SheppLogan::<f32>::apply(&app, &[64, 80])?;
//! let filter = Filter::<f32>::gaussian(1.5, 2)?;
//! let smooth = Convolution::apply(&image, &filter, ConvParams::default())?; // border: scipy's reflect
//! let params = NormParams::default().along(1);
//! assert_eq!(NormN::<f32>::output_shape(smooth.shape(), &params)?, vec![64]);
//! let row_norms = NormN::apply(&smooth, params)?;
//! assert_eq!(row_norms.shape(), &[64]);
//! # Ok::<(), cliper::Error>(())
//! ```
//!
//! ## Defaults
//!
//! Each default is the one of the library the operation follows:
//!
//! | params | default | follows |
//! |---|---|---|
//! | [`ConvParams`] | convolution (the filter flipped), output of the input's extent, border [`Border::Reflect`] (scipy's `reflect`), origin 0, stride 1, dilation 1, no normalisation | `scipy.ndimage.convolve` |
//! | [`FilterBankParams`] | correlation (filters not flipped), no padding, stride 1, dilation 1 | cuDNN, PyTorch `conv2d` |
//! | [`PadParams`] | border `Constant(0.0)` | `numpy.pad` |
//! | [`MatMulParams`] | `op(A) = A`, `op(B) = B`, alpha 1, beta 0 | BLAS `gemm` |
//! | [`NormParams`] | 2-norm of the whole array | `numpy.linalg.norm` (flattened) |
//! | [`DotParams`] | no conjugation, whole arrays | `numpy.dot`; [`DotKind::Conjugated`] is `numpy.vdot` |
//! | [`FftParams`] | forward, every axis, `Backward` normalisation (1/n on the inverse) | `numpy.fft.fftn` |
//! | [`RealFftParams`] | every axis (the last halved), `Backward`, inverse length `2·(m − 1)` | `numpy.fft.rfftn` / `irfftn` |
//! | [`FftShiftParams`] | `fftshift`, every axis | `numpy.fft.fftshift` |
//! | [`ReconParams`] | k-space stored centred (zero frequency in the middle) | scanners, BART |
#![deny(unsafe_code)]
#![warn(missing_docs)]
// No panics in the library: every failure is a typed `Error` (tests, which may unwrap, are exempt).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing))]

mod app;
#[cfg(feature = "chain")]
pub mod chain;
mod data;
mod element;
mod error;
mod io;
mod kernel_args;
pub mod kernels;
pub mod process;

pub use app::{
    BUILD_OPTIONS_ENV, CACHE_DIR_ENV, CACHE_ENV, CACHE_MAX_ENV, CacheInfo, ClApp, ClAppBuilder, DEVICE_ENV, DeviceInfo,
    DeviceKind, DevicePool, DeviceShare, Kernel, LOG_BUILDS_ENV, MEMORY_LIMIT_ENV, MemoryStats, PoolResult, Program,
    ProgramCache, RankReport, TransferStats, mpi_launcher_ranks, parse_bytes,
};
#[cfg(feature = "mpi")]
pub use app::{MpiJob, MpiOutcome};
pub use data::{KData, Launch, XData, checked_launches};
pub use element::{ComplexElement, Element, RealElement};
pub use error::{Error, Result, cl_error_name};
pub use io::{
    Dicom, DicomInfo, DicomSeriesOptions, Dtype, Endian, Geometry, HOST_MEMORY_LIMIT_ENV, HostArray, HostBudget, Image,
    KSpaceMat, MAPPED_WRITES_ENV, PngDepth, PngOptions, RawFormat, Scale, Scaling, SlabFile, SlabWriter, SpaceUnit,
    Table, TiffCompression, TiffOptions, abandon_saves, allow_data_outside, decode_cfl, decode_dicom, decode_mat,
    decode_metaimage, decode_nifti, decode_npy, decode_nrrd, decode_png, decode_raw, decode_tiff,
    images_to_bart_layout, is_dicom_file, nifti_scale, read_cfl, read_dicom, read_dicom_series, read_file, read_image,
    read_mat, read_mat_variable, read_metaimage, read_nifti, read_npy, read_nrrd, read_png, read_raw, read_tiff,
    remove_stale_temporaries, show_number, show_value, write_cfl, write_dicom_series, write_file, write_image,
    write_mat, write_mat_variable, write_nifti, write_npy, write_png, write_raw, write_tiff, write_tiff_with,
};
#[cfg(feature = "hdf5")]
pub use io::{EncodingSpace, MriFormat, MriHeader, MriRaw, read_mri_h5};
pub use kernel_args::{IndexType, KernelScalar};
pub use process::elementwise::{
    ApplyMask, BinaryOp, Complex2Real, ComplexAbs, ComplexElementProd, ComplexPart, Elementwise, ElementwiseStrategy,
    EpilogueStrategy, Expr, ExprStrategy, Fill, ProductKind, ScalarMultiply, UnaryOp,
};
pub use process::feature::{
    CoordinatesStrategy, ExcludeBorder, PeakCoordinates, PeakLocalMax, PeakMark, PeakParams, PeakStrategy,
};
pub use process::fft::{
    Fft, FftAlgorithm, FftAxisStrategy, FftDirection, FftNorm, FftParams, FftPasses, FftShift, FftShiftParams,
    FftStrategy, InverseRealFft, RealFft, RealFftParams,
};
pub use process::filter::{
    Border, ConvAlgorithm, ConvMode, ConvOutput, ConvParams, ConvStrategy, Convolution, Derivative, Filter, FilterBank,
    FilterBankAlgorithm, FilterBankParams, FilterBankStrategy, FilterElement, GradientMagnitude, GradientParams,
    GradientStrategy, Pad, PadParams, PadStrategy, SeparableConvolution,
};
pub use process::fourier::{FourierFilter, FourierKind, FourierParams};
pub use process::layout::{
    ConjugateTranspose, CopyParams, CopyStrategy, Permute, Slice, SliceAxis, SliceEntry, SliceSpec, Stack,
    StackStrategy, StridedCopy, Transpose, TransposeTiles,
};
pub use process::linalg::{
    GEMM_TABLE_ENV, GemmPrecision, GemmStrategy, GemmTable, GemmTableEntry, GemmTiles, MatMul, MatMulParams, MatOp,
    MatrixPower, PowerStrategy,
};
pub use process::measure::{LabelRows, Measure, MeasureParams, MeasureStat, MeasureStrategy};
pub use process::morphology::{
    BinaryMorphology, BinaryParams, BinaryStrategy, BruteForceDistance, BruteForceMetric, BruteForceParams,
    BruteForceStrategy, ChamferDistance, ChamferParams, ChamferStrategy, DistanceParams, DistanceStrategy,
    DistanceTransform, FillHoles, Label, LabelParams, LabelStrategy, MorphologyOp, RemoveSmall, RemoveSmallParams,
    SizeLimit, SkeletonMethod, SkeletonParams, SkeletonStrategy, Skeletonize, SmallStrategy, SmallTarget,
};
pub use process::mri::{
    BartScaling, BartTrajectory, CgSense, CgSenseStrategy, CoilCompression, CoilParams, CoilStrategy, CoilSum,
    CompressionMethod, CompressionParams, EspiritMaps, EspiritParams, EspiritStrategy, L1WaveletParams, L1WaveletSense,
    L1WaveletStrategy, NufftSense, NufftSenseOperator, RSoS, RSoSRecon, ReconParams, ReconStrategy, SenseOperator,
    SensePenalty, SimpleMRIRecon, TrajectoryParams, TvSense, TvStrategy, WalshMaps, WalshParams, WalshStrategy,
};
pub use process::nufft::{
    DcfParams, DensityCompensation, GaussLegendre, MAX_WIDTH, Nufft, NufftAtCoords, NufftDirection, NufftKernel,
    NufftNormal, NufftParams, NufftPoints, NufftStrategy, NufftTransform, Spreading, SpreadingKernel, Upsampling,
    bart_frame, bart_frame_dim, bart_image_axes, bart_image_dims, images_from_bart, images_to_bart, samples_from_bart,
    samples_to_bart,
};
pub use process::phantom::{PhantomStrategy, SheppLogan};
pub use process::rank::{
    Footprint, GenericFilter, GenericParams, GenericStrategy, GreyMorphology, GreyOp, GreyParams, GreyStrategy,
    RankFilter, RankKind, RankParams, RankStrategy, WindowFunction,
};
pub use process::reduce::{
    Dot, DotKind, DotParams, NormN, NormOrder, NormParams, ReduceKernel, ReduceStrategy, StatKind, StatParams,
    StatStrategy, Statistic,
};
pub use process::resample::{
    InterpMode, Interpolation, MapCoordinates, PrefilterMethod, Resample, ResampleParams, ResampleStrategy,
    SplineFilter, SplineParams, SplineStrategy, Transform,
};
pub use process::segment::{
    Connectivity, IftParams, IftStrategy, Watershed, WatershedIft, WatershedParams, WatershedStrategy,
};
pub use process::solve::{
    CgParams, ConjugateGradient, Fista, FistaParams, LinearOperator, Proximal, TvAdmm, TvParams, largest_eigenvalue,
};
pub use process::threshold::{
    HistogramBins, HistogramLayout, ThresholdMask, ThresholdMethod, ThresholdParams, ThresholdStrategy, ThresholdValue,
};
pub use process::wavelet::{
    BartShifts, ShapedWaveletParams, Wavelet, WaveletParams, WaveletStrategy, WaveletThreshold,
};
pub use process::{KernelTiming, Pipeline, Prepared, Process, Report};

/// Everything a program using cliper usually needs, in one import: `use cliper::prelude::*;`.
///
/// It holds the device manager, the arrays, every process with its parameter, option and strategy types,
/// [`Pipeline`], the element traits, [`Error`], the kernel-writing types, the host array and file option types
/// and `Complex32` / `Complex64` (the reading and writing functions stay under `cliper::`). It leaves
/// out `Result`, so it never shadows `std::result::Result`: write `cliper::Result<T>`.
///
/// ```
/// use cliper::prelude::*;
/// let app = ClApp::new()?;
/// let x = XData::from_slice(&app, &[2, 2], &[Complex32::new(1.0, 1.0); 4])?;
/// let y = Fft::apply(&x, FftParams::forward())?;
/// assert_eq!(y.to_vec()?[0], Complex32::new(4.0, 4.0));
/// let fine: Result<u8, String> = Ok(1); // std's Result is untouched
/// # let _ = fine;
/// # Ok::<(), cliper::Error>(())
/// ```
pub mod prelude {
    pub use crate::process::elementwise::*;
    pub use crate::process::feature::*;
    pub use crate::process::fft::*;
    pub use crate::process::filter::*;
    pub use crate::process::fourier::*;
    pub use crate::process::layout::*;
    pub use crate::process::linalg::*;
    pub use crate::process::measure::*;
    pub use crate::process::morphology::*;
    pub use crate::process::mri::*;
    pub use crate::process::phantom::*;
    pub use crate::process::rank::*;
    pub use crate::process::reduce::*;
    pub use crate::process::resample::*;
    pub use crate::process::solve::*;
    pub use crate::process::threshold::{
        HistogramBins, HistogramLayout, ThresholdMask, ThresholdMethod, ThresholdParams, ThresholdStrategy,
        ThresholdValue,
    };
    pub use crate::process::wavelet::*;
    pub use crate::process::{KernelTiming, Pipeline, Prepared, Process, Report};
    pub use crate::{
        ClApp, ComplexElement, DeviceInfo, DeviceKind, Dtype, Element, Endian, Error, Geometry, HostArray, IndexType,
        KData, KSpaceMat, Kernel, KernelScalar, Launch, PngDepth, PngOptions, Program, RawFormat, RealElement, Scale,
        SpaceUnit, TiffCompression, TiffOptions, XData,
    };
    pub use num_complex::{Complex32, Complex64};
}

/// The numerical crates cliper's API uses, re-exported so that users get the versions cliper was built with:
/// `cliper::ndarray::ArrayD` for [`XData::from_ndarray`] / [`XData::to_ndarray`], `cliper::num_complex::Complex32`
/// for complex elements.
///
/// ```
/// use cliper::ndarray::array;
/// let app = cliper::ClApp::new()?;
/// let x = cliper::XData::from_ndarray(&app, &array![[1.0f32, 2.0], [3.0, 4.0]])?;
/// assert_eq!(x.to_ndarray()?, array![[1.0, 2.0], [3.0, 4.0]].into_dyn());
/// # Ok::<(), cliper::Error>(())
/// ```
pub use ndarray;
pub use num_complex;

// The guides' code blocks run as doctests, so the documentation cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;

#[cfg(doctest)]
#[doc = include_str!("../docs/writing-an-operation.md")]
struct WritingAnOperationExamples;

#[cfg(doctest)]
#[doc = include_str!("../docs/api.md")]
struct ApiExamples;
