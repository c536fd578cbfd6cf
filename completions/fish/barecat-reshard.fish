complete -c barecat-reshard -s s -l shard-size-limit -d 'The new shard size limit (like 10G, 500M, 1.5G, 4096)' -r
complete -c barecat-reshard -l step-delay-ms -d 'Pause this many milliseconds between steps (for interruption tests)' -r
complete -c barecat-reshard -l crash-after-steps -d 'End abruptly after N steps, as a crash would (for tests)' -r
complete -c barecat-reshard -l json -d 'Print the report as one JSON document'
complete -c barecat-reshard -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat-reshard -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat-reshard -l small-steps -d 'Work in tiny steps (for tests)'
complete -c barecat-reshard -s h -l help -d 'Print help'
complete -c barecat-reshard -s V -l version -d 'Print version'
