//! Man pages and shell completions, generated from the clap definitions.
//!
//! `barecat --generate-docs DIR` writes `DIR/man/*.1` (barecat(1) and one page per
//! command) and `DIR/completions/` (bash, zsh and fish, for `barecat` and for every
//! `barecat-<command>` program). The committed copies at the repository root are
//! regenerated with `scripts/gen-docs.sh`; a test fails when they are out of date.
//! The same run rewrites the command reference at the end of `DIR/docs/GUIDE.md`
//! (everything after its `## Command reference` heading) when that file exists.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use clap_complete::Shell;

use super::{barecat_command, commands};

/// The exit-status paragraph every page carries.
const EXIT_STATUS: &str = "0 on success; 1 when something failed (for commands that work \
through many entries: the work went on, the failures were reported one line each, and \
the exit status is 1 at the end); 2 for a usage error (unknown option, missing argument, \
invalid combination).";

/// The environment paragraph every page carries.
const ENVIRONMENT: &str = "BARECAT_DIRECT_IO=0 makes commands that write shards or record \
chunks do so through the page cache. By default they append whole blocks with direct I/O (O_DIRECT) where \
the file system reports its alignment (statx STATX_DIOALIGN, Linux 6.1 and later): \
large conversions then cost about one copy of the data instead of two, and do not \
fill the page cache with bytes that were just written.

Remote archives (an ARCHIVE given as s3://bucket/prefix/name or \
http(s)://host/path/name) take their credentials and endpoint from \
AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION, \
AWS_ENDPOINT_URL (an S3-compatible server) and AWS_ALLOW_HTTP=true (a plain-http \
endpoint); without credentials, requests are anonymous (public buckets), as with \
AWS_SKIP_SIGNATURE=true. BARECAT_REMOTE_TIMEOUT (seconds per request, default 60), \
BARECAT_REMOTE_CONNECT_TIMEOUT (default 10) and BARECAT_REMOTE_RETRIES (default 4) \
bound every request; BARECAT_REMOTE_CACHE (index pages in memory, default 64M), \
BARECAT_REMOTE_READAHEAD (shard bytes in flight for sequential reads, default 64M) \
and BARECAT_REMOTE_DOWNLOAD_LIMIT (the largest index that --index-mode auto \
downloads whole, default 32M) bound memory.";

fn roff_escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let line = line.replace('\\', "\\e");
        // A line starting with '.' or '\'' would be a roff request.
        if line.starts_with('.') || line.starts_with('\'') {
            out.push_str("\\&");
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Render one man page. The `after_help` text of the command (its examples) becomes
/// an EXAMPLES section, followed by EXIT STATUS, ENVIRONMENT and SEE ALSO.
pub fn man_page(cmd: clap::Command, see_also: &[String]) -> io::Result<Vec<u8>> {
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    let extra = cmd.get_after_help().map(|s| s.to_string());
    let cmd = cmd.after_help(None::<&str>).after_long_help(None::<&str>);
    let man = clap_mangen::Man::new(cmd.clone())
        .date("")
        .manual("barecat manual")
        .source(format!("barecat {}", env!("CARGO_PKG_VERSION")));
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut out)?;
    }
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        man.render_subcommands_section(&mut out)?;
    }
    if let Some(extra) = extra {
        let text = extra.strip_prefix("Examples:\n").unwrap_or(&extra);
        out.extend_from_slice(b".SH EXAMPLES\n.nf\n");
        out.extend_from_slice(roff_escape(text).as_bytes());
        out.extend_from_slice(b".fi\n");
    }
    out.extend_from_slice(b".SH \"EXIT STATUS\"\n");
    out.extend_from_slice(roff_escape(EXIT_STATUS).as_bytes());
    out.extend_from_slice(b".SH ENVIRONMENT\n");
    out.extend_from_slice(roff_escape(ENVIRONMENT).as_bytes());
    if !see_also.is_empty() {
        out.extend_from_slice(b".SH \"SEE ALSO\"\n");
        let refs: Vec<String> = see_also
            .iter()
            .map(|s| format!("\\fB{}\\fR(1)", roff_escape(s).trim_end()))
            .collect();
        out.extend_from_slice(refs.join(", ").as_bytes());
        out.push(b'\n');
    }
    Ok(out)
}

