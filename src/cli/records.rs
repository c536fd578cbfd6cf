//! `barecat-records`: integer-indexed record datasets and record tables over
//! barecat archives (see `barecat::records` and docs/FORMAT.md).

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args as ClapArgs, Parser, Subcommand, ValueEnum};

use super::common::{parse_size_arg, Quiet};
use crate::core::progress::Progress;
use crate::core::size::human;
use crate::records::convert::{append_archive, append_files, summary_line, to_archive};
use crate::records::streams::{self, StreamFormat};
use crate::records::table::{self, BuildOptions, TableAction};
use crate::records::verify;
use crate::records::{
    Compress, DatasetOptions, Dtype, GatherOptions, RecordWriter, Records, TableOrder,
};

const EXAMPLES: &str = "\
Examples:
  barecat-records create ds.zr -C examples sample     # one record per file, in path order
  barecat-records create ds.zr --from data.barecat --compress zstd
  barecat-records append ds.zr new1.jpg new2.jpg
  barecat-records get ds.zr 7 > seven.jpg
  barecat-records gather ds.zr 3 1 3 --framing len > batch.bin
  barecat-records gather ds.zr --indices idx.txt -o out/   # out/0000, out/0001, ...
  barecat-records modify ds.zr 7 replacement.jpg
  barecat-records delete ds.zr 2 5                   # the last records take their places
  barecat-records rebalance ds.zr                    # give back the space of old versions
  barecat-records verify ds.zr
  barecat-records build data.barecat                 # data.barecat-records, no copying
  barecat-records get data.barecat 0 > first-file-by-path
  barecat-records info --json data.barecat
  barecat-records to-archive ds.zr ds.barecat        # files 0000, 0001, ...

A dataset is a directory (meta.json, offset, crc, chunk/<id>.zr); record i is one
pointer computation away through the memory-mapped offset table. Over a barecat
archive, `build` writes only the table (ARCHIVE-records): record i is the i-th file
in path order (or address order, or the order of a list), read straight from the
shards. A table that no longer matches the archive's index is refused until it is
rebuilt. Delete moves the last record into the hole: indices are not stable under
delete. The format is described in docs/FORMAT.md.";

/// Integer-indexed record datasets, and record tables over barecat archives
#[derive(Debug, Parser)]
#[command(
    name = "barecat-records",
    version,
    after_help = EXAMPLES,
    subcommand_required = true,
    arg_required_else_help = true
)]
pub struct Args {
    #[command(subcommand)]
    pub cmd: Cmd,
}

