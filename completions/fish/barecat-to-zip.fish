complete -c barecat-to-zip -l deflate -d 'Compress entries with deflate, at LEVEL 1-9 [default level: 6]; entries that do not shrink are stored' -r
complete -c barecat-to-zip -l root-dir -d 'Put every entry under the directory NAME/ in the zip' -r
complete -c barecat-to-zip -s j -l workers -d 'Worker threads [default: the number of cores]' -r
complete -c barecat-to-zip -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat-to-zip -s f -l force -d 'Replace OUTPUT if it exists'
complete -c barecat-to-zip -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat-to-zip -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat-to-zip -s h -l help -d 'Print help'
complete -c barecat-to-zip -s V -l version -d 'Print version'
