//! `barecat-to-tar`: write archive contents as a tar file or stream.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use super::common::{run_export, ExportJob};
use super::common::{Quiet, Workers};
use crate::export::compress::{format_from_name, ArchiveFormat, Compression};
use crate::export::ExportFormat;

const EXAMPLES: &str = "\
Examples:
  barecat-to-tar data.barecat data.tar
  barecat-to-tar data.barecat data.tar.zst            # compression from the name
  barecat-to-tar --gzip data.barecat - > data.tgz
  barecat-to-tar data.barecat - | tar -x -C dest      # straight into tar
  barecat-to-tar data.barecat part.tar 'train/**/*.jpg'

PATH|GLOB select members as in barecat-extract (a file, a directory with its
subtree, or a Python-style glob); default: everything.

Compression: --gzip, --zstd, --xz or --bzip2, or from OUTPUT's name (.tar.gz .tgz
.tar.zst .tzst .tar.xz .txz .tar.bz2 .tbz2, any case). The tar is POSIX ustar,
with PAX headers for long names, sizes of 8 GiB or more, sub-second or
out-of-range times and large ids. Files are checked against their CRC32C before
they are written; a file that fails, or has an unsafe path, is reported and left
out. A file OUTPUT appears only when complete (-f to replace one).

Exit status: 0 success, 1 if any member was left out or the tar could not be
written, 2 usage error.";

/// Write the contents of an archive as a tar file.
#[derive(Debug, Parser)]
#[command(name = "barecat-to-tar", version, after_help = EXAMPLES)]
pub struct Args {
    /// The archive
    pub archive: PathBuf,
    /// The tar file to write, or - for standard output
    #[arg(value_name = "OUTPUT|-")]
    pub output: PathBuf,
    /// Files, directories or globs to include [default: everything]
    #[arg(value_name = "PATH|GLOB")]
    pub paths: Vec<String>,
    /// Compress with gzip
    #[arg(short = 'z', long, group = "compression")]
    pub gzip: bool,
    /// Compress with zstd
    #[arg(long, group = "compression")]
    pub zstd: bool,
    /// Compress with xz
    #[arg(short = 'J', long, group = "compression")]
    pub xz: bool,
    /// Compress with bzip2
    #[arg(long, group = "compression")]
    pub bzip2: bool,
    /// Compression level [default: the format's own: gzip 6, zstd 3, xz 6, bzip2 9]
    #[arg(long, value_name = "N")]
    pub level: Option<u32>,
    /// Replace OUTPUT if it exists
    #[arg(short, long)]
    pub force: bool,
    /// Put every member under the directory NAME/ in the tar
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
    run_as("barecat-to-tar", args)
}

/// [`run`], naming the command `prog` in messages.
pub fn run_as(prog: &str, args: Args) -> anyhow::Result<ExitCode> {
    let flag = [
        (args.gzip, Compression::Gzip),
        (args.zstd, Compression::Zstd),
        (args.xz, Compression::Xz),
        (args.bzip2, Compression::Bzip2),
    ]
    .into_iter()
    .find(|(on, _)| *on)
    .map(|(_, c)| c);
    let compression = match flag {
        Some(c) => c,
        None => match format_from_name(&args.output) {
            Some(ArchiveFormat::Tar(c)) => c,
            _ => Compression::None,
        },
    };
    if let Some(level) = args.level {
        let (lo, hi) = compression.level_range();
        if compression == Compression::None {
            crate::usage!("--level needs compression (--gzip, --zstd, --xz, --bzip2 or a compressed OUTPUT name)");
        }
        if !(lo..=hi).contains(&level) {
            crate::usage!(
                "{} levels go from {lo} to {hi}, not {level}",
                compression.name()
            );
        }
    }
    run_export(
        prog,
        &ExportJob {
            archive: &args.archive,
            output: &args.output,
            paths: &args.paths,
            format: ExportFormat::Tar {
                compression,
                level: args.level,
            },
            force: args.force,
            workers: args.workers.get(),
            quiet: args.quiet.quiet,
            remote: args.remote,
            root_dir: args.root_dir,
        },
    )
}
