"""Files, torch-free: atomic outputs (`atomic`), strict UTF-8 line files (`lines`), SHA-256 (`digest`)."""
