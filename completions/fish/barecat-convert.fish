complete -c barecat-convert -s s -l shard-size-limit -d 'Start a new shard before one would exceed SIZE (like 10G, 500M, 1.5G, 4096); stored in the archive. Without it an existing archive keeps its limit, and a new one is unlimited' -r
complete -c barecat-convert -l root-dir -d 'Put every member under the directory NAME/ (barecat to tar or zip)' -r
complete -c barecat-convert -l name-encoding -d 'Decode member names that are not valid UTF-8 from ENC (cp866, koi8-r, cp1251, shift_jis, cp932, euc-jp, cp437, or another WHATWG label); zip names without the UTF-8 flag are CP437 unless this says otherwise' -r
complete -c barecat-convert -s f -l force -d 'Replace OUT if it exists'
complete -c barecat-convert -l stdin -d 'Read the tar from standard input; IN is its format'
complete -c barecat-convert -l stdout -d 'Write a tar to standard output; OUT is its format'
complete -c barecat-convert -l wrap -d 'Index an uncompressed tar or stored zip in place instead of copying it (tar or zip to barecat)'
complete -c barecat-convert -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat-convert -l no-sidecar -d 'Do not write the B-tree sidecar ARCHIVE-btreemeta at the end (an old one is removed all the same)'
complete -c barecat-convert -s h -l help -d 'Print help'
complete -c barecat-convert -s V -l version -d 'Print version'
