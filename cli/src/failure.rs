//! How a command fails: one error, or some files of a batch; the exit code and the one line (and hint) printed.

use std::process::ExitCode;

/// How a command fails: one error, or some files of a batch.
pub enum CliError {
    Lib(cliper::Error),
    Batch {
        failed: usize,
        total: usize,
        code: u8,
    },
    /// Exit with this code, printing nothing (another process has said why: MPI's rank 0).
    #[cfg_attr(not(feature = "mpi"), allow(dead_code))]
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
        Inexact { .. } => {
            Some("--precision double loads 32-bit integers and f64 data exactly; --precision single rounds them")
        }
        _ => None,
    }
}

/// Prints what failed (one line, and a hint where one helps) and gives the exit code.
pub fn report(result: Result<(), CliError>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(CliError::Lib(e)) => {
            let text = match &e {
                // The devices that exist are the point of this message: on the one line.
                cliper::Error::DeviceSelection { spec, available } => format!(
                    "no OpenCL device matches `{spec}`; the devices are: {}",
                    available.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ")
                ),
                _ => crate::chain::one_line(&e),
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
