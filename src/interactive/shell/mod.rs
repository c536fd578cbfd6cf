//! `barecat shell`: an interactive shell over an archive, with Python barecat's
//! commands and their output (`cd`, `pwd`, `ls`, `lss`, `tree`, `cat`, `head`,
//! `stat`, `find`, `du`, `lcd`, `lpwd`, `lls`, `get`, `mget`, `put`, `mput`, `rm`,
//! `mv`, `info`, `sql`, `help`, `quit`/`exit`, `!CMD`, `.CMD`).
//!
//! [`Shell`] is the command interpreter: it keeps the current directories (in the
//! archive and on the local file system), runs one line at a time and writes what
//! the command prints; [`repl`] reads lines with editing, history and completion.
//! The listing commands are the library's Python-compatible ones
//! ([`crate::listing`], [`crate::maint::du`]).
//!
//! Where this shell differs from Python barecat's, on purpose:
//! * messages about failures go to stderr, and a command that fails makes
//!   `barecat shell -c` exit with status 1 (Python prints them on stdout and exits
//!   0); `-c` takes several commands separated by `;`;
//! * an argument of `cat`, `head`, `stat`, `get` or `rm` that names nothing but has
//!   wildcards is a glob, and the command runs on every match;
//! * `tree` counts in the singular where there is one (`1 directory`), and `find`,
//!   `du` and `tree` of a path that does not exist say so (docs/FORMAT.md §11.20);
//! * `stat` of a file whose CRC is 0 (an empty file) shows it (Python shows
//!   `(none)`);
//! * writes (`put`, `mput`, `rm`, `mv`, and `sql` with `-w`) are each one
//!   transaction, committed when the command ends, so a kill leaves the archive as
//!   it was before the command or after it.

pub mod lss;
pub mod repl;

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::core::archive::walk::{WalkEvent, WalkOptions};
use crate::core::archive::Archive;
use crate::core::entry::{Entry, Meta};
use crate::core::error::{Error, Result};
use crate::core::glob::has_wildcards;
use crate::core::index::Index;
use crate::core::path as mpath;
use crate::listing;
use crate::maint::du::{du, DuOptions};

/// Every command, with its help line (Python's docstrings).
pub const COMMANDS: &[(&str, &str)] = &[
    ("EOF", "Exit on Ctrl-D"),
    ("cat", "Print file contents: cat <path>"),
    ("cd", "Change directory: cd [path]"),
    ("du", "Show disk usage: du [-a] [-s] [-H] [-d N] [path]"),
    ("exit", "Exit the shell"),
    (
        "find",
        "Find files like /usr/bin/find: find [path] [-name PAT] [-type f|d] [-size [+-]N] [-maxdepth N]",
    ),
    ("get", "Extract file: get <archive_path> [local_dest]"),
    ("head", "Print first N bytes: head [-n N] <path>"),
    (
        "help",
        "List available commands with \"help\" or detailed help with \"help cmd\".",
    ),
    ("info", "Show archive info"),
    ("lcd", "Change local directory: lcd [path]"),
    ("lls", "List local directory: lls [path]"),
    ("lpwd", "Print local working directory"),
    ("ls", "List directory contents: ls [-l] [-R] [path_or_glob]"),
    ("lss", "List with sequence summarization: lss [path]"),
    (
        "mget",
        "Extract files matching pattern: mget <pattern> [local_dest]",
    ),
    ("mput", "Add files matching glob: mput <pattern> [archive_dir]"),
    ("mv", "Rename/move file in archive: mv <old> <new>"),
    ("put", "Add file to archive: put <local_path> [archive_path]"),
    ("pwd", "Print working directory"),
    ("quit", "Exit the shell"),
    ("rm", "Remove file from archive: rm <path>"),
    ("sql", "Execute SQL query: sql <query>"),
    ("stat", "Show file/directory metadata: stat <path>"),
    ("tree", "Show directory tree: tree [-L N] [-d] [path]"),
];

/// Commands whose arguments complete to directories of the archive only.
pub const COMPLETE_DIRS: &[&str] = &["cd", "tree", "lss"];
/// Commands whose arguments complete to any path of the archive.
pub const COMPLETE_PATHS: &[&str] = &["ls", "cat", "head", "stat", "du", "get", "rm", "mv", "find"];

/// What running a line came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// The command ran.
    Ok,
    /// The command failed (its message was printed).
    Failed,
    /// `quit`, `exit`, end of input.
    Quit,
}

