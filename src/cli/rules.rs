//! `--pattern GLOB` and `-i/--include PAT`, `-x/--exclude PAT` as Python barecat's
//! `subset` (and `extract`, `merge`) take them: one glob, or include/exclude rules
//! applied in the order they were given on the command line, the first matching
//! rule deciding (spec §12.4). clap keeps the values of each option in order but
//! not their interleaving, so the rules are rebuilt from the positions of the
//! values ([`clap::ArgMatches::indices_of`]).

use clap::{Arg, ArgAction, ArgMatches, Command, FromArgMatches};

use crate::export::select::MemberFilter;
use crate::glob::GlobOptions;

/// The selection options; `#[command(flatten)]` them into a command's arguments.
#[derive(Debug, Clone, Default)]
pub struct FilterArgs {
    /// `--pattern`, as given.
    pub pattern: Option<String>,
    /// `-i`/`-x` rules in command-line order: (include?, pattern).
    pub rules: Vec<(bool, String)>,
}

impl FilterArgs {
    /// The filter. `--pattern` is matched with `pattern_opts` (Python barecat's
    /// `subset` and `merge` match it recursively with hidden files included). A
    /// pattern together with rules is a usage error, worded as Python barecat's.
    pub fn filter(&self, pattern_opts: GlobOptions) -> anyhow::Result<MemberFilter> {
        match &self.pattern {
            Some(_) if !self.rules.is_empty() => {
                crate::usage!("--pattern is incompatible with --include/--exclude")
            }
            Some(p) => Ok(MemberFilter::pattern(p, pattern_opts).map_err(super::ingest::plain)?),
            None => Ok(MemberFilter::rules(&self.rules).map_err(super::ingest::plain)?),
        }
    }
}

impl FromArgMatches for FilterArgs {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut rules: Vec<(usize, bool, String)> = Vec::new();
        for (id, include) in [("include", true), ("exclude", false)] {
            if let (Some(values), Some(at)) = (m.get_many::<String>(id), m.indices_of(id)) {
                rules.extend(at.zip(values).map(|(i, v)| (i, include, v.clone())));
            }
        }
        rules.sort_by_key(|r| r.0);
        Ok(FilterArgs {
            pattern: m.get_one::<String>("pattern").cloned(),
            rules: rules.into_iter().map(|(_, inc, p)| (inc, p)).collect(),
        })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = FilterArgs::from_arg_matches(m)?;
        Ok(())
    }
}

impl clap::Args for FilterArgs {
    fn augment_args(cmd: Command) -> Command {
        cmd.arg(Arg::new("pattern").long("pattern").value_name("GLOB").help(
            "Take the files matching GLOB (a trailing '/' stands for '/**'; '*' \
                     does not cross '/', '**' matches any number of directories)",
        ))
        .arg(
            Arg::new("include")
                .short('i')
                .long("include")
                .value_name("PAT")
                .action(ArgAction::Append)
                .help(
                    "Take the paths matching PAT (repeatable; with -x, the first rule \
                     that matches a path decides, and paths matching none are taken)",
                ),
        )
        .arg(
            Arg::new("exclude")
                .short('x')
                .long("exclude")
                .value_name("PAT")
                .action(ArgAction::Append)
                .help("Leave out the paths matching PAT (repeatable; see -i)"),
        )
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment_args(cmd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, Parser};

    #[derive(Parser)]
    struct T {
        #[command(flatten)]
        f: FilterArgs,
    }

    #[test]
    fn rules_keep_their_command_line_order() {
        let t = T::parse_from(["t", "-x", "a/*", "-i", "a/b", "--exclude", "c", "-i", "d"]);
        assert_eq!(
            t.f.rules,
            vec![
                (false, "a/*".to_string()),
                (true, "a/b".to_string()),
                (false, "c".to_string()),
                (true, "d".to_string())
            ]
        );
        let f = t.f.filter(GlobOptions::default()).unwrap();
        assert!(!f.selects("a/x"));
        assert!(!f.selects("a/b"), "the first matching rule decides");
        assert!(f.selects("e"), "no rule matches: taken");
        assert!(T::try_parse_from(["t", "--pattern", "x", "-i", "y"])
            .unwrap()
            .f
            .filter(GlobOptions::default())
            .is_err());
        T::command().debug_assert();
    }
}
