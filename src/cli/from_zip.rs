//! `barecat-from-zip`: convert a zip file into a barecat archive.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use super::common::{NoSidecar, Quiet, ShardLimit, Workers};
use super::ingest::{
    conclude, open_output, plain, DuplicateArgs, ModeArgs, Reporter, SelectArgs, Symlinks,
};
use crate::core::progress::Progress;
use crate::ingest;

const EXAMPLES: &str = "\
Examples:
  barecat-from-zip dataset.zip data.barecat
  barecat-from-zip -j 8 -s 10G dataset.zip data.barecat   # 8 decompressing threads
  barecat-from-zip --strip-components 1 dataset.zip data.barecat
  barecat-from-zip --wrap stored.zip data.barecat     # index a stored zip in place

Entries are stored in the order of the zip's central directory, whatever -j is.
Every compression method of the zip crate is read (stored, deflate, deflate64,
bzip2, lzma, xz, zstd, PPMd), zip64 included, also with data before the zip (a
self-extracting stub) or padding around its central directory. A deflated member
over 4 GiB written without zip64 (its size declared modulo 4 GiB) is stored whole,
its CRC-32 deciding, as bsdtar extracts it. Unix modes and owners are kept when the zip
has them; times come from the extended-timestamp field (UTC) when present, else
from the DOS time, read in the local time zone. Symbolic links are skipped and
counted (--symlinks error reports them); encrypted entries and entries that fail
their CRC check are reported and skipped.

A name ending in '/' is a directory. Names written on Windows (FAT, NTFS) with
backslashes and no slash use them as path separators: 'd\\e\\f' is stored as
d/e/f and 'd\\e\\' as the directory d/e, with a note, as unzip and bsdtar extract
them (Python's zipfile keeps the backslashes: a 0-byte file named 'd\\e\\');
elsewhere a backslash is part of the name. Names without the UTF-8 flag that are
not UTF-8 are CP437 (the zip standard's encoding), with a hint; --name-encoding
ENC decodes them from another (cp866, koi8-r, shift_jis, euc-jp, ...). Several entries of one name: the last
of each is stored (what unzip and zipfile extract) and each is reported;
--duplicates as for barecat-from-tar, except that 'first' cannot be honoured for
entries whose raw names are the same (reported).

--wrap copies nothing: the archive indexes the entries where they lie in the
zip, and its shard 0 is a symbolic link to the zip (an absolute path), as Python
barecat's convert --wrap makes it. Every file gets its CRC32C (Python barecat
stores none), and its bytes are checked against the zip's CRC-32 on the way. A
zip with compressed or encrypted entries is refused. No command writes through
the link (appending, defrag and reshard refuse such an archive).

Exit status: 0 all added, 1 some entries skipped or an error, 2 usage error.";

/// Convert a zip file into a barecat archive.
#[derive(Debug, Parser)]
#[command(name = "barecat-from-zip", version, after_help = EXAMPLES)]
pub struct Args {
    /// The zip file
    #[arg(value_name = "INPUT")]
    pub input: PathBuf,
    /// The archive to create
    #[arg(value_name = "ARCHIVE")]
    pub archive: PathBuf,
    /// What to do with symbolic links
    #[arg(long, value_enum, default_value_t = Symlinks::Skip)]
    pub symlinks: Symlinks,
    #[command(flatten)]
    pub duplicates: DuplicateArgs,
    #[command(flatten)]
    pub mode: ModeArgs,
    #[command(flatten)]
    pub select: SelectArgs,
    #[command(flatten)]
    pub names: super::from_archive::NameEncodingArg,
    #[command(flatten)]
    pub limit: ShardLimit,
    #[command(flatten)]
    pub workers: Workers,
    #[command(flatten)]
    pub quiet: Quiet,
    #[command(flatten)]
    pub sidecar: NoSidecar,
    /// Index the zip where it lies instead of copying its entries: shard 0 of the
    /// archive becomes a link to the zip (which must stay where it is and be left
    /// unchanged), and every file gets its CRC32C. Every entry must be stored
    /// (zip -0), none encrypted
    #[arg(long)]
    pub wrap: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    run_as("barecat-from-zip", args)
}

/// [`run`], naming the command `prog` in messages.
pub fn run_as(prog: &str, args: Args) -> anyhow::Result<ExitCode> {
    if args.wrap {
        super::wrap::refuse_options(&[
            (args.mode.append, "-a"),
            (args.mode.resume, "--resume"),
            (args.limit.shard_size_limit.is_some(), "-s"),
        ])?;
        let threads = args
            .workers
            .workers
            .unwrap_or_else(super::wrap::checksum_threads);
        let mut opts = args.select.options(threads, false)?;
        opts.symlinks = args.symlinks.into();
        args.duplicates.apply(&mut opts);
        args.names.apply(&mut opts);
        return super::wrap::run(
            prog,
            &args.input,
            &args.archive,
            args.mode.force,
            args.sidecar.enabled(),
            opts,
            args.quiet.quiet,
        );
    }
    let mut opts = args.select.options(args.workers.get(), args.mode.resume)?;
    opts.symlinks = args.symlinks.into();
    args.duplicates.apply(&mut opts);
    args.names.apply(&mut opts);
    let src = ingest::ZipSource::open(&args.input).map_err(plain)?;
    let mut w = open_output(
        &args.archive,
        args.sidecar.apply(
            args.select
                .writer_options(args.mode.mode(), args.limit.shard_size_limit),
        ),
    )?;
    let quiet = args.quiet.quiet;
    let progress = Progress::new(!quiet, "converting", None);
    let mut reporter = Reporter::new(prog, quiet, &progress);
    if args.mode.resume {
        w.trim_garbage().map_err(plain)?;
    }
    let result = ingest::import_zip_source(&mut w, &src, &opts, &mut |e| reporter.event(e));
    conclude(w, result, &reporter, args.mode.mode())
}
