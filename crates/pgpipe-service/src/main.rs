//! `pgpipe-service`: see `--help` and the crate docs.

use std::process::ExitCode;

use clap::Parser;
use pgpipe_service::cli::{self, ServiceArgs};

fn main() -> ExitCode {
    cli::main(ServiceArgs::parse())
}
