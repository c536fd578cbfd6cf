complete -c barecat-merge -s o -l output -d 'The output archive' -r -F
complete -c barecat-merge -l duplicates -d 'Several files with the same path (in two inputs, or twice in a tar input): keep the first, the last, or fail (the default, checked before anything is written where the inputs are barecat archives)' -r -f -a "first\t'Keep the first copy; each later one is skipped, with a note'
last\t'Keep the last copy, as tar -x leaves it; each replacement is noted'
error\t'Stop at the first duplicate'"
complete -c barecat-merge -s s -l shard-size-limit -d 'Start a new shard before one would exceed SIZE (like 10G, 500M, 1.5G, 4096); stored in the archive. Without it an existing archive keeps its limit, and a new one is unlimited' -r
complete -c barecat-merge -l prefix -d 'Put every input\'s files below the directory PATH' -r
complete -c barecat-merge -l pattern -d 'Only take the files matching GLOB (their path in the input)' -r
complete -c barecat-merge -s i -l include -d 'Rule: take the files matching GLOB (rules are tried in command-line order; the first that matches decides; repeatable)' -r
complete -c barecat-merge -s x -l exclude -d 'Rule: leave out the files matching GLOB (see -i; repeatable)' -r
complete -c barecat-merge -l crash-after-steps -d 'End abruptly after N steps of putting the output in place (for tests)' -r
complete -c barecat-merge -s f -l force -l overwrite -d 'Replace the output if it exists'
complete -c barecat-merge -s a -l append -d 'Add to the output if it exists (files already in it win)'
complete -c barecat-merge -l ignore-duplicates -d 'Keep the first of several files with the same path instead of failing (the same as --duplicates first)'
complete -c barecat-merge -l symlink -d 'Link the inputs\' shards instead of copying (see barecat-merge-symlink)'
complete -c barecat-merge -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat-merge -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat-merge -l as-subdirs -d 'Put each input\'s files below a directory named after the input'
complete -c barecat-merge -s h -l help -d 'Print help (see more with \'--help\')'
complete -c barecat-merge -s V -l version -d 'Print version'
