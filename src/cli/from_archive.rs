//! `barecat-from-archive`: convert an archive in any format this suite reads into
//! a barecat archive, the format told by the file's content (never its name):
//! tar (plain or compressed) and zip through `from-tar` and `from-zip`, the
//! others (7z, rar, cpio, rpm, ISO 9660, ar/deb, xar, cab, lha) through
//! libarchive. Also holds `--name-encoding`, shared by the importers.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use super::common::{NoSidecar, Quiet, ShardLimit, Workers};
use super::ingest::{
    conclude, open_output, plain, DuplicateArgs, ModeArgs, Reporter, SelectArgs, Symlinks,
};
use crate::core::progress::Progress;
use crate::ingest::formats::{self, names, Format};
use crate::ingest::IngestOptions;

const EXAMPLES: &str = "\
Examples:
  barecat-from-archive dataset.7z data.barecat
  barecat-from-archive images.tar.lz4 data.barecat      # any compressed tar
  barecat-from-archive initrd.cpio.gz data.barecat
  barecat-from-archive package.rpm data.barecat         # the rpm's payload
  barecat-from-archive disc.iso data.barecat
  barecat-from-archive --name-encoding cp866 old.zip data.barecat

The format is told by the content, whatever the name: tar (plain, or compressed
with gzip, bzip2, xz, zstd, lz4, lzip or compress), zip (also with data before
it), 7z, rar (v4 and v5), cpio (odc, newc, crc, binary of either byte order;
plain or compressed), rpm (its cpio payload), ISO 9660 (Rock Ridge and Joliet
names), ar (and Debian packages, which are ar archives), xar, cab and lha.

Tar and zip inputs are read as barecat-from-tar and barecat-from-zip read them
(see their help; -j applies to zip). The other formats are read through
libarchive, the library of bsdtar: every regular file and hard link that bsdtar
-x extracts is stored with its bytes, mode, modification time and, where the
format keeps one, owner; directories keep their metadata. Hard links become
files holding a copy of their target. Symbolic links, devices and FIFOs are
skipped and counted (--symlinks error reports links). An encrypted member, a
member whose compression method cannot be decoded, or one whose data ends
early is reported by name (exit status 1) and not stored; damage that stops
the reader stops the conversion, after committing everything before it.

Names that are not UTF-8 (archives from Russian or Japanese systems) are
reported with a hint; --name-encoding ENC decodes them (cp866, koi8-r,
cp1251, shift_jis/cp932, euc-jp, cp437, or any WHATWG label). Zip names
without the UTF-8 flag are CP437 unless --name-encoding says otherwise.

Exit status: 0 all added, 1 some members skipped or an error, 2 usage error.";

/// `--name-encoding`: the encoding of member names that are not UTF-8.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct NameEncodingArg {
    /// Decode member names that are not valid UTF-8 from ENC (cp866, koi8-r,
    /// cp1251, shift_jis, cp932, euc-jp, cp437, or another WHATWG label); zip
    /// names without the UTF-8 flag are CP437 unless this says otherwise
    #[arg(long, value_name = "ENC", value_parser = parse_name_encoding)]
    pub name_encoding: Option<names::NameEncoding>,
}

fn parse_name_encoding(s: &str) -> Result<names::NameEncoding, String> {
    names::parse_encoding(s).ok_or_else(|| {
        format!(
            "unknown encoding '{s}' (for example: utf-8, cp437, cp866, koi8-r, cp1251, \
             shift_jis, cp932, euc-jp)"
        )
    })
}

impl NameEncodingArg {
    pub fn apply(&self, opts: &mut IngestOptions) {
        opts.name_encoding = self.name_encoding;
    }
}

/// Convert an archive in any supported format into a barecat archive.
#[derive(Debug, Parser)]
#[command(name = "barecat-from-archive", version, after_help = EXAMPLES)]
pub struct Args {
    /// The archive file (its format is told by its content), or '-' for a tar
    /// stream on standard input
    #[arg(value_name = "INPUT")]
    pub input: PathBuf,
    /// The barecat archive to create
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
    pub names: NameEncodingArg,
    #[command(flatten)]
    pub limit: ShardLimit,
    #[command(flatten)]
    pub workers: Workers,
    #[command(flatten)]
    pub quiet: Quiet,
    #[command(flatten)]
    pub sidecar: NoSidecar,
    /// Index an uncompressed tar or a stored zip where it lies instead of copying
    /// it (see barecat-from-tar --wrap); other formats are refused
    #[arg(long)]
    pub wrap: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    run_as("barecat-from-archive", args)
}

/// [`run`], naming the command `prog` in messages.
pub fn run_as(prog: &str, args: Args) -> anyhow::Result<ExitCode> {
    let format = if args.input.as_os_str() == "-" {
        Format::Tar(crate::ingest::decompress::Compression::None)
    } else {
        formats::detect(&args.input)
            .map_err(plain)?
            .ok_or_else(|| plain(formats::unknown(&args.input.display().to_string())))?
    };
    match format {
        Format::Tar(_) => super::from_tar::run_as(
            prog,
            super::from_tar::Args {
                input: args.input,
                archive: args.archive,
                symlinks: args.symlinks,
                duplicates: args.duplicates,
                mode: args.mode,
                select: args.select,
                names: args.names,
                limit: args.limit,
                quiet: args.quiet,
                sidecar: args.sidecar,
                wrap: args.wrap,
            },
        ),
        Format::Zip => super::from_zip::run_as(
            prog,
            super::from_zip::Args {
                input: args.input,
                archive: args.archive,
                symlinks: args.symlinks,
                duplicates: args.duplicates,
                mode: args.mode,
                select: args.select,
                names: args.names,
                limit: args.limit,
                workers: args.workers,
                quiet: args.quiet,
                sidecar: args.sidecar,
                wrap: args.wrap,
            },
        ),
        other => {
            if args.wrap {
                anyhow::bail!(
                    "{}: a {} archive cannot be indexed in place (--wrap takes an \
                     uncompressed tar or a stored zip); convert it without --wrap",
                    args.input.display(),
                    other.name()
                );
            }
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
            let progress = Progress::new(!quiet, "converting", None);
            let mut reporter = Reporter::new(prog, quiet, &progress);
            if args.mode.resume {
                w.trim_garbage().map_err(plain)?;
            }
            let result = formats::import_as(&mut w, &args.input, other, &opts, &mut |e| {
                reporter.event(e)
            });
            conclude(w, result, &reporter, args.mode.mode())
        }
    }
}
