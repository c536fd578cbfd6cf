complete -c barecat-du -s d -l max-depth -d 'Only entries at most N levels below PATH' -r
complete -c barecat-du -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat-du -s a -l all -d 'List files too, not only directories'
complete -c barecat-du -s s -l summarize -d 'Only the total of PATH'
complete -c barecat-du -s H -l human-readable -d 'Sizes like 1.5K, 20M, 3.1G (-h works too)'
complete -c barecat-du -l json -d 'One JSON object per line: type, path, size (and files, for directories)'
complete -c barecat-du -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat-du -l help -d 'Print help'
complete -c barecat-du -s V -l version -d 'Print version'
