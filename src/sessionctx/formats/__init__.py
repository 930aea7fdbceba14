"""One package per agent format whose reading needs more than the shared importers."""
