complete -c barecat-tree -s L -l level -d 'Show at most N levels below PATH' -r
complete -c barecat-tree -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat-tree -s d -l dirs-only -d 'List directories only'
complete -c barecat-tree -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat-tree -s h -l help -d 'Print help'
complete -c barecat-tree -s V -l version -d 'Print version'
