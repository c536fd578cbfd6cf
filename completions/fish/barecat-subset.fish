complete -c barecat-subset -s o -l output -d 'The archive to create' -r -F
complete -c barecat-subset -l pattern -d 'Take the files matching GLOB (a trailing \'/\' stands for \'/**\'; \'*\' does not cross \'/\', \'**\' matches any number of directories; names starting with \'.\' are matched too)' -r
complete -c barecat-subset -s i -l include -d 'Rule: take the files matching GLOB (rules are tried in command-line order; the first that matches decides, a file matching none is taken; repeatable)' -r
complete -c barecat-subset -s x -l exclude -d 'Rule: leave out the files matching GLOB (see -i; repeatable)' -r
complete -c barecat-subset -s s -l shard-size-limit -d 'Start a new shard before one would exceed SIZE (like 10G, 500M, 1.5G, 4096); stored in the archive. Without it an existing archive keeps its limit, and a new one is unlimited' -r
complete -c barecat-subset -l crash-after-steps -d 'End abruptly after N steps of putting the output in place (for tests)' -r
complete -c barecat-subset -s f -l force -d 'Replace the output if it exists'
complete -c barecat-subset -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat-subset -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat-subset -s h -l help -d 'Print help'
complete -c barecat-subset -s V -l version -d 'Print version'
