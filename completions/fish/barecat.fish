# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_barecat_global_optspecs
    string join \n list generate-docs= h/help V/version
end

function __fish_barecat_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_barecat_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_barecat_using_subcommand
    set -l cmd (__fish_barecat_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c barecat -n "__fish_barecat_needs_command" -l generate-docs -d 'Write man pages and shell completions below DIR' -r -F
complete -c barecat -n "__fish_barecat_needs_command" -l list -d 'List the commands'
complete -c barecat -n "__fish_barecat_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c barecat -n "__fish_barecat_needs_command" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "create" -d 'Create an archive from files and directories, or from a list of paths on stdin'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "c" -d 'Create an archive from files and directories, or from a list of paths on stdin'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "add" -d 'Add files and directories to an existing archive (Python barecat\'s `add`)'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "a" -d 'Add files and directories to an existing archive (Python barecat\'s `add`)'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "from-tar" -d 'Convert a tar archive (or a tar stream on stdin) into a barecat archive'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "from-zip" -d 'Convert a zip file into a barecat archive'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "from-archive" -d 'Convert an archive in any supported format into a barecat archive'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "convert" -d 'Convert between a barecat archive and a tar or zip file'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "extract" -d 'Extract files and directories from an archive into a directory'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "x" -d 'Extract files and directories from an archive into a directory'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "to-zip" -d 'Write the contents of an archive as a zip file'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "to-tar" -d 'Write the contents of an archive as a tar file'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "cat" -d 'Write the content of stored files to standard output'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "mount" -d 'Mount an archive as a file system (FUSE)'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "ls" -d 'List files and directories in an archive'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "du" -d 'Show the total size of directories'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "list" -d 'List archive contents as Python barecat\'s `list` does'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "l" -d 'List archive contents as Python barecat\'s `list` does'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "t" -d 'List archive contents as Python barecat\'s `list` does'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "find" -d 'Search for files and directories in an archive, like find(1)'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "tree" -d 'Display the directory tree of an archive'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "shell" -d 'Interactive shell over an archive'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "ncdu" -d 'Browse the disk usage of an archive, like ncdu'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "browse" -d 'Browse an archive in three columns, like ranger'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "to-ncdu-json" -d 'Export the directory tree for ncdu'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "index-to-csv" -d 'Dump the file rows of an index as CSV'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "verify" -d 'Check an archive: checksums, index consistency, shards'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "defrag" -d 'Compact the shards of an archive'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "merge" -d 'Merge archives into one'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "merge-symlink" -d 'Merge archives into one whose shards are links to theirs'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "subset" -d 'Copy the files of an archive that a pattern or rules select into a new archive'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "upgrade" -d 'Upgrade an archive\'s index to schema 0.3, in place'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "repair" -d 'Rebuild directory statistics and remove what an interrupted writer left behind'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "reshard" -d 'Repack an archive to a new shard size limit'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "rsync" -d 'Sync files between local paths and archives, like rsync'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "rm" -d 'Remove files and directories from an archive'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "mv" -d 'Move or rename files and directories inside an archive'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "chmod" -d 'Change the permission bits stored for files and directories'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "touch" -d 'Set the modification time of files and directories (or create empty files)'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "records" -d 'Integer-indexed record datasets, and record tables over barecat archives'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "sidecar" -d 'Build, check or remove the B-tree sidecar of an archive'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "completion-script" -d 'Print the shell completion script of barecat (or of one barecat-<command>)'
complete -c barecat -n "__fish_barecat_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c barecat -n "__fish_barecat_using_subcommand create" -s T -l files-from -d 'Read the list of paths to add from FILE (\'-\' for stdin), one per line; repeatable' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand create" -s C -l directory -d 'Read the paths relative to DIR (ARCHIVE and -T lists are not affected)' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand create" -s i -l include -d 'Only take paths matching GLOB, or lying below a directory that matches (repeatable). A GLOB without \'/\' matches names at any depth' -r
complete -c barecat -n "__fish_barecat_using_subcommand create" -l exclude -d 'Skip paths matching GLOB, and everything below a directory that matches (repeatable). A GLOB without \'/\' matches names at any depth' -r
complete -c barecat -n "__fish_barecat_using_subcommand create" -l strip-components -d 'Remove N leading components from stored paths (entries left empty are skipped)' -r
complete -c barecat -n "__fish_barecat_using_subcommand create" -l buffer-size -d 'Memory for file contents in flight between readers and the writer; files above a quarter of it are streamed [default: 16M]' -r
complete -c barecat -n "__fish_barecat_using_subcommand create" -l commit-interval-ms -d 'Commit at least every MS milliseconds (testing aid)' -r
complete -c barecat -n "__fish_barecat_using_subcommand create" -s s -l shard-size-limit -d 'Start a new shard before one would exceed SIZE (like 10G, 500M, 1.5G, 4096); stored in the archive. Without it an existing archive keeps its limit, and a new one is unlimited' -r
complete -c barecat -n "__fish_barecat_using_subcommand create" -s j -l workers -d 'Reader threads [default: 16, or the number of cores if larger]' -r
complete -c barecat -n "__fish_barecat_using_subcommand create" -l file -d 'Legacy: the archive to create (paths come from stdin)' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand create" -s 0 -l null -d 'Paths in lists are terminated by NUL characters (find -print0)'
complete -c barecat -n "__fish_barecat_using_subcommand create" -s f -l force -d 'Overwrite an existing archive (all its shards are removed first)'
complete -c barecat -n "__fish_barecat_using_subcommand create" -s a -l append -d 'Add to an existing archive (created when missing)'
complete -c barecat -n "__fish_barecat_using_subcommand create" -l resume -d 'Finish an interrupted run: keep what was committed, remove the bytes the interrupted writer left behind, and skip every path already in the archive'
complete -c barecat -n "__fish_barecat_using_subcommand create" -l strict -d 'Stop at the first entry that cannot be added, instead of skipping it'
complete -c barecat -n "__fish_barecat_using_subcommand create" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand create" -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat -n "__fish_barecat_using_subcommand create" -l overwrite -d 'Legacy: overwrite an existing archive (same as -f)'
complete -c barecat -n "__fish_barecat_using_subcommand create" -l physical-order -d 'Accepted for compatibility with Python barecat (which sorts the files by their place on disk first); no effect: many readers already run at once'
complete -c barecat -n "__fish_barecat_using_subcommand create" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand create" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand c" -s T -l files-from -d 'Read the list of paths to add from FILE (\'-\' for stdin), one per line; repeatable' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand c" -s C -l directory -d 'Read the paths relative to DIR (ARCHIVE and -T lists are not affected)' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand c" -s i -l include -d 'Only take paths matching GLOB, or lying below a directory that matches (repeatable). A GLOB without \'/\' matches names at any depth' -r
complete -c barecat -n "__fish_barecat_using_subcommand c" -l exclude -d 'Skip paths matching GLOB, and everything below a directory that matches (repeatable). A GLOB without \'/\' matches names at any depth' -r
complete -c barecat -n "__fish_barecat_using_subcommand c" -l strip-components -d 'Remove N leading components from stored paths (entries left empty are skipped)' -r
complete -c barecat -n "__fish_barecat_using_subcommand c" -l buffer-size -d 'Memory for file contents in flight between readers and the writer; files above a quarter of it are streamed [default: 16M]' -r
complete -c barecat -n "__fish_barecat_using_subcommand c" -l commit-interval-ms -d 'Commit at least every MS milliseconds (testing aid)' -r
complete -c barecat -n "__fish_barecat_using_subcommand c" -s s -l shard-size-limit -d 'Start a new shard before one would exceed SIZE (like 10G, 500M, 1.5G, 4096); stored in the archive. Without it an existing archive keeps its limit, and a new one is unlimited' -r
complete -c barecat -n "__fish_barecat_using_subcommand c" -s j -l workers -d 'Reader threads [default: 16, or the number of cores if larger]' -r
complete -c barecat -n "__fish_barecat_using_subcommand c" -l file -d 'Legacy: the archive to create (paths come from stdin)' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand c" -s 0 -l null -d 'Paths in lists are terminated by NUL characters (find -print0)'
complete -c barecat -n "__fish_barecat_using_subcommand c" -s f -l force -d 'Overwrite an existing archive (all its shards are removed first)'
complete -c barecat -n "__fish_barecat_using_subcommand c" -s a -l append -d 'Add to an existing archive (created when missing)'
complete -c barecat -n "__fish_barecat_using_subcommand c" -l resume -d 'Finish an interrupted run: keep what was committed, remove the bytes the interrupted writer left behind, and skip every path already in the archive'
complete -c barecat -n "__fish_barecat_using_subcommand c" -l strict -d 'Stop at the first entry that cannot be added, instead of skipping it'
complete -c barecat -n "__fish_barecat_using_subcommand c" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand c" -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat -n "__fish_barecat_using_subcommand c" -l overwrite -d 'Legacy: overwrite an existing archive (same as -f)'
complete -c barecat -n "__fish_barecat_using_subcommand c" -l physical-order -d 'Accepted for compatibility with Python barecat (which sorts the files by their place on disk first); no effect: many readers already run at once'
complete -c barecat -n "__fish_barecat_using_subcommand c" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand c" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand add" -s T -l files-from -d 'Read the list of paths to add from FILE (\'-\' for stdin), one per line; repeatable' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand add" -s C -l directory -d 'Read the paths relative to DIR (ARCHIVE and -T lists are not affected)' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand add" -s i -l include -d 'Only take paths matching GLOB, or lying below a directory that matches (repeatable). A GLOB without \'/\' matches names at any depth' -r
complete -c barecat -n "__fish_barecat_using_subcommand add" -l exclude -d 'Skip paths matching GLOB, and everything below a directory that matches (repeatable). A GLOB without \'/\' matches names at any depth' -r
complete -c barecat -n "__fish_barecat_using_subcommand add" -l strip-components -d 'Remove N leading components from stored paths (entries left empty are skipped)' -r
complete -c barecat -n "__fish_barecat_using_subcommand add" -l buffer-size -d 'Memory for file contents in flight between readers and the writer; files above a quarter of it are streamed [default: 16M]' -r
complete -c barecat -n "__fish_barecat_using_subcommand add" -l commit-interval-ms -d 'Commit at least every MS milliseconds (testing aid)' -r
complete -c barecat -n "__fish_barecat_using_subcommand add" -s s -l shard-size-limit -d 'Start a new shard before one would exceed SIZE (like 10G, 500M, 1.5G, 4096); stored in the archive. Without it an existing archive keeps its limit, and a new one is unlimited' -r
complete -c barecat -n "__fish_barecat_using_subcommand add" -s j -l workers -d 'Reader threads [default: 16, or the number of cores if larger]' -r
complete -c barecat -n "__fish_barecat_using_subcommand add" -s 0 -l null -d 'Paths in lists are terminated by NUL characters (find -print0)'
complete -c barecat -n "__fish_barecat_using_subcommand add" -s c -l create -d 'Create the archive if it does not exist'
complete -c barecat -n "__fish_barecat_using_subcommand add" -l resume -d 'Finish an interrupted run: remove the bytes the interrupted writer left behind and skip every path already in the archive'
complete -c barecat -n "__fish_barecat_using_subcommand add" -l strict -d 'Stop at the first entry that cannot be added, instead of skipping it'
complete -c barecat -n "__fish_barecat_using_subcommand add" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand add" -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat -n "__fish_barecat_using_subcommand add" -l physical-order -d 'Accepted for compatibility with Python barecat; no effect (see barecat-create)'
complete -c barecat -n "__fish_barecat_using_subcommand add" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand add" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand a" -s T -l files-from -d 'Read the list of paths to add from FILE (\'-\' for stdin), one per line; repeatable' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand a" -s C -l directory -d 'Read the paths relative to DIR (ARCHIVE and -T lists are not affected)' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand a" -s i -l include -d 'Only take paths matching GLOB, or lying below a directory that matches (repeatable). A GLOB without \'/\' matches names at any depth' -r
complete -c barecat -n "__fish_barecat_using_subcommand a" -l exclude -d 'Skip paths matching GLOB, and everything below a directory that matches (repeatable). A GLOB without \'/\' matches names at any depth' -r
complete -c barecat -n "__fish_barecat_using_subcommand a" -l strip-components -d 'Remove N leading components from stored paths (entries left empty are skipped)' -r
complete -c barecat -n "__fish_barecat_using_subcommand a" -l buffer-size -d 'Memory for file contents in flight between readers and the writer; files above a quarter of it are streamed [default: 16M]' -r
complete -c barecat -n "__fish_barecat_using_subcommand a" -l commit-interval-ms -d 'Commit at least every MS milliseconds (testing aid)' -r
complete -c barecat -n "__fish_barecat_using_subcommand a" -s s -l shard-size-limit -d 'Start a new shard before one would exceed SIZE (like 10G, 500M, 1.5G, 4096); stored in the archive. Without it an existing archive keeps its limit, and a new one is unlimited' -r
complete -c barecat -n "__fish_barecat_using_subcommand a" -s j -l workers -d 'Reader threads [default: 16, or the number of cores if larger]' -r
complete -c barecat -n "__fish_barecat_using_subcommand a" -s 0 -l null -d 'Paths in lists are terminated by NUL characters (find -print0)'
complete -c barecat -n "__fish_barecat_using_subcommand a" -s c -l create -d 'Create the archive if it does not exist'
complete -c barecat -n "__fish_barecat_using_subcommand a" -l resume -d 'Finish an interrupted run: remove the bytes the interrupted writer left behind and skip every path already in the archive'
complete -c barecat -n "__fish_barecat_using_subcommand a" -l strict -d 'Stop at the first entry that cannot be added, instead of skipping it'
complete -c barecat -n "__fish_barecat_using_subcommand a" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand a" -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat -n "__fish_barecat_using_subcommand a" -l physical-order -d 'Accepted for compatibility with Python barecat; no effect (see barecat-create)'
complete -c barecat -n "__fish_barecat_using_subcommand a" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand a" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand from-tar" -l symlinks -d 'What to do with symbolic links' -r -f -a "skip\t'Skip them and count them in the summary'
error\t'Report each one (exit status 1)'"
complete -c barecat -n "__fish_barecat_using_subcommand from-tar" -l duplicates -d 'Several members of one name (a tar appended to with tar -r): keep the last (what tar -x leaves), the first, or stop. Without this option the last is kept and each duplicate is reported as a problem (exit status 1)' -r -f -a "first\t'Keep the first copy; each later one is skipped, with a note'
last\t'Keep the last copy, as tar -x leaves it; each replacement is noted'
error\t'Stop at the first duplicate'"
complete -c barecat -n "__fish_barecat_using_subcommand from-tar" -s i -l include -d 'Only take paths matching GLOB, or lying below a directory that matches (repeatable). A GLOB without \'/\' matches names at any depth' -r
complete -c barecat -n "__fish_barecat_using_subcommand from-tar" -l exclude -d 'Skip paths matching GLOB, and everything below a directory that matches (repeatable). A GLOB without \'/\' matches names at any depth' -r
complete -c barecat -n "__fish_barecat_using_subcommand from-tar" -l strip-components -d 'Remove N leading components from stored paths (entries left empty are skipped)' -r
complete -c barecat -n "__fish_barecat_using_subcommand from-tar" -l buffer-size -d 'Memory for file contents in flight between readers and the writer; files above a quarter of it are streamed [default: 16M]' -r
complete -c barecat -n "__fish_barecat_using_subcommand from-tar" -l commit-interval-ms -d 'Commit at least every MS milliseconds (testing aid)' -r
complete -c barecat -n "__fish_barecat_using_subcommand from-tar" -l name-encoding -d 'Decode member names that are not valid UTF-8 from ENC (cp866, koi8-r, cp1251, shift_jis, cp932, euc-jp, cp437, or another WHATWG label); zip names without the UTF-8 flag are CP437 unless this says otherwise' -r
complete -c barecat -n "__fish_barecat_using_subcommand from-tar" -s s -l shard-size-limit -d 'Start a new shard before one would exceed SIZE (like 10G, 500M, 1.5G, 4096); stored in the archive. Without it an existing archive keeps its limit, and a new one is unlimited' -r
complete -c barecat -n "__fish_barecat_using_subcommand from-tar" -s f -l force -d 'Overwrite an existing archive (all its shards are removed first)'
complete -c barecat -n "__fish_barecat_using_subcommand from-tar" -s a -l append -d 'Add to an existing archive (created when missing)'
complete -c barecat -n "__fish_barecat_using_subcommand from-tar" -l resume -d 'Finish an interrupted run: keep what was committed, remove the bytes the interrupted writer left behind, and skip every path already in the archive'
complete -c barecat -n "__fish_barecat_using_subcommand from-tar" -l strict -d 'Stop at the first entry that cannot be added, instead of skipping it'
complete -c barecat -n "__fish_barecat_using_subcommand from-tar" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand from-tar" -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat -n "__fish_barecat_using_subcommand from-tar" -l wrap -d 'Index the tar where it lies instead of copying its members: shard 0 of the archive becomes a link to the tar (which must stay where it is and be left unchanged), and every file gets its CRC32C. The tar must be uncompressed'
complete -c barecat -n "__fish_barecat_using_subcommand from-tar" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c barecat -n "__fish_barecat_using_subcommand from-tar" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand from-zip" -l symlinks -d 'What to do with symbolic links' -r -f -a "skip\t'Skip them and count them in the summary'
error\t'Report each one (exit status 1)'"
complete -c barecat -n "__fish_barecat_using_subcommand from-zip" -l duplicates -d 'Several members of one name (a tar appended to with tar -r): keep the last (what tar -x leaves), the first, or stop. Without this option the last is kept and each duplicate is reported as a problem (exit status 1)' -r -f -a "first\t'Keep the first copy; each later one is skipped, with a note'
last\t'Keep the last copy, as tar -x leaves it; each replacement is noted'
error\t'Stop at the first duplicate'"
complete -c barecat -n "__fish_barecat_using_subcommand from-zip" -s i -l include -d 'Only take paths matching GLOB, or lying below a directory that matches (repeatable). A GLOB without \'/\' matches names at any depth' -r
complete -c barecat -n "__fish_barecat_using_subcommand from-zip" -l exclude -d 'Skip paths matching GLOB, and everything below a directory that matches (repeatable). A GLOB without \'/\' matches names at any depth' -r
complete -c barecat -n "__fish_barecat_using_subcommand from-zip" -l strip-components -d 'Remove N leading components from stored paths (entries left empty are skipped)' -r
complete -c barecat -n "__fish_barecat_using_subcommand from-zip" -l buffer-size -d 'Memory for file contents in flight between readers and the writer; files above a quarter of it are streamed [default: 16M]' -r
complete -c barecat -n "__fish_barecat_using_subcommand from-zip" -l commit-interval-ms -d 'Commit at least every MS milliseconds (testing aid)' -r
complete -c barecat -n "__fish_barecat_using_subcommand from-zip" -l name-encoding -d 'Decode member names that are not valid UTF-8 from ENC (cp866, koi8-r, cp1251, shift_jis, cp932, euc-jp, cp437, or another WHATWG label); zip names without the UTF-8 flag are CP437 unless this says otherwise' -r
complete -c barecat -n "__fish_barecat_using_subcommand from-zip" -s s -l shard-size-limit -d 'Start a new shard before one would exceed SIZE (like 10G, 500M, 1.5G, 4096); stored in the archive. Without it an existing archive keeps its limit, and a new one is unlimited' -r
complete -c barecat -n "__fish_barecat_using_subcommand from-zip" -s j -l workers -d 'Worker threads [default: the number of cores]' -r
complete -c barecat -n "__fish_barecat_using_subcommand from-zip" -s f -l force -d 'Overwrite an existing archive (all its shards are removed first)'
complete -c barecat -n "__fish_barecat_using_subcommand from-zip" -s a -l append -d 'Add to an existing archive (created when missing)'
complete -c barecat -n "__fish_barecat_using_subcommand from-zip" -l resume -d 'Finish an interrupted run: keep what was committed, remove the bytes the interrupted writer left behind, and skip every path already in the archive'
complete -c barecat -n "__fish_barecat_using_subcommand from-zip" -l strict -d 'Stop at the first entry that cannot be added, instead of skipping it'
complete -c barecat -n "__fish_barecat_using_subcommand from-zip" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand from-zip" -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat -n "__fish_barecat_using_subcommand from-zip" -l wrap -d 'Index the zip where it lies instead of copying its entries: shard 0 of the archive becomes a link to the zip (which must stay where it is and be left unchanged), and every file gets its CRC32C. Every entry must be stored (zip -0), none encrypted'
complete -c barecat -n "__fish_barecat_using_subcommand from-zip" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c barecat -n "__fish_barecat_using_subcommand from-zip" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand from-archive" -l symlinks -d 'What to do with symbolic links' -r -f -a "skip\t'Skip them and count them in the summary'
error\t'Report each one (exit status 1)'"
complete -c barecat -n "__fish_barecat_using_subcommand from-archive" -l duplicates -d 'Several members of one name (a tar appended to with tar -r): keep the last (what tar -x leaves), the first, or stop. Without this option the last is kept and each duplicate is reported as a problem (exit status 1)' -r -f -a "first\t'Keep the first copy; each later one is skipped, with a note'
last\t'Keep the last copy, as tar -x leaves it; each replacement is noted'
error\t'Stop at the first duplicate'"
complete -c barecat -n "__fish_barecat_using_subcommand from-archive" -s i -l include -d 'Only take paths matching GLOB, or lying below a directory that matches (repeatable). A GLOB without \'/\' matches names at any depth' -r
complete -c barecat -n "__fish_barecat_using_subcommand from-archive" -l exclude -d 'Skip paths matching GLOB, and everything below a directory that matches (repeatable). A GLOB without \'/\' matches names at any depth' -r
complete -c barecat -n "__fish_barecat_using_subcommand from-archive" -l strip-components -d 'Remove N leading components from stored paths (entries left empty are skipped)' -r
complete -c barecat -n "__fish_barecat_using_subcommand from-archive" -l buffer-size -d 'Memory for file contents in flight between readers and the writer; files above a quarter of it are streamed [default: 16M]' -r
complete -c barecat -n "__fish_barecat_using_subcommand from-archive" -l commit-interval-ms -d 'Commit at least every MS milliseconds (testing aid)' -r
complete -c barecat -n "__fish_barecat_using_subcommand from-archive" -l name-encoding -d 'Decode member names that are not valid UTF-8 from ENC (cp866, koi8-r, cp1251, shift_jis, cp932, euc-jp, cp437, or another WHATWG label); zip names without the UTF-8 flag are CP437 unless this says otherwise' -r
complete -c barecat -n "__fish_barecat_using_subcommand from-archive" -s s -l shard-size-limit -d 'Start a new shard before one would exceed SIZE (like 10G, 500M, 1.5G, 4096); stored in the archive. Without it an existing archive keeps its limit, and a new one is unlimited' -r
complete -c barecat -n "__fish_barecat_using_subcommand from-archive" -s j -l workers -d 'Worker threads [default: the number of cores]' -r
complete -c barecat -n "__fish_barecat_using_subcommand from-archive" -s f -l force -d 'Overwrite an existing archive (all its shards are removed first)'
complete -c barecat -n "__fish_barecat_using_subcommand from-archive" -s a -l append -d 'Add to an existing archive (created when missing)'
complete -c barecat -n "__fish_barecat_using_subcommand from-archive" -l resume -d 'Finish an interrupted run: keep what was committed, remove the bytes the interrupted writer left behind, and skip every path already in the archive'
complete -c barecat -n "__fish_barecat_using_subcommand from-archive" -l strict -d 'Stop at the first entry that cannot be added, instead of skipping it'
complete -c barecat -n "__fish_barecat_using_subcommand from-archive" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand from-archive" -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat -n "__fish_barecat_using_subcommand from-archive" -l wrap -d 'Index an uncompressed tar or a stored zip where it lies instead of copying it (see barecat-from-tar --wrap); other formats are refused'
complete -c barecat -n "__fish_barecat_using_subcommand from-archive" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c barecat -n "__fish_barecat_using_subcommand from-archive" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand convert" -s s -l shard-size-limit -d 'Start a new shard before one would exceed SIZE (like 10G, 500M, 1.5G, 4096); stored in the archive. Without it an existing archive keeps its limit, and a new one is unlimited' -r
complete -c barecat -n "__fish_barecat_using_subcommand convert" -l root-dir -d 'Put every member under the directory NAME/ (barecat to tar or zip)' -r
complete -c barecat -n "__fish_barecat_using_subcommand convert" -l name-encoding -d 'Decode member names that are not valid UTF-8 from ENC (cp866, koi8-r, cp1251, shift_jis, cp932, euc-jp, cp437, or another WHATWG label); zip names without the UTF-8 flag are CP437 unless this says otherwise' -r
complete -c barecat -n "__fish_barecat_using_subcommand convert" -s f -l force -d 'Replace OUT if it exists'
complete -c barecat -n "__fish_barecat_using_subcommand convert" -l stdin -d 'Read the tar from standard input; IN is its format'
complete -c barecat -n "__fish_barecat_using_subcommand convert" -l stdout -d 'Write a tar to standard output; OUT is its format'
complete -c barecat -n "__fish_barecat_using_subcommand convert" -l wrap -d 'Index an uncompressed tar or stored zip in place instead of copying it (tar or zip to barecat)'
complete -c barecat -n "__fish_barecat_using_subcommand convert" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand convert" -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat -n "__fish_barecat_using_subcommand convert" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand convert" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand extract" -s C -l directory -d 'Extract into DIR (created if missing)' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand extract" -l strip-components -d 'Remove N leading components from every path; members with nothing left are skipped' -r
complete -c barecat -n "__fish_barecat_using_subcommand extract" -l pattern -d 'Only extract the files matching GLOB (Python glob semantics)' -r
complete -c barecat -n "__fish_barecat_using_subcommand extract" -s i -l include -d 'Rule: extract the files matching GLOB (rules are tried in command-line order; the first that matches decides; repeatable)' -r
complete -c barecat -n "__fish_barecat_using_subcommand extract" -s x -l exclude -d 'Rule: leave out the files matching GLOB (see -i; repeatable)' -r
complete -c barecat -n "__fish_barecat_using_subcommand extract" -s j -l workers -d 'Worker threads [default: the number of cores]' -r
complete -c barecat -n "__fish_barecat_using_subcommand extract" -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat -n "__fish_barecat_using_subcommand extract" -l file -d 'The archive, in the legacy form `--file ARCH --target-directory DIR`' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand extract" -s f -l overwrite -l force -d 'Replace existing files and symbolic links (never directories)'
complete -c barecat -n "__fish_barecat_using_subcommand extract" -s p -l same-permissions -d 'Also restore setuid, setgid and sticky bits'
complete -c barecat -n "__fish_barecat_using_subcommand extract" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand extract" -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat -n "__fish_barecat_using_subcommand extract" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand extract" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand x" -s C -l directory -d 'Extract into DIR (created if missing)' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand x" -l strip-components -d 'Remove N leading components from every path; members with nothing left are skipped' -r
complete -c barecat -n "__fish_barecat_using_subcommand x" -l pattern -d 'Only extract the files matching GLOB (Python glob semantics)' -r
complete -c barecat -n "__fish_barecat_using_subcommand x" -s i -l include -d 'Rule: extract the files matching GLOB (rules are tried in command-line order; the first that matches decides; repeatable)' -r
complete -c barecat -n "__fish_barecat_using_subcommand x" -s x -l exclude -d 'Rule: leave out the files matching GLOB (see -i; repeatable)' -r
complete -c barecat -n "__fish_barecat_using_subcommand x" -s j -l workers -d 'Worker threads [default: the number of cores]' -r
complete -c barecat -n "__fish_barecat_using_subcommand x" -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat -n "__fish_barecat_using_subcommand x" -l file -d 'The archive, in the legacy form `--file ARCH --target-directory DIR`' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand x" -s f -l overwrite -l force -d 'Replace existing files and symbolic links (never directories)'
complete -c barecat -n "__fish_barecat_using_subcommand x" -s p -l same-permissions -d 'Also restore setuid, setgid and sticky bits'
complete -c barecat -n "__fish_barecat_using_subcommand x" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand x" -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat -n "__fish_barecat_using_subcommand x" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand x" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand to-zip" -l deflate -d 'Compress entries with deflate, at LEVEL 1-9 [default level: 6]; entries that do not shrink are stored' -r
complete -c barecat -n "__fish_barecat_using_subcommand to-zip" -l root-dir -d 'Put every entry under the directory NAME/ in the zip' -r
complete -c barecat -n "__fish_barecat_using_subcommand to-zip" -s j -l workers -d 'Worker threads [default: the number of cores]' -r
complete -c barecat -n "__fish_barecat_using_subcommand to-zip" -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat -n "__fish_barecat_using_subcommand to-zip" -s f -l force -d 'Replace OUTPUT if it exists'
complete -c barecat -n "__fish_barecat_using_subcommand to-zip" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand to-zip" -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat -n "__fish_barecat_using_subcommand to-zip" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand to-zip" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand to-tar" -l level -d 'Compression level [default: the format\'s own: gzip 6, zstd 3, xz 6, bzip2 9]' -r
complete -c barecat -n "__fish_barecat_using_subcommand to-tar" -l root-dir -d 'Put every member under the directory NAME/ in the tar' -r
complete -c barecat -n "__fish_barecat_using_subcommand to-tar" -s j -l workers -d 'Worker threads [default: the number of cores]' -r
complete -c barecat -n "__fish_barecat_using_subcommand to-tar" -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat -n "__fish_barecat_using_subcommand to-tar" -s z -l gzip -d 'Compress with gzip'
complete -c barecat -n "__fish_barecat_using_subcommand to-tar" -l zstd -d 'Compress with zstd'
complete -c barecat -n "__fish_barecat_using_subcommand to-tar" -s J -l xz -d 'Compress with xz'
complete -c barecat -n "__fish_barecat_using_subcommand to-tar" -l bzip2 -d 'Compress with bzip2'
complete -c barecat -n "__fish_barecat_using_subcommand to-tar" -s f -l force -d 'Replace OUTPUT if it exists'
complete -c barecat -n "__fish_barecat_using_subcommand to-tar" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand to-tar" -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat -n "__fish_barecat_using_subcommand to-tar" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand to-tar" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand cat" -s T -l files-from -d 'Read more paths from FILE (\'-\' for stdin), one per line' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand cat" -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat -n "__fish_barecat_using_subcommand cat" -s 0 -l null -d 'Paths in the list are terminated by NUL characters (find -print0)'
complete -c barecat -n "__fish_barecat_using_subcommand cat" -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat -n "__fish_barecat_using_subcommand cat" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand cat" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand mount" -s o -l options -d 'Mount options, comma-separated: FUSE\'s (allow_other, allow_root, ro, default_permissions, auto_unmount, noexec, …) and Python barecat\'s (rw, fg, mmap, overwrite, append_only, defrag, shard_size_limit=SIZE)' -r
complete -c barecat -n "__fish_barecat_using_subcommand mount" -l uid -d 'Show every entry as owned by this user id' -r
complete -c barecat -n "__fish_barecat_using_subcommand mount" -l gid -d 'Show every entry as owned by this group id' -r
complete -c barecat -n "__fish_barecat_using_subcommand mount" -l umask -d 'Clear these permission bits (octal) from every entry\'s mode' -r
complete -c barecat -n "__fish_barecat_using_subcommand mount" -l log -d 'Append the daemon\'s log lines (CRC mismatches, I/O errors) to FILE' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand mount" -l shard-size-limit -d 'With --writable: the archive\'s shard size limit from now on (e.g. 10G)' -r
complete -c barecat -n "__fish_barecat_using_subcommand mount" -s u -l unmount -d 'Unmount the archive mounted at the mount point given'
complete -c barecat -n "__fish_barecat_using_subcommand mount" -s z -l lazy -d 'With -u: detach the mount now even if it is busy (the daemon ends when the last file on it is closed)'
complete -c barecat -n "__fish_barecat_using_subcommand mount" -s f -l foreground -d 'Stay in the foreground (default: detach once the mount is ready)'
complete -c barecat -n "__fish_barecat_using_subcommand mount" -s w -l writable -d 'Accept writes: new files and directories, removals, renames'
complete -c barecat -n "__fish_barecat_using_subcommand mount" -l overwrite -d 'With --writable: start a new, empty archive in place of the one there'
complete -c barecat -n "__fish_barecat_using_subcommand mount" -l append-only -d 'With --writable: only additions (removals, renames and changes to the bytes of existing files fail with EPERM)'
complete -c barecat -n "__fish_barecat_using_subcommand mount" -l enable-defrag -d 'With --writable: defragment (quickly) once 100 MiB were removed or replaced and holes make up a tenth of the shards'
complete -c barecat -n "__fish_barecat_using_subcommand mount" -l mmap -d 'No effect (reads always go through the kernel\'s page cache); accepted as barecat-mount 0.1.3 accepts it'
complete -c barecat -n "__fish_barecat_using_subcommand mount" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand mount" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand mount" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand ls" -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat -n "__fish_barecat_using_subcommand ls" -s l -l long -d 'Long format: mode, links, owner, group, size, modification time, name'
complete -c barecat -n "__fish_barecat_using_subcommand ls" -s R -l recursive -d 'List every file below the directories, with full paths'
complete -c barecat -n "__fish_barecat_using_subcommand ls" -l json -d 'One JSON object per line, with every column (shard, offset, counters)'
complete -c barecat -n "__fish_barecat_using_subcommand ls" -l jsonl -d 'One JSON object per line, as Python barecat writes them'
complete -c barecat -n "__fish_barecat_using_subcommand ls" -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat -n "__fish_barecat_using_subcommand ls" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand ls" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand du" -s d -l max-depth -d 'Only entries at most N levels below PATH' -r
complete -c barecat -n "__fish_barecat_using_subcommand du" -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat -n "__fish_barecat_using_subcommand du" -s a -l all -d 'List files too, not only directories'
complete -c barecat -n "__fish_barecat_using_subcommand du" -s s -l summarize -d 'Only the total of PATH'
complete -c barecat -n "__fish_barecat_using_subcommand du" -s H -l human-readable -d 'Sizes like 1.5K, 20M, 3.1G (-h works too)'
complete -c barecat -n "__fish_barecat_using_subcommand du" -l json -d 'One JSON object per line: type, path, size (and files, for directories)'
complete -c barecat -n "__fish_barecat_using_subcommand du" -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat -n "__fish_barecat_using_subcommand du" -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand du" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand list" -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat -n "__fish_barecat_using_subcommand list" -s l -l long -d 'Long listing with sizes'
complete -c barecat -n "__fish_barecat_using_subcommand list" -s R -l recursive -d 'List recursively: every file below each directory'
complete -c barecat -n "__fish_barecat_using_subcommand list" -l jsonl -d 'Output as JSON lines (one JSON object per line)'
complete -c barecat -n "__fish_barecat_using_subcommand list" -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat -n "__fish_barecat_using_subcommand list" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand list" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand l" -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat -n "__fish_barecat_using_subcommand l" -s l -l long -d 'Long listing with sizes'
complete -c barecat -n "__fish_barecat_using_subcommand l" -s R -l recursive -d 'List recursively: every file below each directory'
complete -c barecat -n "__fish_barecat_using_subcommand l" -l jsonl -d 'Output as JSON lines (one JSON object per line)'
complete -c barecat -n "__fish_barecat_using_subcommand l" -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat -n "__fish_barecat_using_subcommand l" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand l" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand t" -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat -n "__fish_barecat_using_subcommand t" -s l -l long -d 'Long listing with sizes'
complete -c barecat -n "__fish_barecat_using_subcommand t" -s R -l recursive -d 'List recursively: every file below each directory'
complete -c barecat -n "__fish_barecat_using_subcommand t" -l jsonl -d 'Output as JSON lines (one JSON object per line)'
complete -c barecat -n "__fish_barecat_using_subcommand t" -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat -n "__fish_barecat_using_subcommand t" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand t" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand find" -l name -d 'Last path component matches this shell pattern' -r
complete -c barecat -n "__fish_barecat_using_subcommand find" -l path -l wholename -d 'Whole path matches this pattern (SQLite GLOB: \'*\' crosses \'/\')' -r
complete -c barecat -n "__fish_barecat_using_subcommand find" -l type -d 'f: files only, d: directories only' -r -f -a "f\t''
d\t''"
complete -c barecat -n "__fish_barecat_using_subcommand find" -l size -d 'Size greater (+N), less (-N) or equal (N), with K, M, G, T suffixes' -r
complete -c barecat -n "__fish_barecat_using_subcommand find" -l maxdepth -d 'At most N levels below PATH' -r
complete -c barecat -n "__fish_barecat_using_subcommand find" -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat -n "__fish_barecat_using_subcommand find" -l print0 -d 'End each path with a NUL byte instead of a newline'
complete -c barecat -n "__fish_barecat_using_subcommand find" -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat -n "__fish_barecat_using_subcommand find" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand find" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand tree" -s L -l level -d 'Show at most N levels below PATH' -r
complete -c barecat -n "__fish_barecat_using_subcommand tree" -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat -n "__fish_barecat_using_subcommand tree" -s d -l dirs-only -d 'List directories only'
complete -c barecat -n "__fish_barecat_using_subcommand tree" -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat -n "__fish_barecat_using_subcommand tree" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand tree" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand shell" -s c -l cmd -d 'Run these commands (separated by \';\') and exit' -r
complete -c barecat -n "__fish_barecat_using_subcommand shell" -s w -l write -d 'Open the archive for writing (put, mput, rm, mv, writing SQL)'
complete -c barecat -n "__fish_barecat_using_subcommand shell" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand shell" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand ncdu" -l print-screen -d 'Print the first screen (80x24) as text and exit, without a terminal (for benchmarks and scripts)'
complete -c barecat -n "__fish_barecat_using_subcommand ncdu" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand ncdu" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand browse" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand browse" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand to-ncdu-json" -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat -n "__fish_barecat_using_subcommand to-ncdu-json" -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat -n "__fish_barecat_using_subcommand to-ncdu-json" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand to-ncdu-json" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand index-to-csv" -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat -n "__fish_barecat_using_subcommand index-to-csv" -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat -n "__fish_barecat_using_subcommand index-to-csv" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand index-to-csv" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand verify" -s j -l workers -d 'Worker threads [default: the number of cores]' -r
complete -c barecat -n "__fish_barecat_using_subcommand verify" -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat -n "__fish_barecat_using_subcommand verify" -l quick -d 'Check the index and the shard lengths, and only the checksum of the last file'
complete -c barecat -n "__fish_barecat_using_subcommand verify" -l json -d 'Print one JSON document instead of text'
complete -c barecat -n "__fish_barecat_using_subcommand verify" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand verify" -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat -n "__fish_barecat_using_subcommand verify" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand verify" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand defrag" -l time-limit -l max-seconds -d 'Time budget of --quick, in seconds' -r
complete -c barecat -n "__fish_barecat_using_subcommand defrag" -l step-delay-ms -d 'Pause this many milliseconds between steps (for interruption tests)' -r
complete -c barecat -n "__fish_barecat_using_subcommand defrag" -l crash-after-steps -d 'End abruptly after N steps, as a crash would (for tests)' -r
complete -c barecat -n "__fish_barecat_using_subcommand defrag" -l quick -d 'Only move files from the end into earlier holes, for a limited time'
complete -c barecat -n "__fish_barecat_using_subcommand defrag" -l smart -d 'Give back as much as a full defrag, moving as few bytes as a plan can tell'
complete -c barecat -n "__fish_barecat_using_subcommand defrag" -s n -l dry-run -d 'Report the space that could be freed; change nothing'
complete -c barecat -n "__fish_barecat_using_subcommand defrag" -l json -d 'Print the report (or, with --dry-run, the analysis) as one JSON document'
complete -c barecat -n "__fish_barecat_using_subcommand defrag" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand defrag" -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat -n "__fish_barecat_using_subcommand defrag" -l small-steps -d 'Work in tiny steps (for tests)'
complete -c barecat -n "__fish_barecat_using_subcommand defrag" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand defrag" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand merge" -s o -l output -d 'The output archive' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand merge" -l duplicates -d 'Several files with the same path (in two inputs, or twice in a tar input): keep the first, the last, or fail (the default, checked before anything is written where the inputs are barecat archives)' -r -f -a "first\t'Keep the first copy; each later one is skipped, with a note'
last\t'Keep the last copy, as tar -x leaves it; each replacement is noted'
error\t'Stop at the first duplicate'"
complete -c barecat -n "__fish_barecat_using_subcommand merge" -s s -l shard-size-limit -d 'Start a new shard before one would exceed SIZE (like 10G, 500M, 1.5G, 4096); stored in the archive. Without it an existing archive keeps its limit, and a new one is unlimited' -r
complete -c barecat -n "__fish_barecat_using_subcommand merge" -l prefix -d 'Put every input\'s files below the directory PATH' -r
complete -c barecat -n "__fish_barecat_using_subcommand merge" -l pattern -d 'Only take the files matching GLOB (their path in the input)' -r
complete -c barecat -n "__fish_barecat_using_subcommand merge" -s i -l include -d 'Rule: take the files matching GLOB (rules are tried in command-line order; the first that matches decides; repeatable)' -r
complete -c barecat -n "__fish_barecat_using_subcommand merge" -s x -l exclude -d 'Rule: leave out the files matching GLOB (see -i; repeatable)' -r
complete -c barecat -n "__fish_barecat_using_subcommand merge" -l crash-after-steps -d 'End abruptly after N steps of putting the output in place (for tests)' -r
complete -c barecat -n "__fish_barecat_using_subcommand merge" -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat -n "__fish_barecat_using_subcommand merge" -s f -l force -l overwrite -d 'Replace the output if it exists'
complete -c barecat -n "__fish_barecat_using_subcommand merge" -s a -l append -d 'Add to the output if it exists (files already in it win)'
complete -c barecat -n "__fish_barecat_using_subcommand merge" -l ignore-duplicates -d 'Keep the first of several files with the same path instead of failing (the same as --duplicates first)'
complete -c barecat -n "__fish_barecat_using_subcommand merge" -l symlink -d 'Link the inputs\' shards instead of copying (see barecat-merge-symlink)'
complete -c barecat -n "__fish_barecat_using_subcommand merge" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand merge" -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat -n "__fish_barecat_using_subcommand merge" -l as-subdirs -d 'Put each input\'s files below a directory named after the input'
complete -c barecat -n "__fish_barecat_using_subcommand merge" -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat -n "__fish_barecat_using_subcommand merge" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c barecat -n "__fish_barecat_using_subcommand merge" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand merge-symlink" -s o -l output -d 'The output archive' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand merge-symlink" -l prefix -d 'Put every input\'s files below the directory PATH' -r
complete -c barecat -n "__fish_barecat_using_subcommand merge-symlink" -s f -l force -l overwrite -d 'Replace the output if it exists (its old links are removed)'
complete -c barecat -n "__fish_barecat_using_subcommand merge-symlink" -l ignore-duplicates -d 'Keep the first of several files with the same path instead of failing'
complete -c barecat -n "__fish_barecat_using_subcommand merge-symlink" -l as-subdirs -d 'Put each input\'s files below a directory named after the input (see barecat-merge)'
complete -c barecat -n "__fish_barecat_using_subcommand merge-symlink" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand merge-symlink" -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat -n "__fish_barecat_using_subcommand merge-symlink" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand merge-symlink" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand subset" -s o -l output -d 'The archive to create' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand subset" -l pattern -d 'Take the files matching GLOB (a trailing \'/\' stands for \'/**\'; \'*\' does not cross \'/\', \'**\' matches any number of directories; names starting with \'.\' are matched too)' -r
complete -c barecat -n "__fish_barecat_using_subcommand subset" -s i -l include -d 'Rule: take the files matching GLOB (rules are tried in command-line order; the first that matches decides, a file matching none is taken; repeatable)' -r
complete -c barecat -n "__fish_barecat_using_subcommand subset" -s x -l exclude -d 'Rule: leave out the files matching GLOB (see -i; repeatable)' -r
complete -c barecat -n "__fish_barecat_using_subcommand subset" -s s -l shard-size-limit -d 'Start a new shard before one would exceed SIZE (like 10G, 500M, 1.5G, 4096); stored in the archive. Without it an existing archive keeps its limit, and a new one is unlimited' -r
complete -c barecat -n "__fish_barecat_using_subcommand subset" -l crash-after-steps -d 'End abruptly after N steps of putting the output in place (for tests)' -r
complete -c barecat -n "__fish_barecat_using_subcommand subset" -s f -l force -d 'Replace the output if it exists'
complete -c barecat -n "__fish_barecat_using_subcommand subset" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand subset" -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat -n "__fish_barecat_using_subcommand subset" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand subset" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand upgrade" -s j -l workers -d 'Accepted for Python barecat\'s command line; nothing is computed in parallel' -r
complete -c barecat -n "__fish_barecat_using_subcommand upgrade" -l crash-after-steps -d 'End abruptly after N steps, as a crash would (for tests)' -r
complete -c barecat -n "__fish_barecat_using_subcommand upgrade" -l preserve-backup -d 'Keep the old index as INDEX.old (the default)'
complete -c barecat -n "__fish_barecat_using_subcommand upgrade" -l no-preserve-backup -d 'Do not keep the old index'
complete -c barecat -n "__fish_barecat_using_subcommand upgrade" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand upgrade" -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat -n "__fish_barecat_using_subcommand upgrade" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand upgrade" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand repair" -l no-trim -d 'Do not cut trailing bytes that no file refers to'
complete -c barecat -n "__fish_barecat_using_subcommand repair" -s q -l quiet -d 'Print nothing on success'
complete -c barecat -n "__fish_barecat_using_subcommand repair" -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat -n "__fish_barecat_using_subcommand repair" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand repair" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand reshard" -s s -l shard-size-limit -d 'The new shard size limit (like 10G, 500M, 1.5G, 4096)' -r
complete -c barecat -n "__fish_barecat_using_subcommand reshard" -l step-delay-ms -d 'Pause this many milliseconds between steps (for interruption tests)' -r
complete -c barecat -n "__fish_barecat_using_subcommand reshard" -l crash-after-steps -d 'End abruptly after N steps, as a crash would (for tests)' -r
complete -c barecat -n "__fish_barecat_using_subcommand reshard" -l json -d 'Print the report as one JSON document'
complete -c barecat -n "__fish_barecat_using_subcommand reshard" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand reshard" -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat -n "__fish_barecat_using_subcommand reshard" -l small-steps -d 'Work in tiny steps (for tests)'
complete -c barecat -n "__fish_barecat_using_subcommand reshard" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand reshard" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand rsync" -l include -d 'Do not exclude names matching PATTERN (overrides --exclude; repeatable)' -r
complete -c barecat -n "__fish_barecat_using_subcommand rsync" -l exclude -d 'Leave out names matching PATTERN (repeatable)' -r
complete -c barecat -n "__fish_barecat_using_subcommand rsync" -s j -l workers -d 'Worker threads [default: the number of cores]' -r
complete -c barecat -n "__fish_barecat_using_subcommand rsync" -l commit-interval-ms -d 'Commit at least every MS milliseconds (testing aid)' -r
complete -c barecat -n "__fish_barecat_using_subcommand rsync" -s n -l dry-run -d 'Print what would be done, and change nothing'
complete -c barecat -n "__fish_barecat_using_subcommand rsync" -s v -l verbose -d 'Print a line for every file (and a summary on stderr)'
complete -c barecat -n "__fish_barecat_using_subcommand rsync" -l progress -d 'Show a progress bar (on stderr, when it is a terminal)'
complete -c barecat -n "__fish_barecat_using_subcommand rsync" -l delete -d 'Delete the files of DEST that no SOURCE has'
complete -c barecat -n "__fish_barecat_using_subcommand rsync" -s c -l checksum -d 'Compare files by CRC32C, not by size and modification time'
complete -c barecat -n "__fish_barecat_using_subcommand rsync" -s u -l update -d 'Keep files whose copy at DEST is as new or newer'
complete -c barecat -n "__fish_barecat_using_subcommand rsync" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand rsync" -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat -n "__fish_barecat_using_subcommand rsync" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand rsync" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand rm" -s T -l files-from -d 'Read more paths from FILE (\'-\' for stdin), one per line' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand rm" -s r -l recursive -d 'Remove directories and everything below them'
complete -c barecat -n "__fish_barecat_using_subcommand rm" -s d -l dir -d 'Remove empty directories'
complete -c barecat -n "__fish_barecat_using_subcommand rm" -s f -l force -d 'Do not complain about paths that do not exist'
complete -c barecat -n "__fish_barecat_using_subcommand rm" -s 0 -l null -d 'Paths in the -T list are terminated by NUL characters'
complete -c barecat -n "__fish_barecat_using_subcommand rm" -s n -l dry-run -d 'Print what would be removed, and remove nothing'
complete -c barecat -n "__fish_barecat_using_subcommand rm" -s v -l verbose -d 'Print each path removed'
complete -c barecat -n "__fish_barecat_using_subcommand rm" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand rm" -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat -n "__fish_barecat_using_subcommand rm" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand rm" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand mv" -s T -l no-target-directory -d 'Treat DEST as the new name even when it is an existing directory'
complete -c barecat -n "__fish_barecat_using_subcommand mv" -s f -l force -d 'Replace an existing file, or an empty directory, at the new path'
complete -c barecat -n "__fish_barecat_using_subcommand mv" -s n -l dry-run -d 'Print what would be moved, and move nothing'
complete -c barecat -n "__fish_barecat_using_subcommand mv" -s v -l verbose -d 'Print each move'
complete -c barecat -n "__fish_barecat_using_subcommand mv" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand mv" -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat -n "__fish_barecat_using_subcommand mv" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand mv" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand chmod" -s R -l recursive -d 'Also change everything below the directories named'
complete -c barecat -n "__fish_barecat_using_subcommand chmod" -s n -l dry-run -d 'Print what would change, and change nothing'
complete -c barecat -n "__fish_barecat_using_subcommand chmod" -s v -l verbose -d 'Print each change'
complete -c barecat -n "__fish_barecat_using_subcommand chmod" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand chmod" -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat -n "__fish_barecat_using_subcommand chmod" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand chmod" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand touch" -s d -l date -d 'Use DATE instead of now: @SECONDS[.FRACTION] since the epoch, or YYYY-MM-DD[ HH:MM[:SS[.FRACTION]]] in local time (\'T\' may separate them)' -r
complete -c barecat -n "__fish_barecat_using_subcommand touch" -s r -l reference -d 'Use the modification time of the local file FILE instead of now' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand touch" -s c -l no-create -d 'Do not create files for paths that do not exist'
complete -c barecat -n "__fish_barecat_using_subcommand touch" -s R -l recursive -d 'Also change everything below the directories named'
complete -c barecat -n "__fish_barecat_using_subcommand touch" -s n -l dry-run -d 'Print what would change, and change nothing'
complete -c barecat -n "__fish_barecat_using_subcommand touch" -s v -l verbose -d 'Print each change'
complete -c barecat -n "__fish_barecat_using_subcommand touch" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand touch" -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat -n "__fish_barecat_using_subcommand touch" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand touch" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand records; and not __fish_seen_subcommand_from create append modify delete get gather info rebalance verify build to-archive help" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand records; and not __fish_seen_subcommand_from create append modify delete get gather info rebalance verify build to-archive help" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand records; and not __fish_seen_subcommand_from create append modify delete get gather info rebalance verify build to-archive help" -f -a "create" -d 'Create a dataset: record i is the i-th input'
complete -c barecat -n "__fish_barecat_using_subcommand records; and not __fish_seen_subcommand_from create append modify delete get gather info rebalance verify build to-archive help" -f -a "append" -d 'Append records to a dataset'
complete -c barecat -n "__fish_barecat_using_subcommand records; and not __fish_seen_subcommand_from create append modify delete get gather info rebalance verify build to-archive help" -f -a "modify" -d 'Replace record I with the content of FILE'
complete -c barecat -n "__fish_barecat_using_subcommand records; and not __fish_seen_subcommand_from create append modify delete get gather info rebalance verify build to-archive help" -f -a "delete" -d 'Delete records (the last record takes each deleted index)'
complete -c barecat -n "__fish_barecat_using_subcommand records; and not __fish_seen_subcommand_from create append modify delete get gather info rebalance verify build to-archive help" -f -a "get" -d 'Write the bytes of record I to standard output'
complete -c barecat -n "__fish_barecat_using_subcommand records; and not __fish_seen_subcommand_from create append modify delete get gather info rebalance verify build to-archive help" -f -a "gather" -d 'Write records in request order to standard output or to files'
complete -c barecat -n "__fish_barecat_using_subcommand records; and not __fish_seen_subcommand_from create append modify delete get gather info rebalance verify build to-archive help" -f -a "info" -d 'Length, chunks, bytes, utilization, dtype, compression'
complete -c barecat -n "__fish_barecat_using_subcommand records; and not __fish_seen_subcommand_from create append modify delete get gather info rebalance verify build to-archive help" -f -a "rebalance" -d 'Rewrite the live records into new chunks, giving back garbage'
complete -c barecat -n "__fish_barecat_using_subcommand records; and not __fish_seen_subcommand_from create append modify delete get gather info rebalance verify build to-archive help" -f -a "verify" -d 'Check every entry, chunk and checksum'
complete -c barecat -n "__fish_barecat_using_subcommand records; and not __fish_seen_subcommand_from create append modify delete get gather info rebalance verify build to-archive help" -f -a "build" -d 'Write the record table of a barecat archive (ARCHIVE-records)'
complete -c barecat -n "__fish_barecat_using_subcommand records; and not __fish_seen_subcommand_from create append modify delete get gather info rebalance verify build to-archive help" -f -a "to-archive" -d 'Copy a dataset into a new barecat archive (files named by record index)'
complete -c barecat -n "__fish_barecat_using_subcommand records; and not __fish_seen_subcommand_from create append modify delete get gather info rebalance verify build to-archive help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from create" -s T -l files-from -d 'Read the list of inputs from LIST, one per line (\'-\' for standard input); with --from, paths inside the archive' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from create" -s C -l directory -d 'Read inputs relative to DIR' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from create" -l framed -d 'Read records from FILE (\'-\' for standard input), each preceded by its length as a little-endian u64 (what `gather --framing len` writes)' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from create" -s j -l writers -d 'Writer threads, each bound to its own chunk (1 to 4)' -r
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from create" -l commit-every -d 'Commit after every N operations (for tests)' -r
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from create" -l from -d 'Copy the files of this barecat archive (in --order, or the order of -T LIST)' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from create" -l order -d 'The order of the files of --from' -r -f -a "path\t'The i-th file by path'
address\t'The i-th file by (shard, offset)'"
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from create" -l compress -d 'How each record is stored' -r -f -a "none\t''
zstd\t''
flate\t''"
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from create" -l chunk-size -d 'Records per chunk' -r
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from create" -l chunk-bytes -d 'Bytes per chunk at most (a larger record gets a chunk of its own)' -r
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from create" -l dtype -d 'The element type of the records (bytes, u8, i16, f32, ...)' -r
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from create" -l print-commits -d 'Print `committed K` on standard output after each commit (for tests)'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from create" -s f -l force -d 'Replace an existing dataset'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from create" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from create" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from append" -s T -l files-from -d 'Read the list of inputs from LIST, one per line (\'-\' for standard input); with --from, paths inside the archive' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from append" -s C -l directory -d 'Read inputs relative to DIR' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from append" -l framed -d 'Read records from FILE (\'-\' for standard input), each preceded by its length as a little-endian u64 (what `gather --framing len` writes)' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from append" -s j -l writers -d 'Writer threads, each bound to its own chunk (1 to 4)' -r
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from append" -l commit-every -d 'Commit after every N operations (for tests)' -r
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from append" -l print-commits -d 'Print `committed K` on standard output after each commit (for tests)'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from append" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from append" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from modify" -l commit-every -d 'Commit after every N operations (for tests)' -r
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from modify" -l print-commits -d 'Print `committed K` on standard output after each commit (for tests)'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from modify" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from delete" -l indices -d 'Read more indices from FILE (decimal integers separated by white space; \'-\' for standard input)' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from delete" -l commit-every -d 'Commit after every N operations (for tests)' -r
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from delete" -l print-commits -d 'Print `committed K` on standard output after each commit (for tests)'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from delete" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from delete" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from get" -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from get" -l no-check -d 'Do not check the record against its stored CRC32C'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from get" -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from get" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from gather" -l indices -d 'Read more indices from FILE (decimal integers separated by white space; \'-\' for standard input)' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from gather" -s o -l output -d 'Write one file per requested position into OUTDIR, named by the position zero-padded to a common width (name order is request order)' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from gather" -l framing -d 'How records are framed on standard output' -r -f -a "raw\t'The records back to back'
len\t'Each record preceded by its length, a little-endian u64'"
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from gather" -s j -l workers -d 'Reader threads [default: the number of cores]' -r
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from gather" -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from gather" -l crc -d 'Print `position index length crc32c` for each record instead of its bytes'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from gather" -l digest -d 'Print one line instead of the records: their number, total length and the CRC32C of all their bytes in request order (every byte is read)'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from gather" -l no-check -d 'Do not check records against their stored CRC32C'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from gather" -s f -l force -d 'Replace files that exist in OUTDIR'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from gather" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from gather" -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from gather" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from info" -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from info" -l json -d 'Print one JSON document'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from info" -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from info" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from rebalance" -l json -d 'Print the report as one JSON document'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from rebalance" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from rebalance" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from verify" -l json -d 'Print the report as one JSON document'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from verify" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from verify" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from build" -l order -d 'Record i is the i-th file in this order' -r -f -a "path\t'The i-th file by path'
address\t'The i-th file by (shard, offset)'"
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from build" -s T -l files-from -d 'Record i is the i-th path of LIST (one per line, \'-\' for standard input)' -r -F
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from build" -l restamp -d 'Check every record against the index and store the index\'s current stamp (after a write that changed no file, opening is cheap again)'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from build" -l remove -d 'Remove the archive\'s record table'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from build" -l json -d 'Print the report as one JSON document'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from build" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from build" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from to-archive" -l prefix -d 'Put PREFIX before every file name (e.g. "train/")' -r
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from to-archive" -s f -l force -d 'Replace an existing archive'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from to-archive" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from to-archive" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from help" -f -a "create" -d 'Create a dataset: record i is the i-th input'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from help" -f -a "append" -d 'Append records to a dataset'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from help" -f -a "modify" -d 'Replace record I with the content of FILE'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from help" -f -a "delete" -d 'Delete records (the last record takes each deleted index)'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from help" -f -a "get" -d 'Write the bytes of record I to standard output'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from help" -f -a "gather" -d 'Write records in request order to standard output or to files'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from help" -f -a "info" -d 'Length, chunks, bytes, utilization, dtype, compression'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from help" -f -a "rebalance" -d 'Rewrite the live records into new chunks, giving back garbage'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from help" -f -a "verify" -d 'Check every entry, chunk and checksum'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from help" -f -a "build" -d 'Write the record table of a barecat archive (ARCHIVE-records)'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from help" -f -a "to-archive" -d 'Copy a dataset into a new barecat archive (files named by record index)'
complete -c barecat -n "__fish_barecat_using_subcommand records; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c barecat -n "__fish_barecat_using_subcommand sidecar" -l level -d 'zstd compression level (1 to 22)' -r
complete -c barecat -n "__fish_barecat_using_subcommand sidecar" -l check -d 'Check the sidecar against the index instead of writing it'
complete -c barecat -n "__fish_barecat_using_subcommand sidecar" -l remove -d 'Remove the sidecar'
complete -c barecat -n "__fish_barecat_using_subcommand sidecar" -l json -d 'Print one JSON document'
complete -c barecat -n "__fish_barecat_using_subcommand sidecar" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat -n "__fish_barecat_using_subcommand sidecar" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand sidecar" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand completion-script" -s h -l help -d 'Print help'
complete -c barecat -n "__fish_barecat_using_subcommand completion-script" -s V -l version -d 'Print version'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "create" -d 'Create an archive from files and directories, or from a list of paths on stdin'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "add" -d 'Add files and directories to an existing archive (Python barecat\'s `add`)'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "from-tar" -d 'Convert a tar archive (or a tar stream on stdin) into a barecat archive'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "from-zip" -d 'Convert a zip file into a barecat archive'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "from-archive" -d 'Convert an archive in any supported format into a barecat archive'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "convert" -d 'Convert between a barecat archive and a tar or zip file'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "extract" -d 'Extract files and directories from an archive into a directory'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "to-zip" -d 'Write the contents of an archive as a zip file'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "to-tar" -d 'Write the contents of an archive as a tar file'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "cat" -d 'Write the content of stored files to standard output'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "mount" -d 'Mount an archive as a file system (FUSE)'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "ls" -d 'List files and directories in an archive'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "du" -d 'Show the total size of directories'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "list" -d 'List archive contents as Python barecat\'s `list` does'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "find" -d 'Search for files and directories in an archive, like find(1)'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "tree" -d 'Display the directory tree of an archive'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "shell" -d 'Interactive shell over an archive'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "ncdu" -d 'Browse the disk usage of an archive, like ncdu'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "browse" -d 'Browse an archive in three columns, like ranger'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "to-ncdu-json" -d 'Export the directory tree for ncdu'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "index-to-csv" -d 'Dump the file rows of an index as CSV'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "verify" -d 'Check an archive: checksums, index consistency, shards'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "defrag" -d 'Compact the shards of an archive'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "merge" -d 'Merge archives into one'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "merge-symlink" -d 'Merge archives into one whose shards are links to theirs'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "subset" -d 'Copy the files of an archive that a pattern or rules select into a new archive'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "upgrade" -d 'Upgrade an archive\'s index to schema 0.3, in place'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "repair" -d 'Rebuild directory statistics and remove what an interrupted writer left behind'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "reshard" -d 'Repack an archive to a new shard size limit'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "rsync" -d 'Sync files between local paths and archives, like rsync'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "rm" -d 'Remove files and directories from an archive'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "mv" -d 'Move or rename files and directories inside an archive'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "chmod" -d 'Change the permission bits stored for files and directories'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "touch" -d 'Set the modification time of files and directories (or create empty files)'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "records" -d 'Integer-indexed record datasets, and record tables over barecat archives'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "sidecar" -d 'Build, check or remove the B-tree sidecar of an archive'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "completion-script" -d 'Print the shell completion script of barecat (or of one barecat-<command>)'
complete -c barecat -n "__fish_barecat_using_subcommand help; and not __fish_seen_subcommand_from create add from-tar from-zip from-archive convert extract to-zip to-tar cat mount ls du list find tree shell ncdu browse to-ncdu-json index-to-csv verify defrag merge merge-symlink subset upgrade repair reshard rsync rm mv chmod touch records sidecar completion-script help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c barecat -n "__fish_barecat_using_subcommand help; and __fish_seen_subcommand_from records" -f -a "create" -d 'Create a dataset: record i is the i-th input'
complete -c barecat -n "__fish_barecat_using_subcommand help; and __fish_seen_subcommand_from records" -f -a "append" -d 'Append records to a dataset'
complete -c barecat -n "__fish_barecat_using_subcommand help; and __fish_seen_subcommand_from records" -f -a "modify" -d 'Replace record I with the content of FILE'
complete -c barecat -n "__fish_barecat_using_subcommand help; and __fish_seen_subcommand_from records" -f -a "delete" -d 'Delete records (the last record takes each deleted index)'
complete -c barecat -n "__fish_barecat_using_subcommand help; and __fish_seen_subcommand_from records" -f -a "get" -d 'Write the bytes of record I to standard output'
complete -c barecat -n "__fish_barecat_using_subcommand help; and __fish_seen_subcommand_from records" -f -a "gather" -d 'Write records in request order to standard output or to files'
complete -c barecat -n "__fish_barecat_using_subcommand help; and __fish_seen_subcommand_from records" -f -a "info" -d 'Length, chunks, bytes, utilization, dtype, compression'
complete -c barecat -n "__fish_barecat_using_subcommand help; and __fish_seen_subcommand_from records" -f -a "rebalance" -d 'Rewrite the live records into new chunks, giving back garbage'
complete -c barecat -n "__fish_barecat_using_subcommand help; and __fish_seen_subcommand_from records" -f -a "verify" -d 'Check every entry, chunk and checksum'
complete -c barecat -n "__fish_barecat_using_subcommand help; and __fish_seen_subcommand_from records" -f -a "build" -d 'Write the record table of a barecat archive (ARCHIVE-records)'
complete -c barecat -n "__fish_barecat_using_subcommand help; and __fish_seen_subcommand_from records" -f -a "to-archive" -d 'Copy a dataset into a new barecat archive (files named by record index)'