/// Split a `-c` argument into commands at `;` outside quotes.
pub fn split_commands(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in s.chars() {
        if escaped {
            cur.push(c);
            escaped = false;
            continue;
        }
        match (c, quote) {
            ('\\', q) if q != Some('\'') => {
                escaped = true;
                cur.push(c);
            }
            ('\'' | '"', None) => {
                quote = Some(c);
                cur.push(c);
            }
            (c, Some(q)) if c == q => {
                quote = None;
                cur.push(c);
            }
            (';', None) => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out.into_iter()
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
        .collect()
}

/// Split arguments as Python's `shlex.split` does (quotes, backslashes); on an
/// unbalanced quote, at white space.
pub fn split_args(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut any = false;
    let mut chars = s.chars();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match quote {
            Some('\'') => {
                if c == '\'' {
                    quote = None;
                } else {
                    cur.push(c);
                }
            }
            Some(_) => match c {
                '"' => quote = None,
                '\\' => match chars.next() {
                    Some(n @ ('"' | '\\' | '$' | '`')) => cur.push(n),
                    Some(n) => {
                        cur.push('\\');
                        cur.push(n);
                    }
                    None => return s.split_whitespace().map(str::to_string).collect(),
                },
                _ => cur.push(c),
            },
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    any = true;
                }
                '\\' => match chars.next() {
                    Some(n) => {
                        cur.push(n);
                        any = true;
                    }
                    None => return s.split_whitespace().map(str::to_string).collect(),
                },
                c if c.is_whitespace() => {
                    if any || !cur.is_empty() {
                        out.push(std::mem::take(&mut cur));
                        any = false;
                    }
                }
                _ => cur.push(c),
            },
        }
    }
    if quote.is_some() {
        return s.split_whitespace().map(str::to_string).collect();
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Lay out `words` in columns as Python's `cmd.Cmd.columnize` does.
pub fn columnize(words: &[&str], width: usize) -> Vec<String> {
    let size = words.len();
    if size == 0 {
        return vec!["<empty>".into()];
    }
    if size == 1 {
        return vec![words[0].to_string()];
    }
    let mut layout = None;
    for nrows in 1..size {
        let ncols = size.div_ceil(nrows);
        let mut widths = Vec::new();
        let mut total: isize = -2;
        for col in 0..ncols {
            let w = (0..nrows)
                .map(|r| r + nrows * col)
                .take_while(|&i| i < size)
                .map(|i| words[i].chars().count())
                .max()
                .unwrap_or(0);
            widths.push(w);
            total += w as isize + 2;
            if total > width as isize {
                break;
            }
        }
        if total <= width as isize {
            layout = Some((nrows, ncols, widths));
            break;
        }
    }
    let (nrows, ncols, widths) = layout.unwrap_or((size, 1, vec![0]));
    let mut out = Vec::new();
    for row in 0..nrows {
        let mut texts: Vec<String> = (0..ncols)
            .map(|col| {
                words
                    .get(row + nrows * col)
                    .copied()
                    .unwrap_or("")
                    .to_string()
            })
            .collect();
        while texts.last().is_some_and(|t| t.is_empty()) {
            texts.pop();
        }
        let n = texts.len();
        for (col, t) in texts.iter_mut().enumerate().take(n) {
            let w = widths.get(col).copied().unwrap_or(0);
            let len = t.chars().count();
            if len < w {
                t.push_str(&" ".repeat(w - len));
            }
        }
        out.push(texts.join("  "));
    }
    out
}

/// The shell's state: the archive, and where it stands in it and on disk.
pub struct Shell {
    /// The archive as named on the command line (shown by `info`).
    name: String,
    path: PathBuf,
    archive: Archive,
    writable: bool,
    cwd: String,
    local_cwd: PathBuf,
}

/// Where output goes: stdout for what a command prints, stderr for its
/// complaints.
pub struct Io<'a> {
    /// Where commands print their output.
    pub out: &'a mut dyn Write,
    /// Where commands print their complaints.
    pub err: &'a mut dyn Write,
}

fn wr(e: std::io::Error) -> Error {
    Error::io("<output>", e)
}

macro_rules! say {
    ($io:expr, $($t:tt)*) => { writeln!($io.out, $($t)*).map_err(wr)? };
}
macro_rules! fail {
    ($io:expr, $($t:tt)*) => {{
        writeln!($io.err, $($t)*).map_err(wr)?;
        return Ok(Status::Failed);
    }};
}

impl Shell {
    /// Open the archive at `path` (`writable`: `put`, `rm`, `mv` and writing SQL
    /// are allowed).
    pub fn open(path: &Path, writable: bool) -> Result<Shell> {
        let archive = Archive::open(path)?;
        if writable {
            // Fail now, as Python does, rather than at the first write.
            crate::edit::open_writer(path, false)?.finish()?;
        }
        let local_cwd = std::env::current_dir().map_err(|e| Error::io(".", e))?;
        Ok(Shell {
            name: path.display().to_string(),
            path: path.to_path_buf(),
            archive,
            writable,
            cwd: String::new(),
            local_cwd,
        })
    }

    /// The archive the shell works on.
    pub fn archive(&self) -> &Archive {
        &self.archive
    }

    /// The prompt: `barecat:/dir> `.
    pub fn prompt(&self) -> String {
        format!("barecat:/{}> ", self.cwd)
    }

    /// The directory in the archive that a relative path starts from.
    pub fn cwd(&self) -> &str {
        &self.cwd
    }

    /// An archive path as typed, made absolute and normalized.
    pub fn resolve(&self, p: &str) -> String {
        if p.is_empty() {
            self.cwd.clone()
        } else if p.starts_with('/') {
            mpath::normalize(p)
        } else {
            mpath::normalize(&mpath::join(&self.cwd, p))
        }
    }

    fn resolve_local(&self, p: &str) -> PathBuf {
        if p.is_empty() {
            self.local_cwd.clone()
        } else if Path::new(p).is_absolute() {
            PathBuf::from(p)
        } else {
            self.local_cwd.join(p)
        }
    }

    fn reopen(&mut self) -> Result<()> {
        self.archive = Archive::open(&self.path)?;
        Ok(())
    }

