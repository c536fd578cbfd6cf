complete -c barecat-add -s T -l files-from -d 'Read the list of paths to add from FILE (\'-\' for stdin), one per line; repeatable' -r -F
complete -c barecat-add -s C -l directory -d 'Read the paths relative to DIR (ARCHIVE and -T lists are not affected)' -r -F
complete -c barecat-add -s i -l include -d 'Only take paths matching GLOB, or lying below a directory that matches (repeatable). A GLOB without \'/\' matches names at any depth' -r
complete -c barecat-add -l exclude -d 'Skip paths matching GLOB, and everything below a directory that matches (repeatable). A GLOB without \'/\' matches names at any depth' -r
complete -c barecat-add -l strip-components -d 'Remove N leading components from stored paths (entries left empty are skipped)' -r
complete -c barecat-add -l buffer-size -d 'Memory for file contents in flight between readers and the writer; files above a quarter of it are streamed [default: 16M]' -r
complete -c barecat-add -l commit-interval-ms -d 'Commit at least every MS milliseconds (testing aid)' -r
complete -c barecat-add -s s -l shard-size-limit -d 'Start a new shard before one would exceed SIZE (like 10G, 500M, 1.5G, 4096); stored in the archive. Without it an existing archive keeps its limit, and a new one is unlimited' -r
complete -c barecat-add -s j -l workers -d 'Reader threads [default: 16, or the number of cores if larger]' -r
complete -c barecat-add -s 0 -l null -d 'Paths in lists are terminated by NUL characters (find -print0)'
complete -c barecat-add -s c -l create -d 'Create the archive if it does not exist'
complete -c barecat-add -l resume -d 'Finish an interrupted run: remove the bytes the interrupted writer left behind and skip every path already in the archive'
complete -c barecat-add -l strict -d 'Stop at the first entry that cannot be added, instead of skipping it'
complete -c barecat-add -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat-add -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat-add -l physical-order -d 'Accepted for compatibility with Python barecat; no effect (see barecat-create)'
complete -c barecat-add -s h -l help -d 'Print help'
complete -c barecat-add -s V -l version -d 'Print version'
