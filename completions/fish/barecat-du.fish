complete -c barecat-du -s d -l max-depth -d 'Only entries at most N levels below PATH' -r
complete -c barecat-du -s a -l all -d 'List files too, not only directories'
complete -c barecat-du -s s -l summarize -d 'Only the total of PATH'
complete -c barecat-du -s H -l human-readable -d 'Sizes like 1.5K, 20M, 3.1G (-h works too)'
complete -c barecat-du -l json -d 'One JSON object per line: type, path, size (and files, for directories)'
complete -c barecat-du -l help -d 'Print help'
complete -c barecat-du -s V -l version -d 'Print version'
