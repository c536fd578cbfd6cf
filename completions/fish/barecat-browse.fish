complete -c barecat-browse -s h -l help -d 'Print help'
complete -c barecat-browse -s V -l version -d 'Print version'
