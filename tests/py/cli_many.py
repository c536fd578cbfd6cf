"""Python barecat's `barecat` command run with many argument lists, one interpreter.

usage: cli_many.py OUTDIR < cases.json

cases.json is a JSON list of argument lists (without the program name). Each case
runs what the `barecat` console script runs (`barecat.cli.main.main()` with
`sys.argv` set) in a child forked from this interpreter, with its standard output
and error going to OUTDIR/N.out and OUTDIR/N.err; the exit status of each case is
printed, one per line, in order. Forking after the import makes each case cost
milliseconds instead of an interpreter start, and gives each case fresh module
state, as a separate run of the program would have.
"""
import json
import os
import sys

from barecat.cli.main import main

# What the commands import when they run, imported once before forking.
import barecat  # noqa: F401,E402
import barecat.cli.commands  # noqa: F401,E402
import datetime, grp, locale, pwd  # noqa: F401,E401,E402


def run(n, argv, outdir):
    pid = os.fork()
    if pid == 0:
        try:
            for fd, ext in ((1, "out"), (2, "err")):
                f = os.open(os.path.join(outdir, f"{n}.{ext}"),
                            os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(f, fd)
                os.close(f)
            sys.argv = ["barecat"] + argv
            code = 0
            try:
                r = main()
                code = r if isinstance(r, int) else 0
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            except BaseException:
                import traceback
                traceback.print_exc()
                code = 1
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(locals().get("code", 1))
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def main_many():
    outdir = sys.argv[1]
    cases = json.load(sys.stdin)
    for n, argv in enumerate(cases):
        print(run(n, argv, outdir), flush=True)


if __name__ == "__main__":
    main_many()
