complete -c barecat-sidecar -l level -d 'zstd compression level (1 to 22)' -r
complete -c barecat-sidecar -l check -d 'Check the sidecar against the index instead of writing it'
complete -c barecat-sidecar -l remove -d 'Remove the sidecar'
complete -c barecat-sidecar -l json -d 'Print one JSON document'
complete -c barecat-sidecar -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat-sidecar -s h -l help -d 'Print help'
complete -c barecat-sidecar -s V -l version -d 'Print version'
