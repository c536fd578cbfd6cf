complete -c barecat-ls -l index-mode -d 'How the index of a remote archive is read: auto (downloaded whole up to BARECAT_REMOTE_DOWNLOAD_LIMIT, 32M by default, else by ranged requests), range (ranged requests of its pages, with the B-tree sidecar) or download' -r
complete -c barecat-ls -s l -l long -d 'Long format: mode, links, owner, group, size, modification time, name'
complete -c barecat-ls -s R -l recursive -d 'List every file below the directories, with full paths'
complete -c barecat-ls -l json -d 'One JSON object per line, with every column (shard, offset, counters)'
complete -c barecat-ls -l jsonl -d 'One JSON object per line, as Python barecat writes them'
complete -c barecat-ls -l stats -d 'Print the requests and bytes of remote reads (sidecar, index, shards) on stderr at the end'
complete -c barecat-ls -s h -l help -d 'Print help'
complete -c barecat-ls -s V -l version -d 'Print version'
