complete -c barecat-cat -s h -l help -d 'Print help'
complete -c barecat-cat -s V -l version -d 'Print version'
