complete -c barecat-defrag -l time-limit -l max-seconds -d 'Time budget of --quick, in seconds' -r
complete -c barecat-defrag -l step-delay-ms -d 'Pause this many milliseconds between steps (for interruption tests)' -r
complete -c barecat-defrag -l crash-after-steps -d 'End abruptly after N steps, as a crash would (for tests)' -r
complete -c barecat-defrag -l quick -d 'Only move files from the end into earlier holes, for a limited time'
complete -c barecat-defrag -l smart -d 'Give back as much as a full defrag, moving as few bytes as a plan can tell'
complete -c barecat-defrag -s n -l dry-run -d 'Report the space that could be freed; change nothing'
complete -c barecat-defrag -l json -d 'Print the report (or, with --dry-run, the analysis) as one JSON document'
complete -c barecat-defrag -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat-defrag -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat-defrag -l small-steps -d 'Work in tiny steps (for tests)'
complete -c barecat-defrag -s h -l help -d 'Print help'
complete -c barecat-defrag -s V -l version -d 'Print version'
