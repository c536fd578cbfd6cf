complete -c barecat-upgrade -s j -l workers -d 'Accepted for Python barecat\'s command line; nothing is computed in parallel' -r
complete -c barecat-upgrade -l crash-after-steps -d 'End abruptly after N steps, as a crash would (for tests)' -r
complete -c barecat-upgrade -l preserve-backup -d 'Keep the old index as INDEX.old (the default)'
complete -c barecat-upgrade -l no-preserve-backup -d 'Do not keep the old index'
complete -c barecat-upgrade -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat-upgrade -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat-upgrade -s h -l help -d 'Print help'
complete -c barecat-upgrade -s V -l version -d 'Print version'
