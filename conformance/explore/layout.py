"""What an exploration keeps in each worker's folder (shards/<worker>/), read by the supervisor and
written by the worker: the files' names, and how many programs a finding keeps."""

STATE = "state.json"  # the worker's counts and findings so far, rewritten after each finding and round
RUNNING = "running.yaml"  # the program being run, as a case: what a worker that died was running
EXAMPLES = 3  # programs a finding keeps as first seen, each with other ingredients than those kept before
