# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_barecat_records_global_optspecs
    string join \n h/help V/version
end

function __fish_barecat_records_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_barecat_records_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_barecat_records_using_subcommand
    set -l cmd (__fish_barecat_records_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c barecat-records -n "__fish_barecat_records_needs_command" -s h -l help -d 'Print help'
complete -c barecat-records -n "__fish_barecat_records_needs_command" -s V -l version -d 'Print version'
complete -c barecat-records -n "__fish_barecat_records_needs_command" -f -a "create" -d 'Create a dataset: record i is the i-th input'
complete -c barecat-records -n "__fish_barecat_records_needs_command" -f -a "append" -d 'Append records to a dataset'
complete -c barecat-records -n "__fish_barecat_records_needs_command" -f -a "modify" -d 'Replace record I with the content of FILE'
complete -c barecat-records -n "__fish_barecat_records_needs_command" -f -a "delete" -d 'Delete records (the last record takes each deleted index)'
complete -c barecat-records -n "__fish_barecat_records_needs_command" -f -a "get" -d 'Write the bytes of record I to standard output'
complete -c barecat-records -n "__fish_barecat_records_needs_command" -f -a "gather" -d 'Write records in request order to standard output or to files'
complete -c barecat-records -n "__fish_barecat_records_needs_command" -f -a "info" -d 'Length, chunks, bytes, utilization, dtype, compression'
complete -c barecat-records -n "__fish_barecat_records_needs_command" -f -a "rebalance" -d 'Rewrite the live records into new chunks, giving back garbage'
complete -c barecat-records -n "__fish_barecat_records_needs_command" -f -a "verify" -d 'Check every entry, chunk and checksum'
complete -c barecat-records -n "__fish_barecat_records_needs_command" -f -a "build" -d 'Write the record table of a barecat archive (ARCHIVE-records)'
complete -c barecat-records -n "__fish_barecat_records_needs_command" -f -a "to-archive" -d 'Copy a dataset into a new barecat archive (files named by record index)'
complete -c barecat-records -n "__fish_barecat_records_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand create" -s T -l files-from -d 'Read the list of inputs from LIST, one per line (\'-\' for standard input); with --from, paths inside the archive' -r -F
complete -c barecat-records -n "__fish_barecat_records_using_subcommand create" -s C -l directory -d 'Read inputs relative to DIR' -r -F
complete -c barecat-records -n "__fish_barecat_records_using_subcommand create" -l framed -d 'Read records from FILE (\'-\' for standard input), each preceded by its length as a little-endian u64 (what `gather --framing len` writes)' -r -F
complete -c barecat-records -n "__fish_barecat_records_using_subcommand create" -s j -l writers -d 'Writer threads, each bound to its own chunk (1 to 4)' -r
complete -c barecat-records -n "__fish_barecat_records_using_subcommand create" -l commit-every -d 'Commit after every N operations (for tests)' -r
complete -c barecat-records -n "__fish_barecat_records_using_subcommand create" -l from -d 'Copy the files of this barecat archive (in --order, or the order of -T LIST)' -r -F
complete -c barecat-records -n "__fish_barecat_records_using_subcommand create" -l order -d 'The order of the files of --from' -r -f -a "path\t'The i-th file by path'
address\t'The i-th file by (shard, offset)'"
complete -c barecat-records -n "__fish_barecat_records_using_subcommand create" -l compress -d 'How each record is stored' -r -f -a "none\t''
zstd\t''
flate\t''"
complete -c barecat-records -n "__fish_barecat_records_using_subcommand create" -l chunk-size -d 'Records per chunk' -r
complete -c barecat-records -n "__fish_barecat_records_using_subcommand create" -l chunk-bytes -d 'Bytes per chunk at most (a larger record gets a chunk of its own)' -r
complete -c barecat-records -n "__fish_barecat_records_using_subcommand create" -l dtype -d 'The element type of the records (bytes, u8, i16, f32, ...)' -r
complete -c barecat-records -n "__fish_barecat_records_using_subcommand create" -l print-commits -d 'Print `committed K` on standard output after each commit (for tests)'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand create" -s f -l force -d 'Replace an existing dataset'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand create" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand create" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand append" -s T -l files-from -d 'Read the list of inputs from LIST, one per line (\'-\' for standard input); with --from, paths inside the archive' -r -F
complete -c barecat-records -n "__fish_barecat_records_using_subcommand append" -s C -l directory -d 'Read inputs relative to DIR' -r -F
complete -c barecat-records -n "__fish_barecat_records_using_subcommand append" -l framed -d 'Read records from FILE (\'-\' for standard input), each preceded by its length as a little-endian u64 (what `gather --framing len` writes)' -r -F
complete -c barecat-records -n "__fish_barecat_records_using_subcommand append" -s j -l writers -d 'Writer threads, each bound to its own chunk (1 to 4)' -r
complete -c barecat-records -n "__fish_barecat_records_using_subcommand append" -l commit-every -d 'Commit after every N operations (for tests)' -r
complete -c barecat-records -n "__fish_barecat_records_using_subcommand append" -l print-commits -d 'Print `committed K` on standard output after each commit (for tests)'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand append" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand append" -s h -l help -d 'Print help'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand modify" -l commit-every -d 'Commit after every N operations (for tests)' -r
complete -c barecat-records -n "__fish_barecat_records_using_subcommand modify" -l print-commits -d 'Print `committed K` on standard output after each commit (for tests)'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand modify" -s h -l help -d 'Print help'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand delete" -l indices -d 'Read more indices from FILE (decimal integers separated by white space; \'-\' for standard input)' -r -F
complete -c barecat-records -n "__fish_barecat_records_using_subcommand delete" -l commit-every -d 'Commit after every N operations (for tests)' -r
complete -c barecat-records -n "__fish_barecat_records_using_subcommand delete" -l print-commits -d 'Print `committed K` on standard output after each commit (for tests)'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand delete" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand delete" -s h -l help -d 'Print help'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand get" -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat-records -n "__fish_barecat_records_using_subcommand get" -l no-check -d 'Do not check the record against its stored CRC32C'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand get" -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand get" -s h -l help -d 'Print help'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand gather" -l indices -d 'Read more indices from FILE (decimal integers separated by white space; \'-\' for standard input)' -r -F
complete -c barecat-records -n "__fish_barecat_records_using_subcommand gather" -s o -l output -d 'Write one file per requested position into OUTDIR, named by the position zero-padded to a common width (name order is request order)' -r -F
complete -c barecat-records -n "__fish_barecat_records_using_subcommand gather" -l framing -d 'How records are framed on standard output' -r -f -a "raw\t'The records back to back'
len\t'Each record preceded by its length, a little-endian u64'"
complete -c barecat-records -n "__fish_barecat_records_using_subcommand gather" -s j -l workers -d 'Reader threads [default: the number of cores]' -r
complete -c barecat-records -n "__fish_barecat_records_using_subcommand gather" -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat-records -n "__fish_barecat_records_using_subcommand gather" -l crc -d 'Print `position index length crc32c` for each record instead of its bytes'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand gather" -l digest -d 'Print one line instead of the records: their number, total length and the CRC32C of all their bytes in request order (every byte is read)'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand gather" -l no-check -d 'Do not check records against their stored CRC32C'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand gather" -s f -l force -d 'Replace files that exist in OUTDIR'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand gather" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand gather" -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand gather" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand info" -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat-records -n "__fish_barecat_records_using_subcommand info" -l json -d 'Print one JSON document'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand info" -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand info" -s h -l help -d 'Print help'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand rebalance" -l json -d 'Print the report as one JSON document'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand rebalance" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand rebalance" -s h -l help -d 'Print help'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand verify" -l json -d 'Print the report as one JSON document'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand verify" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand verify" -s h -l help -d 'Print help'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand build" -l order -d 'Record i is the i-th file in this order' -r -f -a "path\t'The i-th file by path'
address\t'The i-th file by (shard, offset)'"
complete -c barecat-records -n "__fish_barecat_records_using_subcommand build" -s T -l files-from -d 'Record i is the i-th path of LIST (one per line, \'-\' for standard input)' -r -F
complete -c barecat-records -n "__fish_barecat_records_using_subcommand build" -l restamp -d 'Check every record against the index and store the index\'s current stamp (after a write that changed no file, opening is cheap again)'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand build" -l remove -d 'Remove the archive\'s record table'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand build" -l json -d 'Print the report as one JSON document'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand build" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand build" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand to-archive" -l prefix -d 'Put PREFIX before every file name (e.g. "train/")' -r
complete -c barecat-records -n "__fish_barecat_records_using_subcommand to-archive" -s f -l force -d 'Replace an existing archive'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand to-archive" -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand to-archive" -s h -l help -d 'Print help'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand help; and not __fish_seen_subcommand_from create append modify delete get gather info rebalance verify build to-archive help" -f -a "create" -d 'Create a dataset: record i is the i-th input'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand help; and not __fish_seen_subcommand_from create append modify delete get gather info rebalance verify build to-archive help" -f -a "append" -d 'Append records to a dataset'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand help; and not __fish_seen_subcommand_from create append modify delete get gather info rebalance verify build to-archive help" -f -a "modify" -d 'Replace record I with the content of FILE'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand help; and not __fish_seen_subcommand_from create append modify delete get gather info rebalance verify build to-archive help" -f -a "delete" -d 'Delete records (the last record takes each deleted index)'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand help; and not __fish_seen_subcommand_from create append modify delete get gather info rebalance verify build to-archive help" -f -a "get" -d 'Write the bytes of record I to standard output'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand help; and not __fish_seen_subcommand_from create append modify delete get gather info rebalance verify build to-archive help" -f -a "gather" -d 'Write records in request order to standard output or to files'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand help; and not __fish_seen_subcommand_from create append modify delete get gather info rebalance verify build to-archive help" -f -a "info" -d 'Length, chunks, bytes, utilization, dtype, compression'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand help; and not __fish_seen_subcommand_from create append modify delete get gather info rebalance verify build to-archive help" -f -a "rebalance" -d 'Rewrite the live records into new chunks, giving back garbage'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand help; and not __fish_seen_subcommand_from create append modify delete get gather info rebalance verify build to-archive help" -f -a "verify" -d 'Check every entry, chunk and checksum'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand help; and not __fish_seen_subcommand_from create append modify delete get gather info rebalance verify build to-archive help" -f -a "build" -d 'Write the record table of a barecat archive (ARCHIVE-records)'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand help; and not __fish_seen_subcommand_from create append modify delete get gather info rebalance verify build to-archive help" -f -a "to-archive" -d 'Copy a dataset into a new barecat archive (files named by record index)'
complete -c barecat-records -n "__fish_barecat_records_using_subcommand help; and not __fish_seen_subcommand_from create append modify delete get gather info rebalance verify build to-archive help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
