//! `barecat-to-zip`: write archive contents as a zip file or stream.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use super::common::{Quiet, Workers};
use crate::export::ExportFormat;

const EXAMPLES: &str = "\
Examples:
  barecat-to-zip data.barecat data.zip                 # stored (no compression)
  barecat-to-zip --deflate data.barecat data.zip       # deflate, level 6
  barecat-to-zip --deflate=9 data.barecat data.zip train
  barecat-to-zip data.barecat - | ssh host 'cat > data.zip'

PATH|GLOB select members as in barecat-extract (a file, a directory with its
subtree, or a Python-style glob); default: everything.

The zip is written front to back with complete local headers (no data
descriptors for stored entries), so the same bytes go to a file or a pipe. Zip64
records are used where needed (entries of 4 GiB or more, more than 65,534
entries). Entries carry their CRC-32, Unix mode and the modification time in UTC
(extended timestamp field; the DOS time is UTC too). Files are checked against
their CRC32C first; a file that fails, or has an unsafe path, is reported and
left out. A file OUTPUT appears only when complete (-f to replace one).

Exit status: 0 success, 1 if any member was left out or the zip could not be
written, 2 usage error.";

/// Write the contents of an archive as a zip file.
#[derive(Debug, Parser)]
#[command(name = "barecat-to-zip", version, after_help = EXAMPLES)]
pub struct Args {
    /// The archive
    pub archive: PathBuf,
    /// The zip file to write, or - for standard output
    #[arg(value_name = "OUTPUT|-")]
    pub output: PathBuf,
    /// Files, directories or globs to include [default: everything]
    #[arg(value_name = "PATH|GLOB")]
    pub paths: Vec<String>,
    /// Compress entries with deflate, at LEVEL 1-9 [default level: 6]; entries that
    /// do not shrink are stored
    #[arg(
        long,
        value_name = "LEVEL",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "6",
        value_parser = clap::value_parser!(u32).range(1..=9)
    )]
    pub deflate: Option<u32>,
    /// Replace OUTPUT if it exists
    #[arg(short, long)]
    pub force: bool,
    /// Put every entry under the directory NAME/ in the zip
    #[arg(long, value_name = "NAME")]
    pub root_dir: Option<String>,
    #[command(flatten)]
    pub workers: Workers,
    #[command(flatten)]
    pub quiet: Quiet,
    #[command(flatten)]
    pub remote: super::common::Remote,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    run_as("barecat-to-zip", args)
}

/// [`run`], naming the command `prog` in messages.
pub fn run_as(prog: &str, args: Args) -> anyhow::Result<ExitCode> {
    super::common::run_export(
        prog,
        &super::common::ExportJob {
            archive: &args.archive,
            output: &args.output,
            paths: &args.paths,
            format: ExportFormat::Zip {
                deflate: args.deflate,
            },
            force: args.force,
            workers: args.workers.get(),
            quiet: args.quiet.quiet,
            remote: args.remote,
            root_dir: args.root_dir,
        },
    )
}