/// Every file of the generated documentation: (path relative to the output
/// directory, content).
pub fn generated_files() -> io::Result<Vec<(PathBuf, Vec<u8>)>> {
    let listed: Vec<_> = commands().iter().filter(|c| !c.legacy).collect();
    let mut files = Vec::new();
    let all_pages: Vec<String> = listed.iter().map(|c| c.binary.to_string()).collect();
    files.push((
        PathBuf::from("man/barecat.1"),
        man_page(barecat_command(), &all_pages)?,
    ));
    for c in &listed {
        let cmd = (c.command)().name(c.binary).bin_name(c.binary);
        // A command with subcommands gets a page per subcommand too, named
        // `<program>-<subcommand>` as its SUBCOMMANDS section refers to them.
        let mut full = cmd.clone();
        full.build();
        for sub in full
            .get_subcommands()
            .filter(|s| !s.is_hide_set() && s.get_name() != "help")
        {
            let name = format!("{}-{}", c.binary, sub.get_name());
            files.push((
                PathBuf::from(format!("man/{name}.1")),
                man_page(
                    sub.clone()
                        .name(name.clone().leak() as &str)
                        .bin_name(format!("{} {}", c.binary, sub.get_name())),
                    &[c.binary.to_string()],
                )?,
            ));
        }
        files.push((
            PathBuf::from(format!("man/{}.1", c.binary)),
            man_page(cmd, &["barecat".to_string()])?,
        ));
    }
    for name in programs() {
        for (shell, file) in [
            (Shell::Bash, format!("completions/bash/{name}")),
            (Shell::Zsh, format!("completions/zsh/_{name}")),
            (Shell::Fish, format!("completions/fish/{name}.fish")),
        ] {
            let buf = completion(shell, &name).expect("a listed program");
            files.push((PathBuf::from(file), buf));
        }
    }
    Ok(files)
}

/// The programs that get completions: `barecat` and every listed command's
/// `barecat-<name>`.
pub fn programs() -> Vec<String> {
    std::iter::once("barecat".to_string())
        .chain(
            commands()
                .iter()
                .filter(|c| !c.legacy)
                .map(|c| c.binary.to_string()),
        )
        .collect()
}

/// The completion script of `program` (`barecat` or a listed `barecat-<name>`)
/// for `shell`, as committed under completions/; `None` for another program.
pub fn completion(shell: Shell, program: &str) -> Option<Vec<u8>> {
    let mut cmd = if program == "barecat" {
        barecat_command()
    } else {
        let c = commands()
            .iter()
            .find(|c| !c.legacy && c.binary == program)?;
        (c.command)().name(c.binary)
    };
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut cmd, program.to_string(), &mut buf);
    Some(buf)
}

/// Write the documentation below `dir`, replacing what a previous run generated.
pub fn generate_docs(dir: &Path) -> io::Result<Vec<PathBuf>> {
    for sub in [
        "man",
        "completions/bash",
        "completions/zsh",
        "completions/fish",
    ] {
        let d = dir.join(sub);
        if let Ok(entries) = fs::read_dir(&d) {
            for e in entries.flatten() {
                if e.file_type().is_ok_and(|t| t.is_file()) {
                    fs::remove_file(e.path())?;
                }
            }
        }
    }
    let mut written = Vec::new();
    for (rel, data) in generated_files()? {
        let path = dir.join(&rel);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(&path, data)?;
        written.push(rel);
    }
    // The command reference at the end of docs/GUIDE.md, when `dir` holds one.
    let guide = dir.join("docs/GUIDE.md");
    if let Ok(text) = fs::read_to_string(&guide) {
        if let Some(new) = guide_with_reference(&text) {
            if new != text {
                fs::write(&guide, new)?;
            }
            written.push(PathBuf::from("docs/GUIDE.md"));
        }
    }
    Ok(written)
}

/// The heading of docs/GUIDE.md under which [`guide_reference`] goes: everything
/// after it is generated.
pub const GUIDE_REFERENCE_HEADING: &str = "## Command reference\n";

