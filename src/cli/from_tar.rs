//! `barecat-from-tar`: convert a tar archive or stream (plain, gzip, bzip2, xz,
//! zstd, lz4, lzip, compress) into a barecat archive. Also the legacy
//! `archive2barecat`.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use clap::Parser;

use super::common::{NoSidecar, Quiet, ShardLimit};
use super::ingest::{
    conclude, open_output, plain, DuplicateArgs, ModeArgs, Reporter, SelectArgs, Symlinks,
};
use crate::core::progress::Progress;
use crate::core::writer::CreateMode;
use crate::ingest::{self, formats::Format};

const EXAMPLES: &str = "\
Examples:
  barecat-from-tar dataset.tar data.barecat
  barecat-from-tar dataset.tar.zst data.barecat      # compression is detected
  barecat-from-tar images.tar.lz4 data.barecat       # also .tar.lz (lzip), .tar.Z
  curl -s https://host/shards/0001.tar | barecat-from-tar - data.barecat
  barecat-from-tar --strip-components 1 imagenet.tgz data.barecat
  barecat-from-tar -a part2.tar data.barecat         # add to an existing archive
  barecat-from-tar --duplicates last updated.tar data.barecat   # tar -r'd archive
  barecat-from-tar --wrap dataset.tar data.barecat   # index the tar in place

