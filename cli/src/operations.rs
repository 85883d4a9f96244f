//! The subcommands of the operations: one per definition the library lists (`cliper::chain::DEFINITIONS`), built
//! from it — its inputs as positionals, its parameters as flags (with their documentation and defaults), its
//! examples — and run as a one-step chain. Nothing here names an operation.

use crate::args::{self, OutputArgs};
use crate::chain::Context;
use crate::failure::CliError;
use clap::{Arg, ArgAction, ArgMatches, Args, FromArgMatches};
use cliper::chain::{Chain, Definition, Op, Precision, Step};

/// Options every operation shares.
#[derive(Args)]
pub struct Common {
    /// auto: double when an input needs it (f64, complex128, 32/64-bit integers) — integer scans, scaled or
    /// not, compute in single (a rescale f32 does not hold exactly is rounded to the nearest f32); single; double.
    #[arg(long, value_parser = args::precision(), default_value = "auto")]
    pub precision: Precision,
    #[command(flatten)]
    pub options: OutputArgs,
}

/// The ids of the input positionals and of the output (ids no parameter takes).
const INPUT_IDS: [&str; 3] = ["cliper-input-0", "cliper-input-1", "cliper-input-2"];
const OUTPUT_ID: &str = "cliper-output";

/// The subcommand of `definition`: its inputs, its parameters, its output, the options every operation shares.
pub fn subcommand(definition: &Definition) -> clap::Command {
    let inputs = definition.inputs;
    let mut command = clap::Command::new(definition.name).visible_aliases(definition.aliases);
    for (k, ((name, help), id)) in inputs.names.iter().zip(INPUT_IDS).enumerate() {
        let optional = inputs.optional && k + 1 == inputs.names.len();
        let arg = Arg::new(id).value_name(*name).help(*help).required(!optional);
        command = command.arg(if inputs.variadic { arg.num_args(2..).action(ArgAction::Append) } else { arg });
    }
    command = (definition.augment)(command);
    if inputs.prints {
        command = command.arg(
            Arg::new(OUTPUT_ID)
                .short('o')
                .long("output")
                .value_name("OUTPUT")
                .help("Save the result to a file (else it is printed)"),
        );
    } else if !inputs.variadic {
        command = command.arg(
            Arg::new(OUTPUT_ID)
                .value_name("OUTPUT")
                .help("Output file (or directory, or a name with {stem})")
                .required(true),
        );
    }
    // The options every operation shares come last in the help; the definition's about text stays the command's.
    let (about, long_about) = (command.get_about().cloned(), command.get_long_about().cloned());
    let mut command = Common::augment_args(command);
    if let Some(about) = about {
        command = command.about(about);
    }
    if let Some(long_about) = long_about {
        command = command.long_about(long_about);
    }
    command
}

/// Runs the subcommand of `definition` parsed into `matches`: the one-step chain it describes.
pub fn run(ctx: &mut Context, definition: &Definition, matches: &ArgMatches) -> Result<(), CliError> {
    let op = (definition.from_matches)(matches)?;
    let mut files: Vec<String> = INPUT_IDS
        .iter()
        .take(definition.inputs.names.len())
        .flat_map(|id| matches.get_many::<String>(id).into_iter().flatten().cloned())
        .collect();
    let output = match definition.inputs.variadic {
        // The variadic inputs' last file is the output.
        true => files.pop(),
        false => matches.get_one::<String>(OUTPUT_ID).cloned(),
    };
    if !op.takes(files.len()) {
        return Err(cliper::Error::invalid(
            op.name(),
            format!(
                "reads {} input(s) (a, b, … in order), and {} file(s) were given before the output {}",
                op.arity(),
                files.len(),
                output.unwrap_or_default()
            ),
        )
        .into());
    }
    let common = Common::from_arg_matches(matches).map_err(|e| cliper::Error::invalid(op.name(), e.to_string()))?;
    let chain = one_step(op, &files, output.as_deref(), common);
    crate::ranks::run_and_report(ctx, &chain)
}

/// A one-step chain reading `inputs` and saving its result to `output` (or printing it).
fn one_step(op: Op, inputs: &[String], output: Option<&str>, common: Common) -> Chain {
    let names: Vec<String> = match inputs.len() {
        1 => vec!["in".into()],
        2 if op.expr().is_none() => vec!["a".into(), "b".into()],
        n => (0..n).map(|k| format!("in{k}")).collect(),
    };
    let mut options = common.options.options();
    if let (None, Some((dtype, scale))) = (options.dtype, op.default_output()) {
        options.dtype = Some(dtype);
        options.scale = options.scale.or(Some(scale));
    }
    if options.dtype.is_none() && options.scale.is_none() && !options.clip && op.overshoots() {
        // Interpolated values overshoot (a cubic spline rings at edges): written back to an integer input's type
        // they are rounded and clamped to its range, as scipy.ndimage does — unless the user chose how.
        options.clip = true;
    }
    // The result is named after the operation: `norm = 5.2` when printed.
    let result = op.name().to_string();
    Chain {
        precision: common.precision,
        inputs: names.iter().cloned().zip(inputs.iter().cloned()).collect(),
        steps: vec![Step { op, inputs: names, output: result.clone() }],
        outputs: output.map(|o| vec![(result, o.to_string(), None)]).unwrap_or_default(),
        options,
    }
}
