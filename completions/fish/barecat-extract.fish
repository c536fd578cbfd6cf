complete -c barecat-extract -s C -l directory -d 'Extract into DIR (created if missing)' -r -F
complete -c barecat-extract -l strip-components -d 'Remove N leading components from every path; members with nothing left are skipped' -r
complete -c barecat-extract -l pattern -d 'Only extract the files matching GLOB (Python glob semantics)' -r
complete -c barecat-extract -s i -l include -d 'Rule: extract the files matching GLOB (rules are tried in command-line order; the first that matches decides; repeatable)' -r
complete -c barecat-extract -s x -l exclude -d 'Rule: leave out the files matching GLOB (see -i; repeatable)' -r
complete -c barecat-extract -s j -l workers -d 'Worker threads [default: the number of cores]' -r
complete -c barecat-extract -l file -d 'The archive, in the legacy form `--file ARCH --target-directory DIR`' -r -F
complete -c barecat-extract -s f -l overwrite -l force -d 'Replace existing files and symbolic links (never directories)'
complete -c barecat-extract -s p -l same-permissions -d 'Also restore setuid, setgid and sticky bits'
complete -c barecat-extract -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat-extract -s h -l help -d 'Print help'
complete -c barecat-extract -s V -l version -d 'Print version'
