"""`nmt adapt`: a trained model fine-tuned on a user's own file in one command (docs/training.md, Adapting a
model to your own files). `plan` turns the request into a params file laid over the parent's recipe;
`steps` runs the fine-tune pipeline's stages on it, in order, with their gates; `command` is its CLI."""