Members are stored in the order of the tar. Directories keep their metadata (in
whatever order they come), hard links become files with a copy of their target,
GNU and PAX sparse files are stored with their full content, members of unknown
types are stored as files (as GNU tar, bsdtar and Python's tarfile extract them).
Symbolic links, devices and FIFOs are skipped and counted (--symlinks error
reports links). Members with absolute names, '..' or names that are not UTF-8 are
reported (names shown with their bytes escaped, as ls -b does) and not stored.

Tars written by other tools over the years are read as GNU tar, bsdtar and
tarfile read them: signed header checksums (old HP-UX and V7 tars), Solaris X
extended headers, and sizes on directory, link, device and FIFO headers that have
no data behind them (or do: then the data is skipped, with a note).

Several members of one name: by default the last one is stored (what tar -x
leaves) and each duplicate is reported (exit status 1); --duplicates last does
the same with a note per duplicate, --duplicates first keeps the first, and
--duplicates error stops at the first duplicate. A replaced copy stays in the
shards as a hole (barecat-defrag reclaims it). With --resume, a path the
interrupted run stored is kept as it is.

The compression is told by the content: gzip (also several members, and bytes
after the stream, which are ignored with a note), bzip2, xz, zstd and lz4 (also
after skippable frames), lzip, compress (.Z); an lzop stream is refused with what to do.
Solaris ACL entries are metadata of the next member, never files. Names that are
not UTF-8 are reported, with a hint; --name-encoding ENC decodes them.

A damaged header is reported and reading goes on at the next valid header (as GNU
tar and bsdtar do). A tar that ends after its last complete member without the
end-of-archive blocks is read (as GNU tar, bsdtar and tarfile read it) with a
warning; --strict refuses it. A tar truncated inside a member, or a compressed
stream that cannot be decompressed, stops the conversion with an error;
everything before the damage is committed and readable.

--wrap copies nothing: the archive indexes the members where they lie in the
tar, and its shard 0 is a symbolic link to the tar (an absolute path), as Python
barecat's convert --wrap makes it (Python barecat reads it too). Unlike Python
barecat's, every file gets its CRC32C, computed while indexing, so that
barecat-verify notices a tar changed afterwards. The tar must be uncompressed;
sparse files and hard links are reported and skipped (their bytes in the tar are
not their content). No command writes through the link: appending, defrag and
reshard refuse such an archive (barecat-merge copies it into one of its own).

Exit status: 0 all added, 1 some members skipped or an error, 2 usage error.";

/// Convert a tar archive (or a tar stream on stdin) into a barecat archive.
#[derive(Debug, Parser)]
#[command(name = "barecat-from-tar", version, after_help = EXAMPLES)]
pub struct Args {
    /// The tar file, or '-' for standard input (compression is detected)
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
    pub quiet: Quiet,
    #[command(flatten)]
    pub sidecar: NoSidecar,
    /// Index the tar where it lies instead of copying its members: shard 0 of the
    /// archive becomes a link to the tar (which must stay where it is and be left
    /// unchanged), and every file gets its CRC32C. The tar must be uncompressed
    #[arg(long)]
    pub wrap: bool,
}

/// Legacy `archive2barecat IN OUT [--shard-size-limit S] [--overwrite]`: an
/// archive in any format `barecat-from-archive` reads (Python barecat's reads tar
/// and zip), added to OUT (created when missing) unless `--overwrite`.
#[derive(Debug, Parser)]
#[command(name = "archive2barecat", version, hide = true)]
pub struct LegacyArgs {
    /// The archive file (tar, zip, 7z, rar, cpio, ISO 9660, ...: told by its content)
    pub archive_file: PathBuf,
    /// The barecat archive
    pub barecat_file: PathBuf,
    #[command(flatten)]
    pub limit: ShardLimit,
    /// Replace an existing barecat archive instead of adding to it
    #[arg(long)]
    pub overwrite: bool,
}

/// Counts the bytes read from the raw input (for the progress bar).
struct Counting<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Standard input as a file of its own and the bytes left in it, when it is a
/// regular file.
fn stdin_file() -> Option<(File, u64)> {
    let f = File::from(io::stdin().as_fd().try_clone_to_owned().ok()?);
    let meta = f.metadata().ok()?;
    let pos = rustix::fs::seek(&f, rustix::fs::SeekFrom::Current(0)).ok()?;
    meta.is_file().then(|| (f, meta.len().saturating_sub(pos)))
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    run_as("barecat-from-tar", args)
}

/// [`run`], naming the command `prog` in messages.
pub fn run_as(prog: &str, args: Args) -> anyhow::Result<ExitCode> {
    let stdin = args.input.as_os_str() == "-";
    if args.wrap {
        super::wrap::refuse_options(&[
            (stdin, "standard input"),
            (args.mode.append, "-a"),
            (args.mode.resume, "--resume"),
            (args.limit.shard_size_limit.is_some(), "-s"),
        ])?;
        let mut opts = args
            .select
            .options(super::wrap::checksum_threads(), false)?;
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
    let (reader, total): (Box<dyn Read + Send>, Option<u64>) = if stdin {
        match stdin_file() {
            // `barecat-from-tar - out < x.tar`: read ahead as for a named file.
            Some((f, left)) => (Box::new(crate::core::readahead::sequential(f)), Some(left)),
            None => (Box::new(io::stdin()), None),
        }
    } else {
        let f = crate::core::readahead::open_sequential(&args.input)?;
        let len = f
            .get_ref()
            .file()
            .metadata()
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len());
        (Box::new(f), len)
    };
    let name = if stdin {
        "standard input".to_string()
    } else {
        args.input.display().to_string()
    };
    let mut opts = args.select.options(1, args.mode.resume)?;
    opts.symlinks = args.symlinks.into();
    args.duplicates.apply(&mut opts);
    args.names.apply(&mut opts);
    let mut w = open_output(
        &args.archive,
        args.sidecar.apply(
            args.select
                .writer_options(args.mode.mode(), args.limit.shard_size_limit),
        ),
    )?;
    let quiet = args.quiet.quiet;
    let progress = Progress::new(!quiet, "converting", total);
    let count = Arc::new(AtomicU64::new(0));
    let position = {
        let c = count.clone();
        move || c.load(Ordering::Relaxed)
    };
    let mut reporter = Reporter::new(prog, quiet, &progress);
    reporter.position = Some(&position);
    if args.mode.resume {
        w.trim_garbage().map_err(plain)?;
    }
    let input = Counting {
        inner: reader,
        count,
    };
    let result = ingest::import_tar(&mut w, input, &name, &opts, &mut |e| reporter.event(e));
    conclude(w, result, &reporter, args.mode.mode())
}

pub fn run_legacy(args: LegacyArgs) -> anyhow::Result<ExitCode> {
    const PROG: &str = "archive2barecat";
    let mode = if args.overwrite {
        CreateMode::Overwrite
    } else {
        CreateMode::AppendOrCreate
    };
    let opts = ingest::IngestOptions::default();
    // Any format this suite reads, told by its content (Python barecat's reads
    // tar and zip).
    let format = ingest::formats::detect(&args.archive_file)
        .map_err(plain)?
        .ok_or_else(|| {
            plain(ingest::formats::unknown(
                &args.archive_file.display().to_string(),
            ))
        })?;
    let zip = match format {
        Format::Zip => Some(ingest::ZipSource::open(&args.archive_file).map_err(plain)?),
        _ => None,
    };
    let mut w = open_output(
        &args.barecat_file,
        crate::WriterOptions {
            mode,
            shard_size_limit: args.limit.shard_size_limit,
            ..Default::default()
        },
    )?;
    let progress = Progress::new(true, "converting", None);
    let mut reporter = Reporter::new(PROG, false, &progress);
    let result = match &zip {
        Some(src) => ingest::import_zip_source(&mut w, src, &opts, &mut |e| reporter.event(e)),
        None => ingest::formats::import_as(&mut w, &args.archive_file, format, &opts, &mut |e| {
            reporter.event(e)
        }),
    };
    conclude(w, result, &reporter, mode)
}
