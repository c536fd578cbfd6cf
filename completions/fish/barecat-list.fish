complete -c barecat-list -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat-list -s l -l long -d 'Long listing with sizes'
complete -c barecat-list -s R -l recursive -d 'List recursively: every file below each directory'
complete -c barecat-list -l jsonl -d 'Output as JSON lines (one JSON object per line)'
complete -c barecat-list -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat-list -s h -l help -d 'Print help'
complete -c barecat-list -s V -l version -d 'Print version'
