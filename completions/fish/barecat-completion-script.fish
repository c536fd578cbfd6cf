complete -c barecat-completion-script -s h -l help -d 'Print help'
complete -c barecat-completion-script -s V -l version -d 'Print version'
