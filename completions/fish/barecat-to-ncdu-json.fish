complete -c barecat-to-ncdu-json -s h -l help -d 'Print help'
complete -c barecat-to-ncdu-json -s V -l version -d 'Print version'
