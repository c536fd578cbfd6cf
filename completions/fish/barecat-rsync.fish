complete -c barecat-rsync -l include -d 'Do not exclude names matching PATTERN (overrides --exclude; repeatable)' -r
complete -c barecat-rsync -l exclude -d 'Leave out names matching PATTERN (repeatable)' -r
complete -c barecat-rsync -s j -l workers -d 'Worker threads [default: the number of cores]' -r
complete -c barecat-rsync -l commit-interval-ms -d 'Commit at least every MS milliseconds (testing aid)' -r
complete -c barecat-rsync -s n -l dry-run -d 'Print what would be done, and change nothing'
complete -c barecat-rsync -s v -l verbose -d 'Print a line for every file (and a summary on stderr)'
complete -c barecat-rsync -l progress -d 'Show a progress bar (on stderr, when it is a terminal)'
complete -c barecat-rsync -l delete -d 'Delete the files of DEST that no SOURCE has'
complete -c barecat-rsync -s c -l checksum -d 'Compare files by CRC32C, not by size and modification time'
complete -c barecat-rsync -s u -l update -d 'Keep files whose copy at DEST is as new or newer'
complete -c barecat-rsync -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat-rsync -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat-rsync -s h -l help -d 'Print help'
complete -c barecat-rsync -s V -l version -d 'Print version'
