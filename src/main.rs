//! The `cdpr` command: a thin layer that parses arguments, calls the library and prints.
#![deny(clippy::unwrap_used)]

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::main()
}
