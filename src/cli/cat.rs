//! `barecat-cat`: write stored files to standard output, CRC-checked. The paths
//! come as arguments, or as a list (`-T FILE`, or stdin) read one entry at a time,
//! so that one process can write any number of files in bounded memory.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;

use crate::Archive;

const EXAMPLES: &str = "\
Examples:
  barecat-cat data.barecat images/cat.jpg > cat.jpg
  barecat-cat data.barecat labels.txt | head
  barecat-cat data.barecat -T paths.txt > all.bin    # the files a list names
  barecat ls -R data.barecat train | barecat-cat -T - data.barecat | sha256sum
  tr '\\n' '\\0' < paths.txt | barecat-cat -0 -T - data.barecat  # NUL-terminated
  barecat-cat --stats https://example.org/data.barecat images/cat.jpg > cat.jpg

-T FILE reads more paths from FILE ('-': stdin), one per line, or NUL-terminated
with -0; empty entries are skipped. The list is read as it is written, one entry at
a time: a hundred thousand files are one process and little memory.

Every file is checked against its stored CRC32C; files up to 64 MiB are checked
before any byte is written, so a corrupt file produces no output. A path that is
missing, a directory or corrupt is reported on stderr and the next one is written.

Exit status: 0 success, 1 if a file could not be written (each one is reported),
2 usage error.";

/// Write the content of stored files to standard output.
#[derive(Debug, Parser)]
#[command(name = "barecat-cat", version, after_help = EXAMPLES)]
pub struct Args {
    /// The archive (its index file, e.g. data.barecat)
    pub archive: std::path::PathBuf,
    /// Paths inside the archive, written one after the other
    pub paths: Vec<String>,
    /// Read more paths from FILE ('-' for stdin), one per line
    #[arg(short = 'T', long, value_name = "FILE")]
    pub files_from: Option<PathBuf>,
    /// Paths in the list are terminated by NUL characters (find -print0)
    #[arg(short = '0', long)]
    pub null: bool,
    #[command(flatten)]
    pub remote: super::common::Remote,
}

/// Legacy `barecat-extract-single --barecat-file A --path P`.
#[derive(Debug, Parser)]
#[command(name = "barecat-extract-single", version, hide = true)]
pub struct LegacyArgs {
    /// The archive
    #[arg(long = "barecat-file")]
    pub barecat_file: std::path::PathBuf,
    /// Path inside the archive
    #[arg(long)]
    pub path: String,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    const PROG: &str = "barecat-cat";
    if args.paths.is_empty() && args.files_from.is_none() {
        crate::usage!("no PATH given: name files, or give a list with -T FILE (-T - for stdin)");
    }
    let _stats = args.remote.stats_guard(PROG);
    let archive = Archive::open_with(&args.archive, args.remote.open_options(false))
        .with_context(|| format!("cannot open {}", args.archive.display()))?;
    super::print_warnings(PROG, archive.warnings());
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 20, stdout.lock());
    let mut failed = 0u64;
    let mut write = |p: String| -> anyhow::Result<()> {
        let r = archive
            .file_info(&p)
            .and_then(|fi| archive.write_to(&fi, &mut out));
        match r {
            Ok(()) => Ok(()),
            // The output failing (a full disk, a closed pipe) ends the run.
            Err(e @ crate::Error::Output { .. }) => Err(e.into()),
            Err(e) => {
                eprintln!("{PROG}: {e}");
                failed += 1;
                Ok(())
            }
        }
    };
    for p in &args.paths {
        write(p.clone())?;
    }
    if let Some(list) = &args.files_from {
        crate::core::list::for_each_entry(list, args.null, &mut write)?;
    }
    out.flush()?;
    Ok(if failed > 0 {
        ExitCode::from(super::FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}

pub fn run_legacy(args: LegacyArgs) -> anyhow::Result<ExitCode> {
    run(Args {
        archive: args.barecat_file,
        paths: vec![args.path],
        files_from: None,
        null: false,
        remote: Default::default(),
    })
}