    /// Files named by an operand: the file itself, or the files matching it when
    /// it names nothing and has wildcards.
    fn files_named(&self, path: &str) -> Result<Vec<String>> {
        if self.archive.with_index(|i| i.is_file(path))? {
            return Ok(vec![path.to_string()]);
        }
        if !has_wildcards(path) || self.archive.with_index(|i| i.is_dir(path))? {
            return Ok(vec![]);
        }
        let mut out = Vec::new();
        for e in listing::pyglob::matches(&self.archive, path)? {
            if let Entry::File(f) = e? {
                out.push(f.path);
            }
        }
        Ok(out)
    }

    /// Run one line; what it prints goes to `io`.
    pub fn run_line(&mut self, line: &str, io: &mut Io<'_>) -> Result<Status> {
        let line = line.trim();
        if line.is_empty() {
            return Ok(Status::Ok);
        }
        let line = match line.strip_prefix('?') {
            Some(rest) => format!("help {rest}"),
            None => line.to_string(),
        };
        if let Some(cmd) = line.strip_prefix('!') {
            return self.shell_escape(cmd.trim(), io);
        }
        let (cmd, arg) = if let Some(dot) = line.strip_prefix('.') {
            let name = dot.split_whitespace().next().unwrap_or("");
            if !COMMANDS.iter().any(|(c, _)| *c == name) {
                fail!(io, "Unknown command: {line}");
            }
            (name.to_string(), dot[name.len()..].trim().to_string())
        } else {
            let end = line
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(line.len());
            (line[..end].to_string(), line[end..].trim().to_string())
        };
        match self.dispatch(&cmd, &arg, &line, io) {
            Ok(s) => Ok(s),
            // An I/O error on our own output ends the shell; anything else is this
            // command's failure.
            Err(e @ Error::Io { .. }) if e.to_string().starts_with("<output>") => Err(e),
            Err(e) => {
                writeln!(io.err, "{cmd}: {e}").map_err(wr)?;
                Ok(Status::Failed)
            }
        }
    }

    fn dispatch(&mut self, cmd: &str, arg: &str, line: &str, io: &mut Io<'_>) -> Result<Status> {
        match cmd {
            "cd" => self.cd(arg, io),
            "pwd" => {
                say!(io, "/{}", self.cwd);
                Ok(Status::Ok)
            }
            "ls" => self.ls(arg, io),
            "lss" => self.lss(arg, io),
            "tree" => self.tree(arg, io),
            "cat" => self.cat(arg, io, None),
            "head" => self.head(arg, io),
            "stat" => self.stat(arg, io),
            "find" => self.find(arg, io),
            "du" => self.du(arg, io),
            "lcd" => self.lcd(arg, io),
            "lpwd" => {
                say!(io, "{}", self.local_cwd.display());
                Ok(Status::Ok)
            }
            "lls" => self.lls(arg, io),
            "get" => self.get(arg, io),
            "mget" => self.mget(arg, io),
            "put" => self.put(arg, io),
            "mput" => self.mput(arg, io),
            "rm" => self.rm(arg, io),
            "mv" => self.mv(arg, io),
            "info" => self.info(io),
            "sql" => self.sql(arg, io),
            "help" => self.help(arg, io),
            "quit" | "exit" => Ok(Status::Quit),
            "EOF" => {
                say!(io, "");
                Ok(Status::Quit)
            }
            _ => fail!(io, "Unknown command: {line}"),
        }
    }

    fn shell_escape(&mut self, cmd: &str, io: &mut Io<'_>) -> Result<Status> {
        if cmd.is_empty() {
            fail!(io, "!: missing command");
        }
        io.out.flush().map_err(wr)?;
        let st = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(cmd)
            .current_dir(&self.local_cwd)
            .status()
            .map_err(|e| Error::io("/bin/sh", e))?;
        Ok(if st.success() {
            Status::Ok
        } else {
            Status::Failed
        })
    }

    fn help(&self, arg: &str, io: &mut Io<'_>) -> Result<Status> {
        let topic = arg.trim();
        if !topic.is_empty() {
            match COMMANDS.iter().find(|(c, _)| *c == topic) {
                Some((_, doc)) => say!(io, "{doc}"),
                None => fail!(io, "*** No help on {topic}"),
            }
            return Ok(Status::Ok);
        }
        let names: Vec<&str> = COMMANDS.iter().map(|(c, _)| *c).collect();
        say!(io, "");
        say!(io, "Documented commands (type help <topic>):");
        say!(io, "{}", "=".repeat(40));
        for l in columnize(&names, 79) {
            say!(io, "{l}");
        }
        say!(io, "");
        Ok(Status::Ok)
    }

    // ------------------------------------------------------------ navigation

    fn cd(&mut self, arg: &str, io: &mut Io<'_>) -> Result<Status> {
        let a = arg.trim();
        let path = self.resolve(if a.is_empty() { "/" } else { a });
        if path.is_empty() || self.archive.with_index(|i| i.is_dir(&path))? {
            self.cwd = path;
            Ok(Status::Ok)
        } else {
            fail!(io, "cd: not a directory: {path}")
        }
    }

    // --------------------------------------------------------------- listing

