complete -c barecat-mount -s o -l options -d 'Mount options, comma-separated: FUSE\'s (allow_other, allow_root, ro, default_permissions, auto_unmount, noexec, …) and Python barecat\'s (rw, fg, mmap, overwrite, append_only, defrag, shard_size_limit=SIZE)' -r
complete -c barecat-mount -l uid -d 'Show every entry as owned by this user id' -r
complete -c barecat-mount -l gid -d 'Show every entry as owned by this group id' -r
complete -c barecat-mount -l umask -d 'Clear these permission bits (octal) from every entry\'s mode' -r
complete -c barecat-mount -l log -d 'Append the daemon\'s log lines (CRC mismatches, I/O errors) to FILE' -r -F
complete -c barecat-mount -l shard-size-limit -d 'With --writable: the archive\'s shard size limit from now on (e.g. 10G)' -r
complete -c barecat-mount -s u -l unmount -d 'Unmount the archive mounted at the mount point given'
complete -c barecat-mount -s z -l lazy -d 'With -u: detach the mount now even if it is busy (the daemon ends when the last file on it is closed)'
complete -c barecat-mount -s f -l foreground -d 'Stay in the foreground (default: detach once the mount is ready)'
complete -c barecat-mount -s w -l writable -d 'Accept writes: new files and directories, removals, renames'
complete -c barecat-mount -l overwrite -d 'With --writable: start a new, empty archive in place of the one there'
complete -c barecat-mount -l append-only -d 'With --writable: only additions (removals, renames and changes to the bytes of existing files fail with EPERM)'
complete -c barecat-mount -l enable-defrag -d 'With --writable: defragment (quickly) once 100 MiB were removed or replaced and holes make up a tenth of the shards'
complete -c barecat-mount -l mmap -d 'No effect (reads always go through the kernel\'s page cache); accepted as barecat-mount 0.1.3 accepts it'
complete -c barecat-mount -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat-mount -s h -l help -d 'Print help'
complete -c barecat-mount -s V -l version -d 'Print version'
