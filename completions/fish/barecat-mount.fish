complete -c barecat-mount -s o -d 'FUSE mount options, comma-separated: allow_other, allow_root, ro, default_permissions, auto_unmount, noexec, …' -r
complete -c barecat-mount -l uid -d 'Show every entry as owned by this user id' -r
complete -c barecat-mount -l gid -d 'Show every entry as owned by this group id' -r
complete -c barecat-mount -l umask -d 'Clear these permission bits (octal) from every entry\'s mode' -r
complete -c barecat-mount -l log -d 'Append the daemon\'s log lines (CRC mismatches, I/O errors) to FILE' -r -F
complete -c barecat-mount -s u -l unmount -d 'Unmount the archive mounted at the mount point given'
complete -c barecat-mount -s z -l lazy -d 'With -u: detach the mount now even if it is busy (the daemon ends when the last file on it is closed)'
complete -c barecat-mount -s f -l foreground -d 'Stay in the foreground (default: detach once the mount is ready)'
complete -c barecat-mount -s w -l writable -d 'Accept writes: new files and directories, removals, renames'
complete -c barecat-mount -s q -l quiet -d 'Print nothing but errors (no progress bar, no summary)'
complete -c barecat-mount -s h -l help -d 'Print help'
complete -c barecat-mount -s V -l version -d 'Print version'