    fn ls(&mut self, arg: &str, io: &mut Io<'_>) -> Result<Status> {
        let args = split_args(arg);
        let opts = listing::python::Options {
            long: args.iter().any(|a| a == "-l"),
            recursive: args.iter().any(|a| a == "-R"),
            jsonl: false,
        };
        let rest: Vec<&String> = args.iter().filter(|a| *a != "-l" && *a != "-R").collect();
        let path = self.resolve(rest.first().map_or("", |s| s.as_str()));
        let missing = listing::python::list(&self.archive, &[path], opts, io.out)?;
        Ok(if missing.is_empty() {
            Status::Ok
        } else {
            Status::Failed
        })
    }

    fn lss(&mut self, arg: &str, io: &mut Io<'_>) -> Result<Status> {
        let path = self.resolve(arg.trim());
        let listing = match self.archive.with_index(|i| i.listing(&path)) {
            Ok(l) => l,
            Err(Error::NotFound(_) | Error::NotADirectory(_)) => {
                fail!(io, "lss: not a directory: {path}")
            }
            Err(e) => return Err(e),
        };
        let mut dirs: Vec<String> = listing
            .dirs
            .iter()
            .map(|d| mpath::basename(&d.path).to_string())
            .collect();
        let mut files: Vec<String> = listing
            .files
            .iter()
            .map(|f| mpath::basename(&f.path).to_string())
            .collect();
        dirs.sort();
        files.sort();
        for d in dirs {
            say!(io, "{d}/");
        }
        for l in lss::group(&files) {
            say!(io, "{l}");
        }
        Ok(Status::Ok)
    }

    fn tree(&mut self, arg: &str, io: &mut Io<'_>) -> Result<Status> {
        let args = split_args(arg);
        let mut opts = listing::tree::TreeOptions {
            level: None,
            dirs_only: args.iter().any(|a| a == "-d"),
        };
        let rest: Vec<&String> = args.iter().filter(|a| *a != "-d").collect();
        let mut path = String::new();
        let mut i = 0;
        while i < rest.len() {
            let a = rest[i].as_str();
            if (a == "-L" || a == "--depth") && i + 1 < rest.len() {
                match rest[i + 1].parse::<usize>() {
                    Ok(n) => opts.level = Some(n),
                    Err(_) => fail!(io, "tree: invalid level: {}", rest[i + 1]),
                }
                i += 2;
            } else {
                if !a.starts_with('-') {
                    path = a.to_string();
                }
                i += 1;
            }
        }
        let start = self.resolve(&path);
        listing::tree::tree(&self.archive, &start, opts, io.out)?;
        Ok(Status::Ok)
    }

    // ------------------------------------------------------------ file reads

    /// `cat`, or `head` with a byte limit.
    fn cat(&mut self, arg: &str, io: &mut Io<'_>, limit: Option<u64>) -> Result<Status> {
        let name = if limit.is_some() { "head" } else { "cat" };
        let a = arg.trim();
        let path = self.resolve(a);
        if path.is_empty() {
            fail!(io, "{name}: missing path");
        }
        let files = self.files_named(&path)?;
        if files.is_empty() {
            fail!(io, "{name}: {path}: No such file");
        }
        for p in files {
            let Some(fi) = self.archive.with_index(|i| i.file(&p))? else {
                fail!(io, "{name}: {p}: No such file");
            };
            let data = match limit {
                Some(n) => self.archive.read_range(&fi, 0, n.min(fi.size))?,
                None => self.archive.read_file(&fi)?,
            };
            io.out.write_all(&data).map_err(wr)?;
            if !data.ends_with(b"\n") {
                say!(io, "");
            }
        }
        Ok(Status::Ok)
    }

    fn head(&mut self, arg: &str, io: &mut Io<'_>) -> Result<Status> {
        let args = split_args(arg);
        let mut n: u64 = 1024;
        let mut path = None;
        let mut i = 0;
        while i < args.len() {
            if args[i] == "-n" && i + 1 < args.len() {
                match args[i + 1].parse::<i64>() {
                    Ok(v) => n = v.max(0) as u64,
                    Err(_) => fail!(io, "head: invalid number of bytes: {}", args[i + 1]),
                }
                i += 2;
            } else {
                path = Some(args[i].clone());
                i += 1;
            }
        }
        let Some(path) = path else {
            fail!(io, "head: missing path");
        };
        // Quoted so that a name with spaces is one operand again.
        self.cat(&quote(&path), io, Some(n))
    }

    fn stat(&mut self, arg: &str, io: &mut Io<'_>) -> Result<Status> {
        let a = arg.trim();
        let path = self.resolve(a);
        if path.is_empty() {
            fail!(io, "stat: missing path");
        }
        let mut named = self.files_named(&path)?;
        if named.is_empty() && self.archive.with_index(|i| i.is_dir(&path))? {
            named.push(path.clone());
        }
        if named.is_empty() {
            fail!(io, "stat: {path}: No such file or directory");
        }
        for p in named {
            if let Some(f) = self.archive.with_index(|i| i.file(&p))? {
                say!(io, "  File: {}", f.path);
                say!(io, "  Size: {}", f.size);
                say!(io, " Shard: {}", f.shard);
                say!(io, "Offset: {}", f.offset);
                match f.crc32c {
                    Some(c) => say!(io, "CRC32C: {c:#010x}"),
                    None => say!(io, "CRC32C: (none)"),
                }
            } else if let Some(d) = self.archive.with_index(|i| i.dir(&p))? {
                say!(io, "   Dir: /{}", d.path);
                say!(io, " Files: {} (direct)", d.num_files);
                say!(
                    io,
                    " Total: {} files, {} bytes",
                    d.num_files_tree,
                    d.size_tree
                );
            }
        }
        Ok(Status::Ok)
    }

