from watcher.cli import console_script

console_script()
