complete -c barecat-cat -s T -l files-from -d 'Read more paths from FILE (\'-\' for stdin), one per line' -r -F
complete -c barecat-cat -s 0 -l null -d 'Paths in the list are terminated by NUL characters (find -print0)'
complete -c barecat-cat -s h -l help -d 'Print help'
complete -c barecat-cat -s V -l version -d 'Print version'
