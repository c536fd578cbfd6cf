complete -c barecat-to-ncdu-json -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat-to-ncdu-json -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat-to-ncdu-json -s h -l help -d 'Print help'
complete -c barecat-to-ncdu-json -s V -l version -d 'Print version'
