complete -c barecat-tree -s L -l level -d 'Show at most N levels below PATH' -r
complete -c barecat-tree -s d -l dirs-only -d 'List directories only'
complete -c barecat-tree -s h -l help -d 'Print help'
complete -c barecat-tree -s V -l version -d 'Print version'
