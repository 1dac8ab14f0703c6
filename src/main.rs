//! The `cdpr` command: a thin layer that parses arguments, calls the library and prints.

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    cli::main()
}
