"""One module per CLI command that does real work; imported only when that command runs."""
