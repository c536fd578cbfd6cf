complete -c barecat-touch -s d -l date -d 'Use DATE instead of now: @SECONDS[.FRACTION] since the epoch, or YYYY-MM-DD[ HH:MM[:SS[.FRACTION]]] in local time (\'T\' may separate them)' -r
complete -c barecat-touch -s r -l reference -d 'Use the modification time of the local file FILE instead of now' -r -F
complete -c barecat-touch -s c -l no-create -d 'Do not create files for paths that do not exist'
complete -c barecat-touch -s R -l recursive -d 'Also change everything below the directories named'
complete -c barecat-touch -s n -l dry-run -d 'Print what would change, and change nothing'
complete -c barecat-touch -s v -l verbose -d 'Print each change'
complete -c barecat-touch -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat-touch -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat-touch -s h -l help -d 'Print help'
complete -c barecat-touch -s V -l version -d 'Print version'
