complete -c barecat-from-tar -l symlinks -d 'What to do with symbolic links' -r -f -a "skip\t'Skip them and count them in the summary'
error\t'Report each one (exit status 1)'"
complete -c barecat-from-tar -l duplicates -d 'Several members of one name (a tar appended to with tar -r): keep the last (what tar -x leaves), the first, or stop. Without this option the last is kept and each duplicate is reported as a problem (exit status 1)' -r -f -a "first\t'Keep the first copy; each later one is skipped, with a note'
last\t'Keep the last copy, as tar -x leaves it; each replacement is noted'
error\t'Stop at the first duplicate'"
complete -c barecat-from-tar -s i -l include -d 'Only take paths matching GLOB, or lying below a directory that matches (repeatable). A GLOB without \'/\' matches names at any depth' -r
complete -c barecat-from-tar -l exclude -d 'Skip paths matching GLOB, and everything below a directory that matches (repeatable). A GLOB without \'/\' matches names at any depth' -r
complete -c barecat-from-tar -l strip-components -d 'Remove N leading components from stored paths (entries left empty are skipped)' -r
complete -c barecat-from-tar -l buffer-size -d 'Memory for file contents in flight between readers and the writer; files above a quarter of it are streamed [default: 16M]' -r
complete -c barecat-from-tar -l commit-interval-ms -d 'Commit at least every MS milliseconds (testing aid)' -r
complete -c barecat-from-tar -l name-encoding -d 'Decode member names that are not valid UTF-8 from ENC (cp866, koi8-r, cp1251, shift_jis, cp932, euc-jp, cp437, or another WHATWG label); zip names without the UTF-8 flag are CP437 unless this says otherwise' -r
complete -c barecat-from-tar -s s -l shard-size-limit -d 'Start a new shard before one would exceed SIZE (like 10G, 500M, 1.5G, 4096); stored in the archive. Without it an existing archive keeps its limit, and a new one is unlimited' -r
complete -c barecat-from-tar -s f -l force -d 'Overwrite an existing archive (all its shards are removed first)'
complete -c barecat-from-tar -s a -l append -d 'Add to an existing archive (created when missing)'
complete -c barecat-from-tar -l resume -d 'Finish an interrupted run: keep what was committed, remove the bytes the interrupted writer left behind, and skip every path already in the archive'
complete -c barecat-from-tar -l strict -d 'Stop at the first entry that cannot be added, instead of skipping it'
complete -c barecat-from-tar -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat-from-tar -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat-from-tar -l wrap -d 'Index the tar where it lies instead of copying its members: shard 0 of the archive becomes a link to the tar (which must stay where it is and be left unchanged), and every file gets its CRC32C. The tar must be uncompressed'
complete -c barecat-from-tar -s h -l help -d 'Print help (see more with \'--help\')'
complete -c barecat-from-tar -s V -l version -d 'Print version'