/// The command reference of docs/GUIDE.md: an introduction, then for each listed
/// command its summary, usage line, options table and the examples and notes of its
/// `--help`. Generated from the same clap definitions as the man pages.
pub fn guide_reference() -> String {
    let mut out = String::from(
        "\nGenerated from the command definitions (`barecat-NAME --help` and `man \
         barecat-NAME`\nsay the same). `barecat NAME …` runs each of them too. Options \
         every command\nshares: `-h` (help), `-V` (version), `-q` (quiet, where the \
         command prints progress).\n",
    );
    for c in commands().iter().filter(|c| !c.legacy) {
        let mut cmd = (c.command)()
            .name(c.binary)
            .bin_name(c.binary)
            .disable_help_subcommand(true);
        cmd.build();
        out.push_str(&guide_section(&cmd, c.binary));
    }
    out
}

/// One command's section of the reference.
fn guide_section(cmd: &clap::Command, binary: &str) -> String {
    let mut s = format!("\n### {binary}\n\n");
    if let Some(about) = cmd.get_about() {
        s.push_str(&format!("{about}\n\n"));
    }
    let mut usage = vec![binary.to_string()];
    let mut rows = Vec::new();
    // Options first, then the operands, as the old hand-written pages had them.
    let (operands, options): (Vec<&clap::Arg>, Vec<&clap::Arg>) = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set())
        .partition(|a| a.is_positional());
    for a in options.into_iter().chain(operands) {
        let names = match (a.get_short(), a.get_long()) {
            (Some(sh), Some(l)) => Some((format!("-{sh}|--{l}"), format!("-{sh}, --{l}"))),
            (None, Some(l)) => Some((format!("--{l}"), format!("--{l}"))),
            (Some(sh), None) => Some((format!("-{sh}"), format!("-{sh}"))),
            (None, None) => None,
        };
        let value = a
            .get_value_names()
            .map(|v| {
                v.iter()
                    .map(|n| format!("<{n}>"))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .unwrap_or_else(|| format!("<{}>", a.get_id().as_str().to_uppercase()));
        let takes_value = a.get_num_args().is_some_and(|n| n.takes_values());
        let (in_usage, in_table) = match names {
            Some((u, t)) => (
                format!("[{u}]"),
                if takes_value {
                    format!("{t} {value}")
                } else {
                    t
                },
            ),
            None if a.get_num_args().is_some_and(|n| n.max_values() > 1) => {
                (format!("{value}..."), value)
            }
            None => (value.clone(), value),
        };
        usage.push(in_usage);
        let id = a.get_id().as_str();
        // Shared by every command: said once in the reference's introduction.
        if id == "help" || id == "version" || id == "quiet" {
            continue;
        }
        let mut help = a
            .get_help()
            .map(|h| h.to_string().replace('\n', " "))
            .unwrap_or_default();
        let defaults: Vec<String> = a
            .get_default_values()
            .iter()
            .map(|v| v.to_string_lossy().into_owned())
            .collect();
        if takes_value && !defaults.is_empty() && !a.is_hide_default_value_set() {
            help.push_str(&format!(" [default: {}]", defaults.join(",")));
        }
        rows.push(format!("| `{in_table}` | {} |", help.replace('|', "\\|")));
    }
    let subs: Vec<&clap::Command> = cmd.get_subcommands().filter(|s| !s.is_hide_set()).collect();
    if !subs.is_empty() {
        usage.push("<subcommands>".into());
    }
    s.push_str(&format!("```text\n{} \n```\n\n", usage.join(" ")));
    if !subs.is_empty() {
        s.push_str("| subcommand | what it does |\n|---|---|\n");
        for sub in &subs {
            let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
            s.push_str(&format!("| `{binary}-{}(1)` | {about} |\n", sub.get_name()));
        }
        s.push('\n');
    }
    if !rows.is_empty() {
        s.push_str("| option | meaning |\n|---|---|\n");
        for r in rows {
            s.push_str(&r);
            s.push('\n');
        }
        s.push('\n');
    }
    if let Some(extra) = cmd.get_after_help() {
        let text = extra.to_string();
        let text = text.strip_prefix("Examples:\n").unwrap_or(&text);
        s.push_str(&format!("```text\n{}\n```\n", text.trim_end()));
    }
    s
}

/// `guide` (docs/GUIDE.md) with its command reference replaced by
/// [`guide_reference`]; `None` when it has no [`GUIDE_REFERENCE_HEADING`].
pub fn guide_with_reference(guide: &str) -> Option<String> {
    let at = guide.find(&format!("\n{GUIDE_REFERENCE_HEADING}"))? + 1;
    let head = &guide[..at + GUIDE_REFERENCE_HEADING.len()];
    Some(format!("{head}{}", guide_reference()))
}
