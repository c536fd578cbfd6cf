complete -c barecat-cat -s T -l files-from -d 'Read more paths from FILE (\'-\' for stdin), one per line' -r -F
complete -c barecat-cat -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat-cat -s 0 -l null -d 'Paths in the list are terminated by NUL characters (find -print0)'
complete -c barecat-cat -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat-cat -s h -l help -d 'Print help'
complete -c barecat-cat -s V -l version -d 'Print version'