    fn find(&mut self, arg: &str, io: &mut Io<'_>) -> Result<Status> {
        let args = split_args(arg);
        let mut opts = listing::find::FindOptions::default();
        let mut start = String::new();
        let mut i = 0;
        while i < args.len() {
            let a = args[i].as_str();
            let v = args.get(i + 1).cloned();
            match (a, v) {
                ("-name", Some(v)) => opts.name = Some(v),
                ("-path", Some(v)) => opts.path = Some(v),
                ("-type", Some(v)) => {
                    opts.kind = Some(match v.as_str() {
                        "f" => listing::find::EntryKind::File,
                        "d" => listing::find::EntryKind::Dir,
                        _ => fail!(io, "find: -type: {v}: expected f or d"),
                    })
                }
                ("-size", Some(v)) => match listing::find::parse_size(&v) {
                    Ok(s) => opts.size = s,
                    Err(m) => fail!(io, "find: -size: {m}"),
                },
                ("-maxdepth", Some(v)) => match v.parse::<i64>() {
                    Ok(n) => opts.max_depth = Some(n),
                    Err(_) => fail!(io, "find: -maxdepth: {v}: not a number"),
                },
                (a, _) if !a.starts_with('-') => {
                    start = a.to_string();
                    i += 1;
                    continue;
                }
                (a, _) => fail!(io, "find: unknown option: {a}"),
            }
            i += 2;
        }
        let start = self.resolve(&start);
        listing::find::find(&self.archive, &start, &opts, io.out)?;
        Ok(Status::Ok)
    }

    fn du(&mut self, arg: &str, io: &mut Io<'_>) -> Result<Status> {
        let args = split_args(arg);
        let mut opts = DuOptions {
            all: args.iter().any(|a| a == "-a"),
            summarize: args.iter().any(|a| a == "-s"),
            human: args.iter().any(|a| a == "-H"),
            ..DuOptions::default()
        };
        let rest: Vec<&String> = args
            .iter()
            .filter(|a| !["-a", "-s", "-H"].contains(&a.as_str()))
            .collect();
        let mut path = String::new();
        let mut i = 0;
        while i < rest.len() {
            let a = rest[i].as_str();
            if a == "-d" && i + 1 < rest.len() {
                match rest[i + 1].parse::<u32>() {
                    Ok(n) => opts.max_depth = Some(n),
                    Err(_) => fail!(io, "du: -d: {}: not a number", rest[i + 1]),
                }
                i += 2;
            } else {
                if !a.starts_with('-') {
                    path = a.to_string();
                }
                i += 1;
            }
        }
        if !opts.all && opts.max_depth.is_none() {
            opts.summarize = true;
        }
        let path = self.resolve(&path);
        du(&self.archive, &path, &opts, io.out)?;
        Ok(Status::Ok)
    }

    // -------------------------------------------------------- local side

    fn lcd(&mut self, arg: &str, io: &mut Io<'_>) -> Result<Status> {
        let a = arg.trim();
        let target = if a.is_empty() {
            std::env::var_os("HOME").map_or_else(|| PathBuf::from("/"), PathBuf::from)
        } else {
            self.resolve_local(a)
        };
        if target.is_dir() {
            self.local_cwd = target;
            say!(io, "Local directory: {}", self.local_cwd.display());
            Ok(Status::Ok)
        } else {
            fail!(io, "lcd: not a directory: {}", target.display())
        }
    }

    fn lls(&mut self, arg: &str, io: &mut Io<'_>) -> Result<Status> {
        let dir = self.resolve_local(arg.trim());
        let rd = match std::fs::read_dir(&dir) {
            Ok(r) => r,
            Err(e) => fail!(io, "lls: {}", python_os_error(&e, &dir)),
        };
        let mut names: Vec<(String, bool)> = Vec::new();
        for ent in rd {
            let ent = ent.map_err(|e| Error::io(&dir, e))?;
            let name = ent.file_name().to_string_lossy().into_owned();
            let is_dir = dir.join(&name).is_dir();
            names.push((name, is_dir));
        }
        names.sort();
        for (n, d) in names {
            say!(io, "{n}{}", if d { "/" } else { "" });
        }
        Ok(Status::Ok)
    }

    // --------------------------------------------------------------- get

    fn write_local(&self, archive_path: &str, dest: &Path) -> Result<()> {
        let data = self.archive.read(archive_path)?;
        if let Some(parent) = dest.parent() {
            if !parent.as_os_str().is_empty() {
                std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
            }
        }
        std::fs::write(dest, data).map_err(|e| Error::io(dest, e))
    }

