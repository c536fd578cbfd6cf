complete -c barecat-find -l name -d 'Last path component matches this shell pattern' -r
complete -c barecat-find -l path -l wholename -d 'Whole path matches this pattern (SQLite GLOB: \'*\' crosses \'/\')' -r
complete -c barecat-find -l type -d 'f: files only, d: directories only' -r -f -a "f\t''
d\t''"
complete -c barecat-find -l size -d 'Size greater (+N), less (-N) or equal (N), with K, M, G, T suffixes' -r
complete -c barecat-find -l maxdepth -d 'At most N levels below PATH' -r
complete -c barecat-find -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat-find -l print0 -d 'End each path with a NUL byte instead of a newline'
complete -c barecat-find -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat-find -s h -l help -d 'Print help'
complete -c barecat-find -s V -l version -d 'Print version'
