"""Stage 5b, fine-tune: a trained model continued on a corpus of the user's own (docs/training.md).

`parent` writes the parent model's vocabularies for the new corpus's binarize stage, `replay` mixes
the parent's training pairs into each epoch, `loop` trains from the parent's weights on its own
schedule and budget, `stage` writes the gated model file, `compare` holds it against its parent.
"""