#[derive(Debug, Subcommand)]
pub enum Cmd {
    /// Create a dataset: record i is the i-th input
    Create(CreateArgs),
    /// Append records to a dataset
    Append(AppendArgs),
    /// Replace record I with the content of FILE
    Modify(ModifyArgs),
    /// Delete records (the last record takes each deleted index)
    Delete(DeleteArgs),
    /// Write the bytes of record I to standard output
    Get(GetArgs),
    /// Write records in request order to standard output or to files
    Gather(GatherArgs),
    /// Length, chunks, bytes, utilization, dtype, compression
    Info(InfoArgs),
    /// Rewrite the live records into new chunks, giving back garbage
    Rebalance(RebalanceArgs),
    /// Check every entry, chunk and checksum
    Verify(VerifyArgs),
    /// Write the record table of a barecat archive (ARCHIVE-records)
    Build(BuildArgs),
    /// Copy a dataset into a new barecat archive (files named by record index)
    ToArchive(ToArchiveArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TableOrderArg {
    /// The i-th file by path
    Path,
    /// The i-th file by (shard, offset)
    Address,
}

impl TableOrderArg {
    fn order(self) -> TableOrder {
        match self {
            TableOrderArg::Path => TableOrder::Path,
            TableOrderArg::Address => TableOrder::Address,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompressArg {
    None,
    Zstd,
    Flate,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Framing {
    /// The records back to back
    #[default]
    Raw,
    /// Each record preceded by its length, a little-endian u64
    Len,
}

fn parse_dtype(s: &str) -> Result<Dtype, String> {
    Dtype::parse(s).ok_or_else(|| format!("unknown dtype (one of {})", Dtype::names().join(", ")))
}

fn parse_writers(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=4).contains(&n) => Ok(n),
        _ => Err(format!(
            "{s:?} is not a number of writer threads between 1 and 4"
        )),
    }
}

/// Where the records of create and append come from.
#[derive(Debug, ClapArgs)]
pub struct Inputs {
    /// Files (a directory stands for its files, in path order), one record each
    pub files: Vec<PathBuf>,
    /// Read the list of inputs from LIST, one per line ('-' for standard input);
    /// with --from, paths inside the archive
    #[arg(short = 'T', long = "files-from", value_name = "LIST")]
    pub list: Option<PathBuf>,
    /// Read inputs relative to DIR
    #[arg(short = 'C', long = "directory", value_name = "DIR")]
    pub directory: Option<PathBuf>,
    /// Read records from FILE ('-' for standard input), each preceded by its length
    /// as a little-endian u64 (what `gather --framing len` writes)
    #[arg(long, value_name = "FILE")]
    pub framed: Option<PathBuf>,
    /// Writer threads, each bound to its own chunk (1 to 4)
    #[arg(short = 'j', long = "writers", value_name = "N", default_value_t = 1, value_parser = parse_writers)]
    pub writers: usize,
    #[command(flatten)]
    pub commits: CommitOpts,
}

/// Hidden options for the crash tests: commit after every N operations and say so.
#[derive(Debug, Clone, Copy, Default, ClapArgs)]
pub struct CommitOpts {
    /// Commit after every N operations (for tests)
    #[arg(long, hide = true, value_name = "N")]
    pub commit_every: Option<u64>,
    /// Print `committed K` on standard output after each commit (for tests)
    #[arg(long, hide = true)]
    pub print_commits: bool,
}

impl CommitOpts {
    /// Called after operation number `k` (1-based).
    fn after_op(&self, w: &mut RecordWriter, k: u64) -> crate::Result<()> {
        if let Some(n) = self.commit_every {
            if n > 0 && k.is_multiple_of(n) {
                w.commit()?;
                if self.print_commits {
                    let mut o = io::stdout().lock();
                    writeln!(o, "committed {k}")
                        .and_then(|()| o.flush())
                        .map_err(crate::Error::output)?;
                }
            }
        }
        Ok(())
    }
}

#[derive(Debug, ClapArgs)]
pub struct CreateArgs {
    /// The dataset directory to create
    pub dir: PathBuf,
    #[command(flatten)]
    pub inputs: Inputs,
    /// Copy the files of this barecat archive (in --order, or the order of -T LIST)
    #[arg(long, value_name = "ARCHIVE")]
    pub from: Option<PathBuf>,
    /// The order of the files of --from
    #[arg(long, value_enum, default_value_t = TableOrderArg::Path, requires = "from")]
    pub order: TableOrderArg,
    /// How each record is stored
    #[arg(long, value_enum, default_value_t = CompressArg::None)]
    pub compress: CompressArg,
    /// Records per chunk
    #[arg(long, value_name = "N", default_value_t = crate::records::format::CHUNK_RECORDS)]
    pub chunk_size: u64,
    /// Bytes per chunk at most (a larger record gets a chunk of its own)
    #[arg(long, value_name = "SIZE", value_parser = parse_size_arg)]
    pub chunk_bytes: Option<u64>,
    /// The element type of the records (bytes, u8, i16, f32, ...)
    #[arg(long, value_name = "T", default_value = "bytes", value_parser = parse_dtype)]
    pub dtype: Dtype,
    /// Replace an existing dataset
    #[arg(short, long)]
    pub force: bool,
    #[command(flatten)]
    pub quiet: Quiet,
}

#[derive(Debug, ClapArgs)]
pub struct AppendArgs {
    /// The dataset
    pub dir: PathBuf,
    #[command(flatten)]
    pub inputs: Inputs,
    #[command(flatten)]
    pub quiet: Quiet,
}

#[derive(Debug, ClapArgs)]
pub struct ModifyArgs {
    /// The dataset
    pub dir: PathBuf,
    /// A record index and the file with its new content ('-' for standard input),
    /// then more pairs
    #[arg(required = true, value_name = "I FILE")]
    pub pairs: Vec<String>,
    #[command(flatten)]
    pub commits: CommitOpts,
}

#[derive(Debug, ClapArgs)]
pub struct DeleteArgs {
    /// The dataset
    pub dir: PathBuf,
    /// Record indices as they are before the command (deleted from the highest
    /// down; the last record moves into each hole)
    #[arg(required_unless_present = "indices_file")]
    pub indices: Vec<u64>,
    /// Read more indices from FILE (decimal integers separated by white space;
    /// '-' for standard input)
    #[arg(long = "indices", value_name = "FILE")]
    pub indices_file: Option<PathBuf>,
    #[command(flatten)]
    pub commits: CommitOpts,
    #[command(flatten)]
    pub quiet: Quiet,
}

#[derive(Debug, ClapArgs)]
pub struct GetArgs {
    /// A dataset directory or a barecat archive with a record table
    pub source: PathBuf,
    /// The record index
    pub index: u64,
    /// Do not check the record against its stored CRC32C
    #[arg(long)]
    pub no_check: bool,
    #[command(flatten)]
    pub remote: super::common::Remote,
}

#[derive(Debug, ClapArgs)]
pub struct GatherArgs {
    /// A dataset directory or a barecat archive with a record table
    pub source: PathBuf,
    /// Record indices, in the order wanted (repeats allowed)
    pub indices: Vec<u64>,
    /// Read more indices from FILE (decimal integers separated by white space;
    /// '-' for standard input)
    #[arg(long = "indices", value_name = "FILE")]
    pub indices_file: Option<PathBuf>,
    /// Write one file per requested position into OUTDIR, named by the position
    /// zero-padded to a common width (name order is request order)
    #[arg(short, long, value_name = "OUTDIR")]
    pub output: Option<PathBuf>,
    /// How records are framed on standard output
    #[arg(long, value_enum, default_value_t = Framing::Raw, conflicts_with = "output")]
    pub framing: Framing,
    /// Print `position index length crc32c` for each record instead of its bytes
    #[arg(long, conflicts_with_all = ["output", "framing"])]
    pub crc: bool,
    /// Print one line instead of the records: their number, total length and the
    /// CRC32C of all their bytes in request order (every byte is read)
    #[arg(long, conflicts_with_all = ["output", "framing", "crc"])]
    pub digest: bool,
    /// Do not check records against their stored CRC32C
    #[arg(long)]
    pub no_check: bool,
    /// Reader threads [default: the number of cores]
    #[arg(short = 'j', long = "workers", value_name = "N")]
    pub workers: Option<usize>,
    /// Replace files that exist in OUTDIR
    #[arg(short, long, requires = "output")]
    pub force: bool,
    #[command(flatten)]
    pub quiet: Quiet,
    #[command(flatten)]
    pub remote: super::common::Remote,
}

#[derive(Debug, ClapArgs)]
pub struct InfoArgs {
    /// A dataset directory or a barecat archive with a record table
    pub source: PathBuf,
    /// Print one JSON document
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub remote: super::common::Remote,
}

#[derive(Debug, ClapArgs)]
pub struct RebalanceArgs {
    /// The dataset
    pub dir: PathBuf,
    /// Print the report as one JSON document
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub quiet: Quiet,
}

#[derive(Debug, ClapArgs)]
pub struct VerifyArgs {
    /// A dataset directory or a barecat archive with a record table
    pub source: PathBuf,
    /// Print the report as one JSON document
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub quiet: Quiet,
}

#[derive(Debug, ClapArgs)]
pub struct BuildArgs {
    /// The barecat archive
    pub archive: PathBuf,
    /// Record i is the i-th file in this order
    #[arg(long, value_enum, default_value_t = TableOrderArg::Path, conflicts_with = "list")]
    pub order: TableOrderArg,
    /// Record i is the i-th path of LIST (one per line, '-' for standard input)
    #[arg(short = 'T', long = "files-from", value_name = "LIST")]
    pub list: Option<PathBuf>,
    /// Check every record against the index and store the index's current stamp
    /// (after a write that changed no file, opening is cheap again)
    #[arg(long, conflicts_with_all = ["list", "remove"])]
    pub restamp: bool,
    /// Remove the archive's record table
    #[arg(long, conflicts_with = "list")]
    pub remove: bool,
    /// Print the report as one JSON document
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub quiet: Quiet,
}

#[derive(Debug, ClapArgs)]
pub struct ToArchiveArgs {
    /// The dataset (or a barecat archive with a record table)
    pub source: PathBuf,
    /// The barecat archive to create
    pub archive: PathBuf,
    /// Put PREFIX before every file name (e.g. "train/")
    #[arg(long, default_value = "")]
    pub prefix: String,
    /// Replace an existing archive
    #[arg(short, long)]
    pub force: bool,
    #[command(flatten)]
    pub quiet: Quiet,
}

const PROG: &str = "barecat-records";

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.cmd {
        Cmd::Create(a) => create(a),
        Cmd::Append(a) => append(a),
        Cmd::Modify(a) => modify(a),
        Cmd::Delete(a) => delete(a),
        Cmd::Get(a) => get(a),
        Cmd::Gather(a) => gather(a),
        Cmd::Info(a) => info(a),
        Cmd::Rebalance(a) => rebalance(a),
        Cmd::Verify(a) => verify_cmd(a),
        Cmd::Build(a) => build(a),
        Cmd::ToArchive(a) => to_archive_cmd(a),
    }
}

/// Say on stdout what a command did with an archive's record table.
pub fn print_table_action(archive: &Path, a: Option<TableAction>) {
    match a {
        Some(TableAction::Rebuilt) => {
            let _ = writeln!(io::stdout(), "{}: record table rebuilt", archive.display());
        }
        Some(TableAction::Removed) => {
            let _ = writeln!(
                io::stdout(),
                "{}: record table removed (it was in the order of a list; build it again with -T)",
                archive.display()
            );
        }
        None => {}
    }
}

/// Lines of a list file ('-' = standard input); empty lines are skipped.
/// The lines of the list at `path` (`-` for stdin), without a `\r` before the `\n`.
fn read_list(path: &Path) -> anyhow::Result<Vec<String>> {
    let mut out = crate::core::list::read_entries(path, false)?;
    for l in &mut out {
        if l.ends_with('\r') {
            l.pop();
        }
    }
    out.retain(|l| !l.is_empty());
    Ok(out)
}

fn resolve(dir: &Option<PathBuf>, p: &Path) -> PathBuf {
    match dir {
        Some(d) => d.join(p),
        None => p.to_path_buf(),
    }
}

/// Append every input of `inputs` (and of `--from`) to `w`.
fn add_inputs(
    w: &mut RecordWriter,
    inputs: &Inputs,
    from: Option<(&Path, TableOrder)>,
    progress: &Progress,
) -> anyhow::Result<u64> {
    let list = match &inputs.list {
        Some(l) => Some(read_list(l)?),
        None => None,
    };
    let mut n = 0;
    if let Some((archive, order)) = from {
        let (order, list) = match list {
            Some(l) => (TableOrder::List, l),
            None => (order, Vec::new()),
        };
        n += append_archive(w, archive, order, &list, progress)
            .with_context(|| format!("cannot copy {}", archive.display()))?;
        return Ok(n);
    }
    let mut paths: Vec<PathBuf> = inputs
        .files
        .iter()
        .map(|p| resolve(&inputs.directory, p))
        .collect();
    if let Some(l) = list {
        paths.extend(l.iter().map(|p| resolve(&inputs.directory, Path::new(p))));
    }
    n += append_files(w, &paths, progress)?;
    if let Some(f) = &inputs.framed {
        let input = streams::open_input(f)?;
        n += streams::append_framed(w, input, f, progress, &mut |w, n| {
            inputs.commits.after_op(w, n)
        })?;
    }
    Ok(n)
}

fn create(a: CreateArgs) -> anyhow::Result<ExitCode> {
    if a.from.is_some() && (!a.inputs.files.is_empty() || a.inputs.framed.is_some()) {
        crate::usage!("--from takes no other inputs (use -T LIST for paths inside the archive)");
    }
    let opts = DatasetOptions {
        dtype: a.dtype,
        compress: match a.compress {
            CompressArg::None => Compress::None,
            CompressArg::Zstd => Compress::Zstd,
            CompressArg::Flate => Compress::Flate,
        },
        chunk_records: a.chunk_size.max(1),
        chunk_bytes: a.chunk_bytes.unwrap_or(crate::records::format::CHUNK_BYTES),
        writers: a.inputs.writers,
        ..DatasetOptions::default()
    };
    let progress = Progress::new(super::show_progress(a.quiet.quiet), "creating", None);
    let mut w = RecordWriter::create(&a.dir, &opts, a.force)
        .with_context(|| format!("cannot create {}", a.dir.display()))?;
    let from = a.from.as_deref().map(|f| (f, a.order.order()));
    add_inputs(&mut w, &a.inputs, from, &progress)?;
    finish_writer(w, &a.dir, a.quiet, &progress)
}

/// Finish a writer and print its summary (unless quiet).
fn finish_writer(
    w: RecordWriter,
    dir: &Path,
    quiet: Quiet,
    progress: &Progress,
) -> anyhow::Result<ExitCode> {
    let s = w.finish()?;
    progress.finish();
    if !quiet.quiet {
        writeln!(io::stdout(), "{}: {}", dir.display(), summary_line(&s))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn append(a: AppendArgs) -> anyhow::Result<ExitCode> {
    if a.inputs.files.is_empty() && a.inputs.list.is_none() && a.inputs.framed.is_none() {
        crate::usage!("nothing to append (give FILEs, -T LIST or --framed FILE)");
    }
    let progress = Progress::new(super::show_progress(a.quiet.quiet), "appending", None);
    let mut w = RecordWriter::open(&a.dir, a.inputs.writers)?;
    add_inputs(&mut w, &a.inputs, None, &progress)?;
    finish_writer(w, &a.dir, a.quiet, &progress)
}

fn modify(a: ModifyArgs) -> anyhow::Result<ExitCode> {
    if !a.pairs.len().is_multiple_of(2) {
        crate::usage!("modify takes pairs of a record index and a file");
    }
    let mut ops = Vec::new();
    for p in a.pairs.chunks(2) {
        let Ok(i) = p[0].parse::<u64>() else {
            crate::usage!("{:?} is not a record index (a non-negative integer)", p[0]);
        };
        ops.push((i, PathBuf::from(&p[1])));
    }
    let mut w = RecordWriter::open(&a.dir, 1)?;
    for (k, (i, file)) in ops.iter().enumerate() {
        let mut data = Vec::new();
        streams::open_input(file)?
            .read_to_end(&mut data)
            .with_context(|| format!("cannot read {}", file.display()))?;
        w.modify(*i, &data)?;
        a.commits.after_op(&mut w, k as u64 + 1)?;
    }
    w.finish()?;
    Ok(ExitCode::SUCCESS)
}

fn delete(a: DeleteArgs) -> anyhow::Result<ExitCode> {
    let mut idx = a.indices.clone();
    if let Some(f) = &a.indices_file {
        idx.extend(streams::read_indices(f)?);
    }
    let mut w = RecordWriter::open(&a.dir, 1)?;
    w.delete_many(&idx, &mut |w, k| a.commits.after_op(w, k))?;
    let s = w.finish()?;
    if !a.quiet.quiet {
        writeln!(io::stdout(), "{}: {}", a.dir.display(), summary_line(&s))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn open_records(p: &Path, remote: &super::common::Remote) -> anyhow::Result<Records> {
    let opts = crate::records::OpenOptions {
        index_mode: remote.index_mode,
        ..Default::default()
    };
    let r = Records::open_with(p, opts).with_context(|| format!("cannot open {}", p.display()))?;
    super::print_warnings(PROG, r.warnings());
    Ok(r)
}

fn get(a: GetArgs) -> anyhow::Result<ExitCode> {
    let _stats = a.remote.stats_guard(PROG);
    let r = open_records(&a.source, &a.remote)?;
    let rec = if a.no_check {
        r.get(a.index)?
    } else {
        r.get_checked(a.index)?
    };
    let mut out = io::stdout().lock();
    out.write_all(&rec)?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Indices from the command line and the indices file.
fn all_indices(a: &GatherArgs) -> anyhow::Result<Vec<u64>> {
    let mut idx = a.indices.clone();
    if let Some(f) = &a.indices_file {
        idx.extend(streams::read_indices(f)?);
    }
    Ok(idx)
}

fn gather(a: GatherArgs) -> anyhow::Result<ExitCode> {
    let _stats = a.remote.stats_guard(PROG);
    let r = open_records(&a.source, &a.remote)?;
    let idx = all_indices(&a)?;
    for &i in &idx {
        if i >= r.len() {
            return Err(crate::Error::RecordOutOfRange {
                path: a.source.clone(),
                index: i,
                len: r.len(),
            }
            .into());
        }
    }
    let opts = GatherOptions {
        threads: a.workers.unwrap_or(0),
        prefetch: idx.len() >= 1024,
        verify_crc: !a.no_check && !a.crc,
    };
    let progress = Progress::new(super::show_progress(a.quiet.quiet), "gathering", None);
    if let Some(dir) = &a.output {
        streams::gather_to_dir(&r, &idx, &opts, dir, a.force, &progress)?;
        progress.finish();
        return Ok(ExitCode::SUCCESS);
    }
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 20, stdout.lock());
    if a.digest {
        let d = streams::gather_digest(&r, &idx, &opts, &progress)?;
        writeln!(out, "{} {} {:08x}", d.records, d.bytes, d.crc32c)?;
        out.flush()?;
        progress.finish();
        return Ok(ExitCode::SUCCESS);
    }
    let format = if a.crc {
        StreamFormat::Crcs
    } else if a.framing == Framing::Len {
        StreamFormat::Framed
    } else {
        StreamFormat::Bare
    };
    streams::gather_to_stream(&r, &idx, &opts, &mut out, format, &progress)?;
    out.flush()?;
    progress.finish();
    Ok(ExitCode::SUCCESS)
}

fn info(a: InfoArgs) -> anyhow::Result<ExitCode> {
    let _stats = a.remote.stats_guard(PROG);
    let r = open_records(&a.source, &a.remote)?;
    let i = verify::info(&r)?;
    if a.json {
        writeln!(io::stdout(), "{}", serde_json::to_string_pretty(&i)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    writeln!(io::stdout(), "{} ({})", i.path, i.kind)?;
    writeln!(io::stdout(), "records:     {}", i.length)?;
    if let Some(o) = i.order {
        writeln!(io::stdout(), "order:       {o}")?;
    }
    writeln!(io::stdout(), "dtype:       {}", i.dtype)?;
    writeln!(io::stdout(), "compress:    {}", i.compress)?;
    writeln!(
        io::stdout(),
        "chunks:      {} ({} in use)",
        i.utilization.chunks,
        human(i.utilization.chunk_bytes)
    )?;
    if let (Some(n), Some(b)) = (i.chunk_records, i.chunk_max_bytes) {
        writeln!(io::stdout(), "chunk limit: {n} records, {}", human(b))?;
    }
    writeln!(
        io::stdout(),
        "live bytes:  {}",
        human(i.utilization.live_bytes)
    )?;
    writeln!(
        io::stdout(),
        "utilization: {:.1}%",
        i.utilization.ratio * 100.0
    )?;
    Ok(ExitCode::SUCCESS)
}

fn rebalance(a: RebalanceArgs) -> anyhow::Result<ExitCode> {
    let w = RecordWriter::open(&a.dir, 1)?;
    let progress = Progress::new(super::show_progress(a.quiet.quiet), "rebalancing", None);
    let rep = w.rebalance(&progress)?;
    progress.finish();
    if a.json {
        writeln!(io::stdout(), "{}", serde_json::to_string_pretty(&rep)?)?;
    } else if !a.quiet.quiet {
        writeln!(
            io::stdout(),
            "{}: {} records; utilization {:.1}% -> {:.1}% ({} -> {} in {} -> {} chunks)",
            a.dir.display(),
            rep.records,
            rep.before.ratio * 100.0,
            rep.after.ratio * 100.0,
            human(rep.before.chunk_bytes),
            human(rep.after.chunk_bytes),
            rep.before.chunks,
            rep.after.chunks
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn verify_cmd(a: VerifyArgs) -> anyhow::Result<ExitCode> {
    let progress = Progress::new(super::show_progress(a.quiet.quiet), "verifying", None);
    let rep = verify::verify(&a.source, &progress)
        .with_context(|| format!("cannot verify {}", a.source.display()))?;
    progress.finish();
    if a.json {
        writeln!(io::stdout(), "{}", serde_json::to_string_pretty(&rep)?)?;
    } else {
        for p in &rep.problems {
            eprintln!("{PROG}: {p}");
        }
        for w in &rep.warnings {
            eprintln!("{PROG}: warning: {w}");
        }
        if !a.quiet.quiet {
            writeln!(
                io::stdout(),
                "{}: {} records checked, {} problem(s){}",
                rep.path,
                rep.checked_records,
                rep.problems.len(),
                if rep.records_without_crc > 0 {
                    format!(", {} without a stored CRC", rep.records_without_crc)
                } else {
                    String::new()
                }
            )?;
        }
    }
    Ok(if rep.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(super::FAILURE)
    })
}

fn build(a: BuildArgs) -> anyhow::Result<ExitCode> {
    let ctx = || format!("cannot build the record table of {}", a.archive.display());
    if a.remove {
        let had = table::remove_table(&a.archive)?;
        if !a.quiet.quiet {
            writeln!(
                io::stdout(),
                "{}: {}",
                a.archive.display(),
                if had {
                    "record table removed"
                } else {
                    "had no record table"
                }
            )?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if a.restamp {
        let f = table::restamp(&a.archive).with_context(ctx)?;
        if a.json {
            writeln!(
                io::stdout(),
                "{}",
                serde_json::json!({"archive": a.archive, "restamp": f})
            )?;
        } else if !a.quiet.quiet {
            writeln!(
                io::stdout(),
                "{}: record table matches the index; stamp stored",
                a.archive.display()
            )?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let opts = match &a.list {
        Some(l) => BuildOptions {
            order: TableOrder::List,
            list: read_list(l)?,
        },
        None => BuildOptions {
            order: a.order.order(),
            list: Vec::new(),
        },
    };
    let progress = Progress::new(super::show_progress(a.quiet.quiet), "indexing", None);
    let rep = table::build(&a.archive, &opts, &progress).with_context(ctx)?;
    progress.finish();
    if a.json {
        writeln!(io::stdout(), "{}", serde_json::to_string_pretty(&rep)?)?;
    } else if !a.quiet.quiet {
        writeln!(
            io::stdout(),
            "{}: {} records ({}) in {} order",
            rep.table.display(),
            rep.records,
            human(rep.bytes),
            rep.order.name()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn to_archive_cmd(a: ToArchiveArgs) -> anyhow::Result<ExitCode> {
    let r = open_records(&a.source, &Default::default())?;
    let progress = Progress::new(super::show_progress(a.quiet.quiet), "copying", None);
    let rep = to_archive(&r, &a.archive, &a.prefix, a.force, &progress)
        .with_context(|| format!("cannot write {}", a.archive.display()))?;
    progress.finish();
    if !a.quiet.quiet {
        writeln!(
            io::stdout(),
            "{}: {} files ({}), names {}{} to {}{}",
            rep.archive.display(),
            rep.files,
            human(rep.bytes),
            a.prefix,
            "0".repeat(rep.width),
            a.prefix,
            r.len().saturating_sub(1)
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
