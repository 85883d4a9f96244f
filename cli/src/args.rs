//! Command-line spellings of the library's option types: each parsed by its `FromStr`, with the accepted names
//! listed in `--help`.

use clap::Args;
use clap::builder::TypedValueParser;
use cliper::chain::{OutputOptions, Precision, named};
use cliper::{Dtype, Scale};

pub fn precision() -> impl TypedValueParser<Value = Precision> {
    named(&Precision::NAMES)
}

fn parse_dtype(text: &str) -> Result<Dtype, String> {
    Dtype::parse(text).map_err(|e| e.to_string())
}

/// How results are written (`--type`, `--scale`, `--clip`).
#[derive(Args, Clone, Debug, Default)]
pub struct OutputArgs {
    /// Element type to write (u8, u16, i16, i32, f32, f64, c32, c64, …; default: the data's own).
    #[arg(long = "type", value_name = "TYPE", value_parser = parse_dtype)]
    pub dtype: Option<Dtype>,
    /// raw: values exactly as they are (fractions or out-of-range values for an integer type are an error);
    /// round: rounded to the nearest integer first; minmax: the data's range stretched onto the type's (onto
    /// [0, 1] for float types). Default: round when a result goes back to its input's integer type, else raw.
    #[arg(long, value_parser = named::<Scale>(&Scale::NAMES))]
    pub scale: Option<Scale>,
    /// Clamp out-of-range values instead of refusing them.
    #[arg(long)]
    pub clip: bool,
}

impl OutputArgs {
    pub fn options(&self) -> OutputOptions {
        OutputOptions { dtype: self.dtype, scale: self.scale, clip: self.clip }
    }
}
