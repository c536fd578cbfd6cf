complete -c barecat-merge-symlink -s o -l output -d 'The output archive' -r -F
complete -c barecat-merge-symlink -l prefix -d 'Put every input\'s files below the directory PATH' -r
complete -c barecat-merge-symlink -s f -l force -l overwrite -d 'Replace the output if it exists (its old links are removed)'
complete -c barecat-merge-symlink -l ignore-duplicates -d 'Keep the first of several files with the same path instead of failing'
complete -c barecat-merge-symlink -l as-subdirs -d 'Put each input\'s files below a directory named after the input (see barecat-merge)'
complete -c barecat-merge-symlink -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat-merge-symlink -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat-merge-symlink -s h -l help -d 'Print help'
complete -c barecat-merge-symlink -s V -l version -d 'Print version'