    fn get(&mut self, arg: &str, io: &mut Io<'_>) -> Result<Status> {
        let args = split_args(arg);
        let Some(first) = args.first() else {
            fail!(io, "get: missing archive path");
        };
        let path = self.resolve(first);
        let dest_arg = args.get(1);
        let files = self.files_named(&path)?;
        if files.is_empty() && self.archive.with_index(|i| i.is_dir(&path))? {
            let dest = match dest_arg {
                Some(d) => self.resolve_local(d),
                None => self.resolve_local(mpath::basename(&path)),
            };
            return self.get_dir(&path, &dest, io);
        }
        if files.is_empty() {
            fail!(io, "get: {path}: No such file or directory");
        }
        let several = files.len() > 1;
        for f in files {
            let mut dest = match dest_arg {
                Some(d) => self.resolve_local(d),
                None => self.resolve_local(mpath::basename(&f)),
            };
            if dest.is_dir() || (several && dest_arg.is_some()) {
                dest = dest.join(mpath::basename(&f));
            }
            self.write_local(&f, &dest)?;
            say!(io, "Extracted: {f} -> {}", dest.display());
        }
        Ok(Status::Ok)
    }

    fn get_dir(&mut self, dir: &str, dest: &Path, io: &mut Io<'_>) -> Result<Status> {
        let mut count = 0u64;
        let walk = self.archive.walk(
            dir,
            WalkOptions {
                files: true,
                files_first: true,
                ..WalkOptions::default()
            },
        )?;
        for ev in walk {
            if let WalkEvent::File { info, .. } = ev? {
                let rel = if dir.is_empty() {
                    info.path.as_str()
                } else {
                    &info.path[dir.len() + 1..]
                };
                if !mpath::is_safe_stored(rel) {
                    writeln!(
                        io.err,
                        "get: {}: not extracted: the path leads outside the target",
                        mpath::printable(&info.path)
                    )
                    .map_err(wr)?;
                    continue;
                }
                self.write_local(&info.path, &dest.join(rel))?;
                count += 1;
            }
        }
        say!(io, "Extracted {count} files to {}", dest.display());
        Ok(Status::Ok)
    }

    fn mget(&mut self, arg: &str, io: &mut Io<'_>) -> Result<Status> {
        let args = split_args(arg);
        let Some(pattern) = args.first() else {
            fail!(io, "mget: missing pattern");
        };
        let pattern = self.resolve(pattern);
        let dest = match args.get(1) {
            Some(d) => self.resolve_local(d),
            None => self.local_cwd.clone(),
        };
        let mut count = 0u64;
        let matches: Vec<String> = listing::pyglob::matches(&self.archive, &pattern)?
            .filter_map(|e| match e {
                Ok(Entry::File(f)) => Some(Ok(f.path)),
                Ok(Entry::Dir(_)) => None,
                Err(e) => Some(Err(e)),
            })
            .collect::<Result<_>>()?;
        for p in matches {
            let local = dest.join(mpath::basename(&p));
            self.write_local(&p, &local)?;
            count += 1;
            say!(io, "  {p} -> {}", local.display());
        }
        say!(io, "Extracted {count} files");
        Ok(Status::Ok)
    }

    // ------------------------------------------------------------- writes

    fn check_writable(&self, cmd: &str, io: &mut Io<'_>) -> Result<bool> {
        if !self.writable {
            writeln!(
                io.err,
                "{cmd}: archive is read-only (use barecat-shell --write)"
            )
            .map_err(wr)?;
            return Ok(false);
        }
        Ok(true)
    }

    fn put(&mut self, arg: &str, io: &mut Io<'_>) -> Result<Status> {
        if !self.check_writable("put", io)? {
            return Ok(Status::Failed);
        }
        let args = split_args(arg);
        let Some(first) = args.first() else {
            fail!(io, "put: missing local path");
        };
        let local = self.resolve_local(first);
        let name = local
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let target = self.resolve(args.get(1).map_or(name.as_str(), |s| s.as_str()));
        if !local.is_file() {
            fail!(io, "put: {}: No such file", local.display());
        }
        let data = std::fs::read(&local).map_err(|e| Error::io(&local, e))?;
        let meta = std::fs::metadata(&local)
            .map(|m| Meta::from_fs(&m))
            .unwrap_or_default();
        let mut w = crate::edit::open_writer(&self.path, true)?;
        let r = w.add_file(&target, meta, &data, None);
        let r = r.and_then(|_| w.finish().map(|_| ()));
        self.reopen()?;
        r?;
        say!(io, "Added: {} -> {target}", local.display());
        Ok(Status::Ok)
    }

