"""Stage 7, export: the ONNX graphs (`graphs`), the package and its card (`package`), the
torch-vs-ONNX Runtime checks (`checks`); the stage itself is `stage`."""
