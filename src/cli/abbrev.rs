//! Abbreviated long options, as Python barecat's argparse takes them.
//!
//! argparse accepts any prefix of a long option that no other option of the same
//! program shares (`--shard-size` for `--shard-size-limit`, `--over` for
//! `--overwrite`), and scripts written for Python barecat use them. clap's
//! `infer_long_args` does the same over *our* options, but ours are a superset of
//! Python's, so a prefix that is unique among Python's options can be ambiguous
//! among ours or, worse, name another option (`barecat create --file` is Python's
//! `--files-from`, while our `barecat-create` also has the legacy `--file`). So the
//! arguments are first rewritten with Python's own option table of the program
//! being run: a prefix that argparse would take for one of its options is spelt
//! out in full, and clap then only ever sees that option's full name. Prefixes of
//! our own options are inferred by clap afterwards.
//!
//! The tables are Python barecat 0.3.1's (tests/it/cli/python_compat.rs reads the
//! options out of Python's parsers and checks every prefix of every one of them
//! against ours).

use std::ffi::OsString;

/// The long options of one of Python's programs: (name without dashes, takes a
/// value).
type Table = &'static [(&'static str, bool)];

const CREATE: Table = &[
    ("files-from", true),
    ("null", false),
    ("directory", true),
    ("exclude", true),
    ("include", true),
    ("workers", true),
    ("force", false),
    ("shard-size-limit", true),
    ("physical-order", false),
];
const ADD: Table = &[
    ("files-from", true),
    ("null", false),
    ("directory", true),
    ("exclude", true),
    ("include", true),
    ("workers", true),
    ("create", false),
    ("shard-size-limit", true),
    ("physical-order", false),
];
const EXTRACT: Table = &[
    ("directory", true),
    ("pattern", true),
    ("exclude", true),
    ("include", true),
];
const LIST: Table = &[("long", false), ("recursive", false), ("jsonl", false)];
const SHELL: Table = &[("cmd", true), ("write", false)];
const DU: Table = &[
    ("all", false),
    ("summarize", false),
    ("human-readable", false),
    ("max-depth", true),
];
const TREE: Table = &[("level", true), ("dirs-only", false)];
const VERIFY: Table = &[("quick", false)];
const DEFRAG: Table = &[
    ("quick", false),
    ("smart", false),
    ("max-seconds", true),
    ("dry-run", false),
];
const RESHARD: Table = &[("shard-size-limit", true)];
const SUBSET: Table = &[
    ("output", true),
    ("shard-size-limit", true),
    ("force", false),
    ("pattern", true),
    ("include", true),
    ("exclude", true),
];
const MERGE: Table = &[
    ("output", true),
    ("shard-size-limit", true),
    ("force", false),
    ("append", false),
    ("symlink", false),
    ("ignore-duplicates", false),
    ("as-subdirs", false),
    ("prefix", true),
    ("pattern", true),
    ("include", true),
    ("exclude", true),
];
const CONVERT: Table = &[
    ("shard-size-limit", true),
    ("force", false),
    ("stdin", false),
    ("stdout", false),
    ("root-dir", true),
    ("wrap", false),
];
const UPGRADE: Table = &[
    ("workers", true),
    ("preserve-backup", false),
    ("no-preserve-backup", false),
];
const MOUNT: Table = &[("options", true)];
const RSYNC: Table = &[
    ("dry-run", false),
    ("verbose", false),
    ("progress", false),
    ("delete", false),
    ("checksum", false),
    ("update", false),
    ("include", true),
    ("exclude", true),
];
const NONE: Table = &[];

// The legacy programs.
const LEGACY_CREATE: Table = &[
    ("file", true),
    ("null", false),
    ("workers", true),
    ("shard-size-limit", true),
    ("overwrite", false),
];
const LEGACY_CREATE_RECURSIVE: Table = &[
    ("file", true),
    ("workers", true),
    ("shard-size-limit", true),
    ("overwrite", false),
    ("physical-order", false),
    ("strip-root", false),
];
const LEGACY_EXTRACT: Table = &[("file", true), ("target-directory", true)];
const LEGACY_EXTRACT_SINGLE: Table = &[("barecat-file", true), ("path", true)];
const LEGACY_MERGE: Table = &[
    ("output", true),
    ("shard-size-limit", true),
    ("overwrite", false),
    ("ignore-duplicates", false),
];
const LEGACY_MERGE_SYMLINK: Table = &[
    ("output", true),
    ("overwrite", false),
    ("ignore-duplicates", false),
];
const LEGACY_ARCHIVE2BARECAT: Table = &[("shard-size-limit", true), ("overwrite", false)];
const LEGACY_DEFRAG: Table = &[("quick", false)];
const LEGACY_UPGRADE_DATABASE: Table = &[("workers", true)];

/// Python's option table of `barecat SUBCOMMAND` (by the name or alias Python
/// gives it); `None` for subcommands Python does not have.
fn subcommand_table(sub: &str) -> Option<Table> {
    Some(match sub {
        "create" | "c" => CREATE,
        "add" | "a" => ADD,
        "extract" | "x" => EXTRACT,
        // Python's `ls` is its `list`; our `barecat ls` is another command.
        "list" | "l" | "t" => LIST,
        "shell" => SHELL,
        "du" => DU,
        "tree" => TREE,
        "verify" => VERIFY,
        "defrag" => DEFRAG,
        "reshard" => RESHARD,
        "subset" => SUBSET,
        "merge" => MERGE,
        "convert" => CONVERT,
        "upgrade" => UPGRADE,
        "mount" => MOUNT,
        "rsync" => RSYNC,
        "cat" | "find" | "browse" | "ncdu" | "index-to-csv" | "to-ncdu-json"
        | "completion-script" => NONE,
        _ => return None,
    })
}