    fn mput(&mut self, arg: &str, io: &mut Io<'_>) -> Result<Status> {
        if !self.check_writable("mput", io)? {
            return Ok(Status::Failed);
        }
        let args = split_args(arg);
        let Some(first) = args.first() else {
            fail!(io, "mput: missing pattern");
        };
        let pattern = self.resolve_local(first);
        let dir = match args.get(1) {
            Some(d) => self.resolve(d),
            None => self.cwd.clone(),
        };
        let matches = local_glob(&pattern.to_string_lossy());
        let mut w = crate::edit::open_writer(&self.path, true)?;
        let mut count = 0u64;
        let mut status = Status::Ok;
        let mut result = Ok(());
        for local in matches.iter().filter(|p| p.is_file()) {
            let name = local
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let target = mpath::join(&dir, &name);
            let data = match std::fs::read(local) {
                Ok(d) => d,
                Err(e) => {
                    writeln!(io.err, "mput: {}", Error::io(local, e)).map_err(wr)?;
                    status = Status::Failed;
                    continue;
                }
            };
            let meta = std::fs::metadata(local)
                .map(|m| Meta::from_fs(&m))
                .unwrap_or_default();
            match w.add_file(&target, meta, &data, None) {
                Ok(_) => {
                    say!(io, "  {} -> {target}", local.display());
                    count += 1;
                }
                Err(e @ (Error::FileExists(_) | Error::InvalidPath { .. })) => {
                    writeln!(io.err, "mput: {e}").map_err(wr)?;
                    status = Status::Failed;
                }
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        let fin = w.finish();
        self.reopen()?;
        result?;
        fin?;
        say!(io, "Added {count} files");
        Ok(status)
    }

    fn rm(&mut self, arg: &str, io: &mut Io<'_>) -> Result<Status> {
        if !self.check_writable("rm", io)? {
            return Ok(Status::Failed);
        }
        let a = arg.trim();
        let path = self.resolve(a);
        if path.is_empty() {
            fail!(io, "rm: missing path");
        }
        let files = self.files_named(&path)?;
        if files.is_empty() {
            if self.archive.with_index(|i| i.is_dir(&path))? {
                fail!(io, "rm: {path}: Is a directory (use rmdir or rm -r)");
            }
            fail!(io, "rm: {path}: No such file");
        }
        let mut w = crate::edit::open_writer(&self.path, true)?;
        let mut removed = Vec::new();
        let mut result = Ok(());
        for f in &files {
            match w.remove_file(f) {
                Ok(_) => removed.push(f.clone()),
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        let fin = if result.is_ok() {
            crate::edit::finish_removal(w).map(|_| ())
        } else {
            drop(w);
            Ok(())
        };
        self.reopen()?;
        result?;
        fin?;
        for f in removed {
            say!(io, "Removed: {f}");
        }
        Ok(Status::Ok)
    }

    fn mv(&mut self, arg: &str, io: &mut Io<'_>) -> Result<Status> {
        if !self.check_writable("mv", io)? {
            return Ok(Status::Failed);
        }
        let args = split_args(arg);
        if args.len() < 2 {
            fail!(io, "mv: need source and destination");
        }
        let old = self.resolve(&args[0]);
        let new = self.resolve(&args[1]);
        let mut w = crate::edit::open_writer(&self.path, true)?;
        let r = w.rename(&old, &new, false);
        let fin = if r.is_ok() {
            w.finish().map(|_| ())
        } else {
            drop(w);
            Ok(())
        };
        self.reopen()?;
        if let Err(e) = r {
            fail!(io, "mv: {e}");
        }
        fin?;
        say!(io, "Renamed: {old} -> {new}");
        Ok(Status::Ok)
    }

    // -------------------------------------------------------------- info

    fn info(&mut self, io: &mut Io<'_>) -> Result<Status> {
        let root = self.archive.root()?;
        let dirs = self.archive.with_index(|i| i.count_dirs())?;
        let shards = self.archive.layout().contiguous_shards()?.len();
        say!(io, "Archive: {}", self.name);
        say!(io, "  Files: {}", root.num_files_tree);
        say!(io, "   Dirs: {dirs}");
        say!(io, "  Total: {} bytes", root.size_tree);
        say!(io, " Shards: {shards}");
        Ok(Status::Ok)
    }

    fn sql(&mut self, arg: &str, io: &mut Io<'_>) -> Result<Status> {
        let q = arg.trim();
        if q.is_empty() {
            fail!(io, "sql: give a query: sql SELECT ...");
        }
        let result = if self.writable {
            let layout = self.archive.layout().clone();
            let r = Index::open_write(layout.index(), false).and_then(|i| i.run_sql(q));
            self.reopen()?;
            r
        } else {
            self.archive.with_index(|i| i.run_sql(q))
        };
        match result {
            Ok((cols, rows)) => {
                if !rows.is_empty() {
                    say!(io, "{}", cols.join("\t"));
                    say!(io, "{}", "-".repeat(40));
                    for r in &rows {
                        say!(io, "{}", r.join("\t"));
                    }
                }
                say!(io, "({} rows)", rows.len());
                Ok(Status::Ok)
            }
            Err(e) => fail!(io, "sql error: {}", sql_message(&e)),
        }
    }

    /// Completions of the word before `pos` in `line`: command names for the first
    /// word, archive paths after the commands that take them. Returns where the
    /// completed word starts and the candidates.
    pub fn complete(&self, line: &str, pos: usize) -> (usize, Vec<String>) {
        let before = &line[..pos.min(line.len())];
        let start = before
            .rfind(|c: char| c.is_whitespace())
            .map_or(0, |i| i + 1);
        let word = &before[start..];
        let first = before.split_whitespace().next().unwrap_or("");
        if start == 0 || before[..start].trim().is_empty() {
            let c = COMMANDS
                .iter()
                .map(|(c, _)| *c)
                .filter(|c| c.starts_with(word) && *c != "EOF")
                .map(|c| format!("{c} "))
                .collect();
            return (start, c);
        }
        let dirs_only = COMPLETE_DIRS.contains(&first);
        if !dirs_only && !COMPLETE_PATHS.contains(&first) {
            return (start, vec![]);
        }
        let (dir_part, prefix) = match word.rfind('/') {
            Some(i) => (&word[..i], &word[i + 1..]),
            None => ("", word),
        };
        let search = if word.starts_with('/') && dir_part.is_empty() {
            String::new()
        } else {
            self.resolve(dir_part)
        };
        let found = self
            .archive
            .with_index(|i| i.children_with_prefix(&search, prefix, 200))
            .unwrap_or_default();
        let shown_dir = if word.contains('/') {
            format!("{dir_part}/")
        } else {
            String::new()
        };
        let out = found
            .into_iter()
            .filter(|(_, is_dir)| *is_dir || !dirs_only)
            .map(|(p, is_dir)| {
                let name = mpath::basename(&p);
                if is_dir {
                    format!("{shown_dir}{name}/")
                } else {
                    format!("{shown_dir}{name}")
                }
            })
            .collect();
        (start, out)
    }
}

/// Quote an argument for [`split_args`].
fn quote(s: &str) -> String {
    if !s.is_empty() && !s.contains(|c: char| c.is_whitespace() || "'\"\\".contains(c)) {
        return s.to_string();
    }
    format!("'{}'", s.replace('\'', "'\"'\"'"))
}

/// An OS error as Python's `OSError` prints it: `[Errno 2] No such file or
/// directory: '/x'`.
fn python_os_error(e: &std::io::Error, path: &Path) -> String {
    match e.raw_os_error() {
        Some(code) => {
            let msg = std::io::Error::from_raw_os_error(code).to_string();
            let msg = msg.split(" (os error").next().unwrap_or(&msg).to_string();
            format!("[Errno {code}] {msg}: '{}'", path.display())
        }
        None => format!("{e}: '{}'", path.display()),
    }
}

/// SQLite's own message of an error (without our path prefix).
fn sql_message(e: &Error) -> String {
    match e {
        Error::Sqlite { source, .. } => match source {
            rusqlite::Error::SqliteFailure(_, Some(m)) => m.clone(),
            rusqlite::Error::SqlInputError { msg, .. } => msg.clone(),
            other => other.to_string(),
        },
        other => other.to_string(),
    }
}

/// Local paths matching a shell pattern, as Python's `glob.glob(pattern,
/// recursive=True)`: `*`, `?` and `[...]` within a component, `**` for any number
/// of directories, names starting with `.` only matched by a pattern that starts
/// with `.`. Sorted.
pub fn local_glob(pattern: &str) -> Vec<PathBuf> {
    let absolute = pattern.starts_with('/');
    let parts: Vec<&str> = pattern.split('/').filter(|p| !p.is_empty()).collect();
    let root = if absolute {
        PathBuf::from("/")
    } else {
        PathBuf::from("")
    };
    let mut out = Vec::new();
    glob_from(&root, &parts, &mut out);
    out.sort();
    out.dedup();
    out
}

fn component_matcher(pat: &str) -> Option<globset::GlobMatcher> {
    globset::GlobBuilder::new(pat)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .ok()
        .map(|g| g.compile_matcher())
}

fn list_dir(dir: &Path) -> Vec<String> {
    let d = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let mut v: Vec<String> = std::fs::read_dir(d)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn glob_from(dir: &Path, parts: &[&str], out: &mut Vec<PathBuf>) {
    let Some((&first, rest)) = parts.split_first() else {
        if !dir.as_os_str().is_empty() {
            out.push(dir.to_path_buf());
        }
        return;
    };
    if first == "**" {
        // Zero directories…
        glob_from(dir, rest, out);
        // …or one more, then any number.
        for name in list_dir(dir) {
            if name.starts_with('.') {
                continue;
            }
            let p = dir.join(&name);
            if p.is_dir() && !p.is_symlink() {
                glob_from(&p, parts, out);
            }
        }
        return;
    }
    if !has_wildcards(first) {
        let p = dir.join(first);
        if p.symlink_metadata().is_ok() {
            glob_from(&p, rest, out);
        }
        return;
    }
    let Some(m) = component_matcher(first) else {
        return;
    };
    for name in list_dir(dir) {
        if name.starts_with('.') && !first.starts_with('.') {
            continue;
        }
        if m.is_match(&name) {
            let p = dir.join(&name);
            if rest.is_empty() || p.is_dir() {
                glob_from(&p, rest, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_split_at_semicolons_outside_quotes() {
        assert_eq!(
            split_commands("cd a; ls -l ; cat 'x;y' ;; pwd"),
            vec!["cd a", "ls -l", "cat 'x;y'", "pwd"]
        );
        assert_eq!(split_commands(r#"cat "a\";b""#), vec![r#"cat "a\";b""#]);
    }

    #[test]
    fn args_split_like_shlex() {
        assert_eq!(
            split_args("a 'b c' \"d e\" f\\ g"),
            vec!["a", "b c", "d e", "f g"]
        );
        assert_eq!(split_args("''"), vec![""]);
        assert_eq!(split_args("'unbalanced x"), vec!["'unbalanced", "x"]);
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(split_args(&quote("it's")), vec!["it's"]);
    }

    #[test]
    fn columns_like_python_cmd() {
        let names: Vec<&str> = COMMANDS.iter().map(|(c, _)| *c).collect();
        let got = columnize(&names, 79);
        assert_eq!(
            got,
            vec![
                "EOF  cd  exit  get   help  lcd  lpwd  lss   mput  put  quit  sql   tree",
                "cat  du  find  head  info  lls  ls    mget  mv    pwd  rm    stat",
            ]
        );
    }
}
