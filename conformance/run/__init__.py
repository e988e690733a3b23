"""Running one case variant: the runner, the compile counter, the internals probe driver, the
build fingerprint, the item status, and the runner's extension points."""
