"""The long-running process: watcher, single writer, scheduler and socket, wired together."""
