complete -c barecat-repair -l no-trim -d 'Do not cut trailing bytes that no file refers to'
complete -c barecat-repair -s q -l quiet -d 'Print nothing on success'
complete -c barecat-repair -s h -l help -d 'Print help'
complete -c barecat-repair -s V -l version -d 'Print version'
