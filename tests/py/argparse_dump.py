"""Dump the command lines of Python barecat's 14 programs as JSON.

Each program's argparse parser is caught as it starts parsing (parse_args is replaced
by a function that raises with the parser), without running anything. For each
program (and each subcommand of `barecat`): every option with its option strings,
whether it takes a value, its type (int, float, str), its choices and whether it is
required; every positional with its nargs; and, for every long option, every prefix
that argparse resolves to it (an unambiguous abbreviation, `allow_abbrev`).

Usage: python argparse_dump.py OUT.json
"""

import argparse
import importlib
import json
import sys

PROGRAMS = {
    'barecat': 'barecat.cli.main:main',
    'barecat-create': 'barecat.cli.legacy:create',
    'barecat-create-recursive': 'barecat.cli.legacy:create_recursive',
    'barecat-extract': 'barecat.cli.legacy:extract',
    'barecat-extract-single': 'barecat.cli.legacy:extract_single',
    'barecat-index-to-csv': 'barecat.cli.legacy:index_to_csv',
    'barecat-merge': 'barecat.cli.legacy:merge',
    'barecat-merge-symlink': 'barecat.cli.legacy:merge_symlink',
    'barecat-verify': 'barecat.cli.legacy:verify_integrity',
    'barecat-to-ncdu-json': 'barecat.cli.legacy:print_ncdu_json',
    'barecat-defrag': 'barecat.cli.legacy:defrag',
    'archive2barecat': 'barecat.cli.legacy:archive2barecat',
    'barecat2archive': 'barecat.cli.legacy:barecat2archive',
    'barecat-upgrade-database': 'barecat.maintenance.upgrade_database:main',
}


class Caught(Exception):
    def __init__(self, parser):
        self.parser = parser


def catch(self, args=None, namespace=None):
    raise Caught(self)


def describe(parser):
    options, positionals = [], []
    longs = []
    for a in parser._actions:
        if isinstance(a, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        if a.option_strings:
            takes_value = a.nargs != 0
            kind = getattr(a.type, '__name__', None) if a.type else 'str'
            options.append(
                dict(
                    strings=a.option_strings,
                    dest=a.dest,
                    takes_value=takes_value,
                    type=kind if takes_value else None,
                    choices=list(a.choices) if a.choices else None,
                    required=bool(a.required),
                )
            )
            longs += [s for s in a.option_strings if s.startswith('--')]
        else:
            positionals.append(dict(dest=a.dest, nargs=a.nargs, choices=list(a.choices or [])))
    # Every prefix of every long option that argparse takes for that option: an exact
    # match, or the only option string with that prefix (Python 3.11's rule).
    all_strings = [s for a in parser._actions for s in a.option_strings]
    prefixes = {}
    for full in longs:
        ok = []
        for n in range(3, len(full) + 1):
            p = full[:n]
            if p in all_strings and p != full:
                continue
            matches = [s for s in all_strings if s.startswith(p)]
            if p == full or matches == [full]:
                ok.append(p)
        prefixes[full] = ok
    return dict(options=options, positionals=positionals, prefixes=prefixes)


def main():
    # barecat.maintenance.upgrade_database imports a module that 0.3.1 does not
    # install (spec: its upgrade is broken); a stand-in lets its parser be read.
    import types

    sys.modules.setdefault('barecat_cython', types.ModuleType('barecat_cython'))
    argparse.ArgumentParser.parse_args = catch
    argparse.ArgumentParser.parse_known_args = catch
    out = {}
    for prog, target in PROGRAMS.items():
        mod, fn = target.split(':')
        saved = sys.argv
        sys.argv = [prog]
        try:
            getattr(importlib.import_module(mod), fn)()
        except Caught as c:
            parser = c.parser
        finally:
            sys.argv = saved
        entry = describe(parser)
        subs = {}
        for a in parser._actions:
            if isinstance(a, argparse._SubParsersAction):
                seen = {}
                for name, sub in a.choices.items():
                    if id(sub) in seen:
                        continue
                    seen[id(sub)] = name
                    subs[name] = describe(sub)
        if subs:
            entry['subcommands'] = subs
        out[prog] = entry
    with open(sys.argv[1], 'w') as f:
        json.dump(out, f, indent=1)


if __name__ == '__main__':
    main()
