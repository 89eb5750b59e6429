"""Text and ids, torch-free: spaCy tokenization and the tokens file format (`tokenizer`),
vocabularies with fixed special ids (`vocab`), BPE subwords (`subword`), the vocabularies of a
model and tokens <-> ids (`vocabularies`), and the learned detokenizer (`detokenizer`)."""
