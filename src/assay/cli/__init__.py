"""The `assay` command line. Commands only parse arguments, call the library and print."""
