"""Stage 9, publish: the README's and docs' figures rendered from committed results."""
