"""The torch-free consumer of the ONNX package: verified package (`package`), ONNX Runtime
sessions (`session`), text to text (`translator`).
`pip install "nmt[runtime]"` installs what it needs; nothing here imports torch."""
