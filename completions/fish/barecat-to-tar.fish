complete -c barecat-to-tar -l level -d 'Compression level [default: the format\'s own: gzip 6, zstd 3, xz 6, bzip2 9]' -r
complete -c barecat-to-tar -l root-dir -d 'Put every member under the directory NAME/ in the tar' -r
complete -c barecat-to-tar -s j -l workers -d 'Worker threads [default: the number of cores]' -r
complete -c barecat-to-tar -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat-to-tar -s z -l gzip -d 'Compress with gzip'
complete -c barecat-to-tar -l zstd -d 'Compress with zstd'
complete -c barecat-to-tar -s J -l xz -d 'Compress with xz'
complete -c barecat-to-tar -l bzip2 -d 'Compress with bzip2'
complete -c barecat-to-tar -s f -l force -d 'Replace OUTPUT if it exists'
complete -c barecat-to-tar -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat-to-tar -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat-to-tar -s h -l help -d 'Print help'
complete -c barecat-to-tar -s V -l version -d 'Print version'
