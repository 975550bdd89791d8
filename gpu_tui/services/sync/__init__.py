"""`gpu-tui sync` and the dashboard's sync: rsync over gpu-tui's own SSH login, or SFTP."""
