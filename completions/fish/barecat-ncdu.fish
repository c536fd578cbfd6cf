complete -c barecat-ncdu -l print-screen -d 'Print the first screen (80x24) as text and exit, without a terminal (for benchmarks and scripts)'
complete -c barecat-ncdu -s h -l help -d 'Print help'
complete -c barecat-ncdu -s V -l version -d 'Print version'
