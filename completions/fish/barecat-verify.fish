complete -c barecat-verify -s j -l workers -d 'Worker threads [default: the number of cores]' -r
complete -c barecat-verify -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat-verify -l quick -d 'Check the index and the shard lengths, and only the checksum of the last file'
complete -c barecat-verify -l json -d 'Print one JSON document instead of text'
complete -c barecat-verify -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat-verify -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat-verify -s h -l help -d 'Print help'
complete -c barecat-verify -s V -l version -d 'Print version'
