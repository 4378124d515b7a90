# examples/: an out-of-tree vendor plugin and a minimal embedding host.
