//! Legacy `barecat2archive IN OUT`: convert to zip or tar, the format taken from
//! OUT's name. Like Python barecat's, it replaces an existing OUT.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use super::common::default_workers;
use super::common::{run_export, ExportJob};
use crate::export::compress::{format_from_name, ArchiveFormat};
use crate::export::ExportFormat;

/// Convert an archive to zip or tar (legacy; use barecat-to-zip or barecat-to-tar).
#[derive(Debug, Parser)]
#[command(name = "barecat2archive", version)]
pub struct Args {
    /// The archive
    pub barecat_file: PathBuf,
    /// The output: .zip, .tar, .tar.gz/.tgz, .tar.zst/.tzst, .tar.xz/.txz or .tar.bz2/.tbz2
    pub archive_file: PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let format = match format_from_name(&args.archive_file) {
        Some(ArchiveFormat::Zip) => ExportFormat::Zip { deflate: None },
        Some(ArchiveFormat::Tar(compression)) => ExportFormat::Tar {
            compression,
            level: None,
        },
        None => crate::usage!(
            "cannot tell the format of {} from its name (use .zip, .tar, .tar.gz, .tgz, \
             .tar.zst, .tar.xz, .txz, .tar.bz2 or .tbz2)",
            args.archive_file.display()
        ),
    };
    run_export(
        "barecat2archive",
        &ExportJob {
            archive: &args.barecat_file,
            output: &args.archive_file,
            paths: &[],
            format,
            force: true,
            workers: default_workers(),
            quiet: true,
            remote: Default::default(),
            root_dir: None,
        },
    )
}
