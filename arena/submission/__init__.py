"""Bot submission on the web: upload checks and storage (immutable versions with an owner) and
the validation of each uploaded version by sandboxed matches against sample bots."""
