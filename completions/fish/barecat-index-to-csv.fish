complete -c barecat-index-to-csv -s h -l help -d 'Print help'
complete -c barecat-index-to-csv -s V -l version -d 'Print version'
