"""The Transformer of Vaswani et al. 2017: its layers (`layers`), the encoder-decoder with a
key/value cache for decoding (`transformer`), and the model file format (`checkpoint`)."""
