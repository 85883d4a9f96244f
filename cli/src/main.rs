//! The `cliper` command line: operations on files, pipeline files, batch runs over directories, profiling.
//! docs/cli.md is the manual. The operations' subcommands come from the library's definitions
//! (`cliper::chain::DEFINITIONS`, built in operations.rs); the commands below are the ones that are not operations.
// No panics in what users run: every failure is a typed error on one line (tests may unwrap).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing))]

#[macro_use]
mod say;

mod args;
mod cc;
mod chain;
mod demo;
mod failure;
mod inspect;
mod nufft;
mod operations;
mod output;
mod ranks;
mod recon;
mod recon_h5;
mod recon_noncartesian;
mod traj;

use chain::Context;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use cliper::chain::{Chain, DEFINITIONS, Definition, Precision};
use failure::CliError;
use operations::Common;
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
}

// The commands that are not operations on arrays: devices, the cache, files, pipelines, MRI, the demo. (A `//`
// comment: clap would take a doc comment for the program's about text.)
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
        options: args::OutputArgs,
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
    /// Coil sensitivity maps from k-space's fully sampled centre by ESPIRiT, as `bart ecalib` (`--maps M`: -m M).
    #[command(
        after_help = "Example: cliper ecalib kspace.cfl maps.cfl   (then: cliper recon kspace.cfl out.cfl --method cg-sense --maps maps.cfl)"
    )]
    Ecalib(recon::EcalibArgs),
    /// The non-uniform FFT of BART-layout files at a `bart traj` trajectory, as `bart nufft`: forward (image →
    /// samples), --adjoint, or --inverse (CG on the normal equations, Toeplitz).
    #[command(
        after_help = "Examples:\n  cliper nufft image.cfl ksp.cfl --traj traj.cfl\n  cliper nufft ksp.cfl adjoint.cfl --traj traj.cfl --adjoint --dims 64:64:1\n  cliper nufft ksp.cfl image.cfl --traj traj.cfl --inverse --lambda 0.01"
    )]
    Nufft(nufft::NufftArgs),
    /// A k-space trajectory as `bart traj` writes it: Cartesian lines or radial spokes (golden angle, …).
    #[command(
        after_help = "Example: cliper traj t -x 128 -y 101 --radial --golden   (bart traj -x 128 -y 101 -r -G t)"
    )]
    Traj(traj::TrajArgs),
    /// Coil compression of Cartesian k-space as `bart cc`: SVD or geometric virtual coils, or the matrices.
    #[command(
        after_help = "Examples:\n  cliper cc ksp.cfl ksp8.cfl --virtual-coils 8   (bart cc -p 8 -S ksp ksp8)\n  cliper cc ksp.cfl ksp8.cfl -p 8 --method geometric   (bart cc -p 8 -G)\n  cliper cc ksp.cfl matrix.cfl --matrix   (bart cc -M)"
    )]
    Cc(cc::CcArgs),
    /// The main job: the sample phantom through pad → Gaussian → Sobel → transpose → norm, results in out/.
    #[command(after_help = "Example: cliper demo --profile")]
    Demo(demo::DemoArgs),
}

/// Where the commands stand in `--help`: the file commands first, then the operations, then the rest.
const FIRST: [&str; 4] = ["devices", "cache", "info", "convert"];

/// The whole command line: the global options, the commands, and a subcommand per operation definition.
fn command_line() -> clap::Command {
    let mut line = Command::augment_subcommands(Cli::command()).subcommand_required(true);
    line = line.subcommands(DEFINITIONS.iter().map(operations::subcommand));
    let names: Vec<String> = line.get_subcommands().map(|c| c.get_name().to_string()).collect();
    for name in names {
        let order = match (FIRST.iter().position(|f| *f == name), Definition::find(&name)) {
            (Some(k), _) => k,
            (None, Some(definition)) => FIRST.len() + help_position(definition),
            (None, None) => FIRST.len() + 2 * DEFINITIONS.len(),
        };
        line = line.mut_subcommand(name, |c| c.display_order(order));
    }
    line
}

/// Where an operation's subcommand stands among the operations': after the one it is a shortcut of, or in the
/// definitions' order (by family).
fn help_position(definition: &Definition) -> usize {
    let index = |name: &str| DEFINITIONS.iter().position(|d| d.name == name).unwrap_or(0);
    match definition.lowers_to {
        Some(target) => 2 * index(target) + 1,
        None => 2 * index(definition.name),
    }
}

/// Runs the command `matches` names.
fn run(ctx: &mut Context, matches: &clap::ArgMatches) -> Result<(), CliError> {
    if let Some((name, sub)) = matches.subcommand()
        && let Some(definition) = Definition::find(name)
    {
        return operations::run(ctx, definition, sub);
    }
    let command = Command::from_arg_matches(matches).map_err(|e| cliper::Error::invalid("cliper", e.to_string()))?;
    match command {
        Command::Devices => inspect::devices(ctx).map_err(CliError::from),
        Command::Cache { action } => inspect::cache(ctx, &action).map_err(CliError::from),
        Command::Info { file } => inspect::info(ctx, &file).map_err(CliError::from),
        Command::Convert { input, output, options } => inspect::convert(ctx, &input, &output, &options.options()),
        Command::Demo(args) => demo::run(ctx, &args),
        Command::Recon(args) if args.traj.is_some() => recon_noncartesian::run(ctx, &args),
        Command::Recon(args) => recon::run(ctx, &args),
        Command::Ecalib(args) => recon::ecalib(ctx, &args),
        Command::Nufft(args) => nufft::run(ctx, &args),
        Command::Traj(args) => traj::run(&args),
        Command::Cc(args) => cc::run(&args),
        Command::Run { pipeline, inputs, outputs, dry_run, common } => {
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
                return output::dry_run(ctx, &chain);
            }
            ranks::run_and_report(ctx, &chain)
        }
    }
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
    let (cli, matches) = match command_line().try_get_matches() {
        Ok(matches) => match Cli::from_arg_matches(&matches) {
            Ok(cli) => (cli, matches),
            Err(e) => {
                let _ = e.print();
                return ExitCode::from(1);
            }
        },
        Err(e) => {
            use clap::error::ErrorKind::{InvalidValue, ValueValidation};
            // A value its type refuses (`--mode edge`) is one line naming it, as every refusal; clap adds a
            // pointer to --help below it.
            match e.kind() {
                InvalidValue | ValueValidation => {
                    let text = e.render().to_string();
                    eprintln!("{}", text.lines().next().unwrap_or_default());
                }
                _ => {
                    let _ = e.print();
                }
            }
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
    failure::report(run(&mut ctx, &matches))
}
