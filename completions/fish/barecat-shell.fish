complete -c barecat-shell -s c -l cmd -d 'Run these commands (separated by \';\') and exit' -r
complete -c barecat-shell -s w -l write -d 'Open the archive for writing (put, mput, rm, mv, writing SQL)'
complete -c barecat-shell -s h -l help -d 'Print help'
complete -c barecat-shell -s V -l version -d 'Print version'