/// Python's option table of one of its programs.
fn program_table(program: &str) -> Option<Table> {
    Some(match program {
        "barecat-create" => LEGACY_CREATE,
        "barecat-create-recursive" => LEGACY_CREATE_RECURSIVE,
        "barecat-extract" => LEGACY_EXTRACT,
        "barecat-extract-single" => LEGACY_EXTRACT_SINGLE,
        "barecat-merge" => LEGACY_MERGE,
        "barecat-merge-symlink" => LEGACY_MERGE_SYMLINK,
        "barecat-verify" => VERIFY,
        "barecat-defrag" => LEGACY_DEFRAG,
        "archive2barecat" => LEGACY_ARCHIVE2BARECAT,
        "barecat-upgrade-database" => LEGACY_UPGRADE_DATABASE,
        "barecat-index-to-csv" | "barecat-to-ncdu-json" | "barecat2archive" => NONE,
        _ => return None,
    })
}

/// The option of `table` that argparse takes `word` (without its dashes) for: the
/// option of that name, or the only one that starts with it.
fn resolve(table: Table, word: &str) -> Option<(&'static str, bool)> {
    if word.is_empty() {
        return None;
    }
    if let Some(&hit) = table.iter().find(|(name, _)| *name == word) {
        return Some(hit);
    }
    let mut found = table.iter().filter(|(name, _)| name.starts_with(word));
    match (found.next(), found.next()) {
        (Some(&hit), None) => Some(hit),
        _ => None,
    }
}

/// Spell out, in `args` (the arguments after the program or subcommand name),
/// every abbreviation of an option of `table`. `ours` tells whether one of our own
/// long options takes a value, so that its value is passed over.
fn expand(table: Table, args: &mut [OsString], ours: &dyn Fn(&str) -> bool) {
    let mut i = 0;
    while i < args.len() {
        let Some(s) = args[i].to_str() else {
            i += 1;
            continue;
        };
        if s == "--" {
            return;
        }
        let Some(body) = s.strip_prefix("--") else {
            i += 1;
            continue;
        };
        let (word, value) = match body.split_once('=') {
            Some((w, v)) => (w, Some(v.to_string())),
            None => (body, None),
        };
        match resolve(table, word) {
            Some((name, takes_value)) => {
                args[i] = match &value {
                    Some(v) => format!("--{name}={v}").into(),
                    None => format!("--{name}").into(),
                };
                i += if takes_value && value.is_none() { 2 } else { 1 };
            }
            None => i += if value.is_none() && ours(word) { 2 } else { 1 },
        }
    }
}

/// Does the long option `name` (exactly) of `cmd` take a value?
fn takes_value(cmd: &clap::Command, name: &str) -> bool {
    cmd.get_arguments().any(|a| {
        a.get_long() == Some(name)
            && matches!(
                a.get_action(),
                clap::ArgAction::Set | clap::ArgAction::Append
            )
    })
}

/// Rewrite the abbreviations of the argument vector of the program `program`
/// (`argv[0]` included): for a legacy program by its own table, for `barecat` by
/// the table of the subcommand in `argv[1]`. `cmd` finds our options' values.
pub fn expand_argv(
    program: &str,
    mut argv: Vec<OsString>,
    cmd: &dyn Fn(&str) -> Option<clap::Command>,
) -> Vec<OsString> {
    if program == "barecat" {
        let Some(sub) = argv.get(1).and_then(|a| a.to_str()).map(str::to_string) else {
            return argv;
        };
        let (Some(table), Some(c)) = (subcommand_table(&sub), cmd(&sub)) else {
            return argv;
        };
        expand(table, &mut argv[2..], &|w| takes_value(&c, w));
    } else if let (Some(table), Some(c)) = (program_table(program), cmd(program)) {
        if argv.len() > 1 {
            expand(table, &mut argv[1..], &|w| takes_value(&c, w));
        }
    }
    argv
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(table: Table, args: &[&str]) -> Vec<String> {
        let mut v: Vec<OsString> = args.iter().map(OsString::from).collect();
        expand(table, &mut v, &|w| w == "index-mode");
        v.into_iter().map(|a| a.into_string().unwrap()).collect()
    }

    #[test]
    fn prefixes_are_spelt_out() {
        assert_eq!(
            run(
                LEGACY_CREATE,
                &["--null", "--file=out", "--over", "--shard-size=22"]
            ),
            [
                "--null",
                "--file=out",
                "--overwrite",
                "--shard-size-limit=22"
            ]
        );
        // `--f` is `--file` for the legacy program, `--files-from` is `--fi…` for
        // `barecat create`, where `--f` is ambiguous (and left to clap).
        assert_eq!(run(LEGACY_CREATE, &["--f", "x"]), ["--file", "x"]);
        assert_eq!(run(CREATE, &["--file", "x"]), ["--files-from", "x"]);
        assert_eq!(run(CREATE, &["--f", "x"]), ["--f", "x"]);
        // A value is never rewritten, nor anything after `--`.
        assert_eq!(
            run(CREATE, &["--exc", "--inc", "--inc", "a", "--", "--nu"]),
            ["--exclude", "--inc", "--include", "a", "--", "--nu"]
        );
        // Our own options' values are passed over too.
        assert_eq!(
            run(CREATE, &["--index-mode", "--nul", "--nul"]),
            ["--index-mode", "--nul", "--null"]
        );
        // Single dashes are not long options.
        assert_eq!(run(CREATE, &["-nul"]), ["-nul"]);
        // `--no-preserve-backup` and `--preserve-backup`: a prefix of one only.
        assert_eq!(run(UPGRADE, &["--no"]), ["--no-preserve-backup"]);
        assert_eq!(run(UPGRADE, &["--pre"]), ["--preserve-backup"]);
    }
}
